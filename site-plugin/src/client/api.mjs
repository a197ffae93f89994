/** Talking to the textbook-chat HTTP API: JSON POST with timeout, and kind messages for every failure. */
import {fill} from './labels.mjs';

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

/**
 * The reader-facing description of a failed request, in the widget's `labels` (every text comes
 * from there, so a translated site shows translated errors); the API's own message is kept for
 * a refused question or selection (413/400/422), which says what to change.
 */
export function describeFailure({status = 0, body = null, retryAfter = null, network = false, timeout = false}, labels = {}) {
  const text = (key, values) => fill(labels[key] ?? key, values);
  if (timeout) return {kind: 'timeout', message: text('errorTimeout')};
  if (network) return {kind: 'network', message: text('errorNetwork')};
  if (status === 429) {
    const wait = retryAfter != null ? text('waitSeconds', {n: retryAfter}) : text('waitUnknown');
    return {kind: 'rate_limited', message: text('errorRateLimited', {wait})};
  }
  if (status === 503) return {kind: 'unavailable', message: text('errorUnavailable')};
  if (status === 502 || status === 504) return {kind: 'upstream', message: text('errorUpstream')};
  if (status === 413) return {kind: 'too_large', message: serverMessage(body) || text('errorTooLarge')};
  if (status === 400 || status === 422) return {kind: 'invalid', message: serverMessage(body) || text('errorInvalid')};
  return {kind: 'error', message: text('errorHttp', {status})};
}

/** Join the API base URL and an endpoint path without doubling slashes. */
export function endpoint(apiUrl, path) {
  return `${String(apiUrl).replace(/\/+$/, '')}/${path.replace(/^\/+/, '')}`;
}

/**
 * POST JSON and return the parsed body; throws ApiError with a kind message (from `labels`) on any failure,
 * or of kind 'aborted' when `signal` (the reader's stop button) cancels it. `fetchImpl` is injected
 * so tests can pass a fake or a real fetch.
 */
export async function postJson(fetchImpl, url, body, {timeoutMs = 30000, labels = {}, signal = null, onPartial = null} = {}) {
  const controller = typeof AbortController === 'function' ? new AbortController() : null;
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller?.abort();
  }, timeoutMs);
  // The reader's stop button: the request is cancelled, and that is not a failure to report.
  const stop = () => controller?.abort();
  if (signal?.aborted) stop();
  signal?.addEventListener?.('abort', stop);
  let response;
  try {
    response = await fetchImpl(url, {
      method: 'POST',
      // With `onPartial`, an API that streams a model's answer may send it as it is written.
      headers: {'Content-Type': 'application/json', Accept: onPartial ? `${NDJSON}, application/json` : 'application/json'},
      body: JSON.stringify(body),
      signal: controller?.signal,
    });
  } catch {
    if (signal?.aborted && !timedOut) throw new ApiError({kind: 'aborted', message: ''});
    throw new ApiError(describeFailure({network: !timedOut, timeout: timedOut}, labels));
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener?.('abort', stop);
  }
  let data = null;
  let status = response.status;
  const streamed = Boolean(onPartial) && String(response.headers?.get?.('Content-Type') || '').startsWith(NDJSON);
  try {
    if (streamed) {
      const ended = await readLines(response, onPartial, signal);
      data = ended.body;
      status = ended.status;
    } else {
      data = await response.json();
    }
  } catch (failure) {
    if (signal?.aborted) throw new ApiError({kind: 'aborted', message: ''});
    // a stream that broke off (or ended with no answer) is a lost connection
    if (streamed) throw new ApiError(describeFailure({network: true}, labels));
    data = null;
  }
  if (status >= 400) {
    const retryAfter = parseRetryAfter(response.headers?.get?.('Retry-After'));
    throw new ApiError({...describeFailure({status, body: data, retryAfter}, labels), status, retryAfter});
  }
  if (!response.ok) {
    const retryAfter = parseRetryAfter(response.headers?.get?.('Retry-After'));
    throw new ApiError({...describeFailure({status: response.status, body: data, retryAfter}, labels), status: response.status, retryAfter});
  }
  if (!data || typeof data !== 'object') {
    throw new ApiError({kind: 'bad_response', status: response.status, message: fill(labels.errorBadResponse ?? 'errorBadResponse')});
  }
  return data;
}

const NDJSON = 'application/x-ndjson';

// What the stream function answers when it, not the question, failed: unreachable (or no CORS),
// its URL wrong or not public (403/404), Lambda's own errors (500/502/504). The API then answers.
const STREAM_FAILED = new Set(['network']);
const STREAM_FAILED_STATUS = new Set([403, 404, 500, 502, 504]);

/**
 * POST `path` (chat, selection) to the API at `apiUrl`, or, for /chat with `onPartial`, to the
 * API's stream function at `streamUrl` when the site gives one (the plugin's streamUrl option: on
 * AWS the `stream` function's URL, which sends a model's checked sentences as they are written).
 * When the stream function fails before a sentence showed, the question goes to `apiUrl`, which
 * answers whole. Returns the answer's body, as postJson.
 */
export async function postAnswer(fetchImpl, {apiUrl, streamUrl = null}, path, body, options = {}) {
  if (!streamUrl || path !== 'chat' || !options.onPartial) return postJson(fetchImpl, endpoint(apiUrl, path), body, options);
  let shown = false;
  const onPartial = (partial) => {
    shown = true;
    options.onPartial(partial);
  };
  try {
    return await postJson(fetchImpl, endpoint(streamUrl, path), body, {...options, onPartial});
  } catch (failure) {
    const fallBack = !shown && failure instanceof ApiError && !options.signal?.aborted &&
      (STREAM_FAILED.has(failure.kind) || STREAM_FAILED_STATUS.has(failure.status));
    if (!fallBack) throw failure;
    return postJson(fetchImpl, endpoint(apiUrl, path), body, {...options, onPartial: null});
  }
}

/**
 * A streamed answer (POST /chat, `application/x-ndjson`): one JSON object a line, each
 * `{"partial": {answer, citations}}` (the checked sentences so far) to `onPartial`, until
 * `{"final": body}` (the answer a non-streamed request returns) or `{"failed": {status, body}}`.
 * Returns {status, body}; a stream that ends without either is a network failure.
 */
export async function readLines(response, onPartial, signal = null) {
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffered = '';
  const take = (line) => {
    if (!line.trim()) return null;
    const event = JSON.parse(line);
    if (event.partial && typeof event.partial === 'object') {
      onPartial(normaliseAnswer(event.partial));
      return null;
    }
    if (event.final && typeof event.final === 'object') return {status: response.status, body: event.final};
    if (event.failed && typeof event.failed === 'object') return {status: Number(event.failed.status) || 500, body: event.failed.body};
    return null;
  };
  for (;;) {
    if (signal?.aborted) {
      reader.cancel().catch(() => {});
      throw new ApiError({kind: 'aborted', message: ''});
    }
    const {done, value} = await reader.read();
    buffered += decoder.decode(value || new Uint8Array(), {stream: !done});
    let cut = buffered.indexOf('\n');
    while (cut >= 0) {
      const ended = take(buffered.slice(0, cut));
      if (ended) {
        reader.cancel().catch(() => {});
        return ended;
      }
      buffered = buffered.slice(cut + 1);
      cut = buffered.indexOf('\n');
    }
    if (done) {
      const ended = take(buffered);
      if (ended) return ended;
      throw new ApiError({kind: 'network', message: ''});
    }
  }
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
    // answered | closest | not_covered (an API without the field: a refusal is not_covered)
    outcome: OUTCOMES.includes(data.outcome) ? data.outcome : data.refusal ? 'not_covered' : 'answered',
    relatedTopics: related,
    requestId: typeof data.request_id === 'string' ? data.request_id : null,
    ...(data.mode === 'offline-fallback' ? {offlineFallback: true} : {}),
    ...(data.refusal && typeof data.refusal.code === 'string'
      ? {refusal: {code: data.refusal.code, names: Array.isArray(data.refusal.names) ? data.refusal.names.map(String) : []}}
      : {}),
  };
}

const OUTCOMES = ['answered', 'closest', 'not_covered'];

const REFUSAL_LABELS = {
  not_covered: 'refusalNotCovered',
  not_mentioned: 'refusalNotMentioned',
  empty_question: 'refusalEmptyQuestion',
  off_topic: 'refusalOffTopic',
};

/**
 * The words an answer is shown in. A refusal: the site's label for its case (so a translated site
 * speaks its language), else the API's own text. The closest passage: the quote alone (the API's
 * first paragraph is its English lead, which the widget shows as the `closestPassage` label).
 */
export function refusalText(answer, labels) {
  if (answer.outcome === 'closest') {
    const cut = answer.answer.indexOf('\n\n');
    return cut >= 0 ? answer.answer.slice(cut + 2) : answer.answer;
  }
  const key = answer.refusal && REFUSAL_LABELS[answer.refusal.code];
  const template = key && labels[key];
  if (!template) return answer.answer;
  const names = (answer.refusal.names || []).map((n) => `“${n}”`).join(', ');
  return template.replace('{names}', names);
}
