/** Talking to the textbook-chat HTTP API: JSON POST with timeout, and kind messages for every failure. */

export class ApiError extends Error {
  constructor({kind, status = 0, message, retryAfter = null}) {
    super(message);
    this.name = 'ApiError';
    this.kind = kind;
    this.status = status;
    this.retryAfter = retryAfter;
  }
}

/** Seconds from a Retry-After header (delta-seconds or HTTP date), or null. */
export function parseRetryAfter(value, now = Date.now()) {
  if (value == null || value === '') return null;
  if (/^\s*\d+\s*$/.test(String(value))) return Number(value);
  const when = Date.parse(value);
  if (Number.isNaN(when)) return null;
  return Math.max(0, Math.ceil((when - now) / 1000));
}

function serverMessage(body) {
  const message = body && body.error && body.error.message;
  return typeof message === 'string' && message.trim() ? message.trim() : null;
}

/** The reader-facing description of a failed request. */
export function describeFailure({status = 0, body = null, retryAfter = null, network = false, timeout = false}) {
  if (timeout) {
    return {kind: 'timeout', message: 'The assistant took too long to answer. Please try again in a moment.'};
  }
  if (network) {
    return {
      kind: 'network',
      message:
        'Could not reach the textbook assistant. Check your connection and try again; your question is still in the box.',
    };
  }
  if (status === 429) {
    const wait = retryAfter != null ? `about ${retryAfter} second${retryAfter === 1 ? '' : 's'}` : 'a little';
    return {kind: 'rate_limited', message: `Too many questions at once. Please wait ${wait} and ask again.`};
  }
  if (status === 503) {
    return {kind: 'unavailable', message: 'The assistant is busy or being updated. Please try again in a minute.'};
  }
  if (status === 502 || status === 504) {
    return {kind: 'upstream', message: 'The assistant could not write an answer just now. Please try again.'};
  }
  if (status === 413) {
    return {kind: 'too_large', message: serverMessage(body) || 'That text is too long. Select a shorter passage and try again.'};
  }
  if (status === 400 || status === 422) {
    return {kind: 'invalid', message: serverMessage(body) || 'The assistant could not understand that request. Try rephrasing it.'};
  }
  return {kind: 'error', message: `Something went wrong (HTTP ${status}). Please try again.`};
}

/** Join the API base URL and an endpoint path without doubling slashes. */
export function endpoint(apiUrl, path) {
  return `${String(apiUrl).replace(/\/+$/, '')}/${path.replace(/^\/+/, '')}`;
}

/**
 * POST JSON and return the parsed body; throws ApiError with a kind message on any failure.
 * `fetchImpl` is injected so tests can pass a fake or a real fetch.
 */
export async function postJson(fetchImpl, url, body, {timeoutMs = 30000} = {}) {
  const controller = typeof AbortController === 'function' ? new AbortController() : null;
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller?.abort();
  }, timeoutMs);
  let response;
  try {
    response = await fetchImpl(url, {
      method: 'POST',
      headers: {'Content-Type': 'application/json', Accept: 'application/json'},
      body: JSON.stringify(body),
      signal: controller?.signal,
    });
  } catch {
    throw new ApiError(describeFailure({network: !timedOut, timeout: timedOut}));
  } finally {
    clearTimeout(timer);
  }
  let data = null;
  try {
    data = await response.json();
  } catch {
    data = null;
  }
  if (!response.ok) {
    const retryAfter = parseRetryAfter(response.headers?.get?.('Retry-After'));
    throw new ApiError({...describeFailure({status: response.status, body: data, retryAfter}), status: response.status, retryAfter});
  }
  if (!data || typeof data !== 'object') {
    throw new ApiError({kind: 'bad_response', status: response.status, message: 'The assistant sent an answer this page cannot read. Please try again.'});
  }
  return data;
}

/** Normalise an answer body so the widget never trips over a missing field. */
export function normaliseAnswer(data) {
  const citations = Array.isArray(data.citations) ? data.citations.filter((c) => c && Number.isFinite(Number(c.n))) : [];
  const related = Array.isArray(data.related_topics) ? data.related_topics.filter((t) => t && (t.title || t.url)) : [];
  return {
    answer: typeof data.answer === 'string' ? data.answer : '',
    citations: citations.map((c) => ({...c, n: Number(c.n)})),
    confidence: typeof data.confidence === 'number' ? data.confidence : null,
    lowConfidence: Boolean(data.low_confidence),
    relatedTopics: related,
    requestId: typeof data.request_id === 'string' ? data.request_id : null,
  };
}
