/** Text selection rules for "Ask about this": where it counts, its size cap, and the nearest heading above it. */
import {fill} from './labels.mjs';

// Never offer the popover for text in these, even inside the article.
export const EXCLUDED_SELECTOR = 'button, nav, input, textarea, select, [data-textbook-chat], .clean-btn';

const HEADING = /^H[1-6]$/;

/** True when a selection starting/ending in `element` may be asked about. */
export function isAskableElement(element, containerSelector) {
  if (!element || typeof element.closest !== 'function') return false;
  return Boolean(element.closest(containerSelector)) && !element.closest(EXCLUDED_SELECTOR);
}

// Zero-width characters (Docusaurus puts one in every heading's "#" link): invisible, not read.
const INVISIBLE = /[\u200b\u200c\u200d\u2060\ufeff]/g;

/**
 * The text of a selection as the reader sees it, to be sent as it is: callouts, headings, code,
 * JSX blocks alike (no line is dropped for how it starts); only invisible characters and the
 * surrounding blank space go.
 */
export function selectedText(raw) {
  return String(raw ?? '').replace(INVISIBLE, '').trim();
}

/** Null when the selection may be sent; otherwise `{code, message}` for the reader (from `labels`). */
export function selectionProblem(text, maxChars, labels = {}) {
  const trimmed = (text || '').trim();
  if (trimmed.length === 0) return {code: 'empty', message: ''};
  if (trimmed.length > maxChars) {
    const fmt = (n) => n.toLocaleString('en-US');
    return {
      code: 'too_long',
      message: fill(labels.selectionTooLong ?? 'selectionTooLong', {length: fmt(trimmed.length), max: fmt(maxChars)}),
    };
  }
  return null;
}

function isHeadingWithId(node) {
  return node && node.nodeType === 1 && HEADING.test(node.tagName) && Boolean(node.id);
}

/** The last heading with an id inside `node` (document order), or null. */
function lastHeadingIn(node) {
  if (!node || node.nodeType !== 1) return null;
  if (isHeadingWithId(node)) return node;
  const children = node.childNodes || [];
  for (let i = children.length - 1; i >= 0; i -= 1) {
    const found = lastHeadingIn(children[i]);
    if (found) return found;
  }
  return null;
}

/**
 * The id of the nearest heading at or above `node` in document order, staying inside `root`;
 * '' when there is none (the page's h1 has no id in Docusaurus).
 */
export function nearestHeadingId(node, root = null) {
  let current = node;
  while (current && current !== root) {
    if (isHeadingWithId(current)) return current.id;
    for (let sibling = current.previousSibling; sibling; sibling = sibling.previousSibling) {
      const heading = lastHeadingIn(sibling);
      if (heading) return heading.id;
    }
    current = current.parentNode;
  }
  return '';
}

/** Where to put the popover: just below the selection, kept inside the viewport. */
export function popoverPosition(rect, viewport, size = {width: 160, height: 40}) {
  const margin = 8;
  const left = Math.min(Math.max(margin, rect.left + rect.width / 2 - size.width / 2), viewport.width - size.width - margin);
  const below = rect.bottom + margin;
  const top = below + size.height > viewport.height ? Math.max(margin, rect.top - size.height - margin) : below;
  return {left: Math.max(margin, Math.round(left)), top: Math.round(top)};
}

/**
 * A heading's text as the page shows it (Docusaurus's "#" hash link and zero-width spaces left
 * out), for the source label of an "Ask about this" answer; '' without a heading.
 */
export function headingText(heading) {
  if (!heading) return '';
  const parts = [];
  const walk = (node) => {
    for (const child of node.childNodes || []) {
      if (child.nodeType === 3) parts.push(child.textContent || '');
      else if (child.nodeType === 1 && !(child.classList && child.classList.contains('hash-link'))) walk(child);
    }
  };
  walk(heading);
  return parts.join('').replace(/[\u200b\u200c\u200d\ufeff]/g, '').replace(/\s+/g, ' ').trim();
}
