/** Which way a block of text runs, for blocks whose items each keep their own (dir="auto"). */

// Scripts written right to left: Hebrew, Arabic (Urdu, Persian), Syriac, Thaana, NKo, Samaritan,
// Mandaic, their presentation forms, and the historic ones beyond the BMP.
const RTL = /[\u0590-\u08FF\uFB1D-\uFDFF\uFE70-\uFEFF\u{10800}-\u{10FFF}\u{1E800}-\u{1EFFF}]/u;
const STRONG = /[\p{L}\p{M}]/u;

/**
 * 'rtl' or 'ltr' by the text's first letter (what dir="auto" reads), or undefined for text with
 * none (digits, symbols: the block takes the panel's). A list or table needs it set: dir="auto"
 * on it would skip its items' text, which carries dir="auto" of its own, and always read 'ltr'.
 */
export function textDirection(text) {
  for (const ch of String(text ?? '')) {
    if (RTL.test(ch)) return 'rtl';
    if (STRONG.test(ch)) return 'ltr';
  }
  return undefined;
}

/**
 * Text set inside a sentence of either direction that keeps its own (a shortcut such as
 * "Ctrl+/" in an Urdu label, which would otherwise read "/+Ctrl"): first-strong isolate marks,
 * what <bdi> does, usable in attributes (title) and plain strings too.
 */
export function isolate(text) {
  return `\u2068${text}\u2069`;
}
