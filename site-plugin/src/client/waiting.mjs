/**
 * While a model writes the answer: when to ask POST /sources beside /chat, and what its reply
 * shows (the sections found and, where the API has one, the book's passage, marked as a quote).
 * Lambda buffers responses, so a second, quick request is how the reader sees progress.
 */
import {normaliseAnswer} from './api.mjs';

// A /chat slower than this gets /sources asked beside it, while the API's kind is unknown: a
// quick offline answer never pays for a second request.
export const SOURCES_AFTER_MS = 400;
export const WRITES_KEY = 'textbook-chat:writes';

/**
 * Milliseconds to wait before asking /sources: none once this tab has seen that a model writes
 * the answers (a /sources reply with a `passage` field), else SOURCES_AFTER_MS.
 */
export function sourcesDelay(storage) {
  try {
    return storage?.getItem(WRITES_KEY) === '1' ? 0 : SOURCES_AFTER_MS;
  } catch {
    return SOURCES_AFTER_MS;
  }
}

/**
 * The /sources reply as the widget shows it: `sources` (with a url), `passage` ({answer,
 * citations} with at least one citation, else null: no quote is shown without its sources) and
 * `writes` (the reply has a `passage` field, even null: only an API whose answers a model writes
 * sends one).
 */
export function readSources(data) {
  const body = data && typeof data === 'object' ? data : {};
  const sources = Array.isArray(body.sources) ? body.sources.filter((s) => s && typeof s.url === 'string' && s.url) : [];
  const given = body.passage && typeof body.passage === 'object' ? normaliseAnswer(body.passage) : null;
  const passage = given && given.answer.trim() && given.citations.length > 0 ? {answer: given.answer, citations: given.citations} : null;
  return {sources, passage, writes: Object.prototype.hasOwnProperty.call(body, 'passage')};
}

/** Remembers for the tab's session that a model writes this API's answers (sourcesDelay). */
export function rememberWrites(storage, read) {
  if (!read.writes) return;
  try {
    storage?.setItem(WRITES_KEY, '1');
  } catch {
    // storage full or blocked: the next question waits SOURCES_AFTER_MS, as the first did
  }
}

/**
 * What stays in the conversation when no written answer came (it failed or the reader stopped
 * it): the passage the reader was shown, still marked as a quote from the book; null without one.
 */
export function keptPassage(passage, id) {
  if (!passage) return null;
  return {id, role: 'assistant', content: passage.answer, citations: passage.citations, passage: 'kept'};
}
