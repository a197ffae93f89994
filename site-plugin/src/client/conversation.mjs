/** The conversation: kept in sessionStorage for the tab's session, and the history sent with a question. */

export const STORAGE_KEY = 'textbook-chat:conversation:v1';
export const MAX_STORED_MESSAGES = 40;
export const HISTORY_MESSAGES = 6;
const HISTORY_CHARS = 2000;

function isMessage(m) {
  return m && (m.role === 'user' || m.role === 'assistant') && typeof m.content === 'string';
}

/** Messages saved earlier in this tab, or [] when there are none or they are unreadable. */
export function loadConversation(storage) {
  try {
    const raw = storage?.getItem(STORAGE_KEY);
    if (!raw) return [];
    const parsed = JSON.parse(raw);
    return Array.isArray(parsed) ? parsed.filter(isMessage).slice(-MAX_STORED_MESSAGES) : [];
  } catch {
    return [];
  }
}

/** Saves the latest messages; a full or blocked storage only loses persistence, never the chat. */
export function saveConversation(storage, messages) {
  try {
    if (messages.length === 0) storage?.removeItem(STORAGE_KEY);
    else storage?.setItem(STORAGE_KEY, JSON.stringify(messages.slice(-MAX_STORED_MESSAGES)));
    return true;
  } catch {
    return false;
  }
}

/** The `history` field of POST /chat: the last few turns, roles and text only. */
export function historyForRequest(messages, limit = HISTORY_MESSAGES) {
  return messages
    .filter((m) => isMessage(m) && !m.error && m.content.trim())
    .slice(-limit)
    .map((m) => ({role: m.role, content: m.content.slice(0, HISTORY_CHARS)}));
}

/** Request ids of answers already rated, so a thumb is sent once. */
export function ratedIds(messages) {
  return new Set(messages.filter((m) => m.rating && m.requestId).map((m) => m.requestId));
}

/** One-at-a-time guard: `begin` returns false while a request with that key is in flight. */
export function createInFlightGuard() {
  const busy = new Set();
  return {
    begin(key) {
      if (busy.has(key)) return false;
      busy.add(key);
      return true;
    },
    end(key) {
      busy.delete(key);
    },
    isBusy(key) {
      return busy.has(key);
    },
  };
}
