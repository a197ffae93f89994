/**
 * The widget's box searches the book as the reader types (POST /sources with `search: true`:
 * the sections the words typed so far find, no model), and Enter asks. The site's own search
 * hands its query to the chat with a link that asks (`?ask-textbook=`, asklink.mjs).
 */

// Fewer characters than this find nothing worth listing; a pause this long means "show me".
export const SEARCH_MIN_CHARS = 3;
export const SEARCH_AFTER_MS = 300;
export const SEARCH_TOP_K = 5;

/** The words to search for, or '' when the box holds too little (or a question too long to be a search). */
export function searchQuery(text) {
  const words = String(text ?? '').trim().replace(/\s+/g, ' ');
  return words.length >= SEARCH_MIN_CHARS && words.length <= 200 ? words : '';
}

/** POST /sources' body for a search of `query` from the reader's page. */
export function searchBody(query, pageUrl) {
  return {question: query, page_url: pageUrl, top_k: SEARCH_TOP_K, search: true};
}

// The searches the box remembers (its words -> sections): typing back to words already searched
// (a deleted letter, a word taken back) lists them again without asking the API.
export const SEARCHES_KEPT = 30;
// How long the box waits after a refusal that gave no Retry-After.
export const SEARCH_PAUSE_S = 10;

/** The sections found for each query searched lately, the oldest forgotten first. */
export function searchMemory(size = SEARCHES_KEPT) {
  const kept = new Map();
  return {
    get: (query) => kept.get(query),
    set(query, sections) {
      kept.delete(query);
      kept.set(query, sections);
      while (kept.size > size) kept.delete(kept.keys().next().value);
    },
  };
}

/**
 * When the API refused a search for going too fast (a 429, `failure` an ApiError of kind
 * 'rate_limited'): {until, seconds}, the time (ms since the epoch) the box may search again
 * and the wait to tell the reader; null for any other failure (the list just stays empty).
 */
export function searchPause(failure, now = Date.now()) {
  if (!failure || failure.kind !== 'rate_limited') return null;
  const seconds = Number.isFinite(failure.retryAfter) && failure.retryAfter > 0 ? Math.ceil(failure.retryAfter) : SEARCH_PAUSE_S;
  return {until: now + seconds * 1000, seconds};
}

/**
 * The sections of a search reply, each {url, title, path, snippet}: `path` the heading path
 * read as the page shows it (page › section › subsection); malformed entries are dropped.
 */
export function readSections(data) {
  const sections = data && typeof data === 'object' && Array.isArray(data.sections) ? data.sections : [];
  return sections
    .filter((s) => s && typeof s.url === 'string' && s.url)
    .map((s) => {
      const headings = (Array.isArray(s.heading_path) ? s.heading_path : []).map((h) => String(h).trim()).filter(Boolean);
      const page = typeof s.doc_title === 'string' ? s.doc_title.trim() : '';
      const path = headings[0] === page || !page ? headings : [page, ...headings];
      const title = typeof s.title === 'string' && s.title.trim() ? s.title.trim() : path[path.length - 1] || s.url;
      return {url: s.url, title, path: path.length ? path : [title], snippet: typeof s.snippet === 'string' ? s.snippet : ''};
    });
}

// The site's own search box: DocSearch's modal, the local search plugins' navbar box, any
// <input type="search"> or search/combobox role inside a search landmark.
const SEARCH_BOX = /DocSearch-Input|navbar__search-input|search/i;

/**
 * What the site's search box holds when the reader presses the chat's shortcut in it (the
 * search hands its query to the chat), or '' when `element` is no search box or is empty.
 */
export function searchBoxQuery(element) {
  if (!element || element.tagName !== 'INPUT') return '';
  const type = String(element.getAttribute?.('type') || element.type || '').toLowerCase();
  const role = String(element.getAttribute?.('role') || '').toLowerCase();
  const inSearch = Boolean(element.closest?.('[role="search"], .navbar__search, .DocSearch-Modal, .DocSearch'));
  const named = SEARCH_BOX.test(`${element.className || ''} ${element.id || ''} ${element.getAttribute?.('aria-label') || ''}`);
  if (type !== 'search' && !named && !(inSearch && (role === 'searchbox' || role === 'combobox' || type === 'text'))) return '';
  return String(element.value || '').trim();
}
