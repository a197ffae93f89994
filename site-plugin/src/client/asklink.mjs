/**
 * Links that open the chat with a question asked: `…/docs/page?ask-textbook=What+is+jitter%3F`.
 * Reading one (the question, and the URL without it) and building one (an answer's Share).
 */

/** The query parameter; named after the widget so it does not clash with a site's own `?ask=`/`?q=`. */
export const ASK_PARAM = 'ask-textbook';

/** The API's cap on a question, in characters (functions/api/validation.py MAX_QUESTION_CHARS). */
export const MAX_QUESTION_CHARS = 2000;

// Crawlers and link previews that run the page's scripts: a link they fetch must not ask the API.
const BOT = /bot\b|bot\/|spider|crawl|slurp|facebookexternalhit|embedly|lighthouse|inspectiontool|whatsapp|prerender|preview/i;

/** True for a crawler's or a link preview's user agent. */
export function isBot(userAgent = '') {
  return BOT.test(String(userAgent));
}

function decode(part) {
  try {
    return decodeURIComponent(part.replace(/\+/g, ' '));
  } catch {
    return null; // malformed %-escape: not ours to read
  }
}

/**
 * What `href` asks: `{question, url}`. `question` is the parameter's text, trimmed, or null when
 * there is none, it is empty or longer than the API takes (such a link asks nothing). `url` is
 * `href` without the parameter, from its path on (the site's router replaces the address with
 * it), everything else as written (other parameters, their order and encoding, the #hash); null
 * when `href` has no parameter.
 */
export function readAskLink(href) {
  const url = new URL(href);
  const query = url.search.replace(/^\?/, '');
  if (!query) return {question: null, url: null};
  let raw = null;
  let found = false;
  const kept = query.split('&').filter((pair) => {
    const [key, ...value] = pair.split('=');
    if (decode(key) !== ASK_PARAM) return true;
    if (!found) raw = decode(value.join('='));
    found = true;
    return false;
  });
  if (!found) return {question: null, url: null};
  const search = kept.filter(Boolean).join('&');
  const rest = `${url.pathname}${search ? `?${search}` : ''}${url.hash}`;
  const question = (raw ?? '').trim();
  // Counted in code points, as the API (Python) counts them.
  const fits = question && Array.from(question).length <= MAX_QUESTION_CHARS;
  return {question: fits ? question : null, url: rest};
}

/**
 * The link that opens `page` (a path from the site's origin, baseUrl included, as
 * `location.pathname` gives it) and asks `question`. The page only: its #hash and other
 * parameters are left out, so the link lands where the question was asked.
 */
export function askLink(origin, page, question) {
  const path = String(page || '/').split(/[?#]/)[0] || '/';
  const base = new URL(path.startsWith('/') ? path : `/${path}`, origin);
  return `${base.origin}${base.pathname}?${new URLSearchParams({[ASK_PARAM]: question.trim()})}`;
}
