import test from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import options from '../server/options.js';
import {ApiError, describeFailure, endpoint, normaliseAnswer, parseRetryAfter, postAnswer, postJson} from './api.mjs';

const labels = options.DEFAULT_LABELS;

// A real HTTP server on 127.0.0.1 whose replies the test chooses.
async function withServer(handler, run) {
  const server = http.createServer(handler);
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${server.address().port}`;
  try {
    return await run(url);
  } finally {
    server.closeAllConnections?.();
    await new Promise((resolve) => server.close(resolve));
  }
}

const reply = (status, body, headers = {}) => (req, res) => {
  res.writeHead(status, {'Content-Type': 'application/json', ...headers});
  res.end(JSON.stringify(body));
};

test('endpoint joins without double slashes', () => {
  assert.equal(endpoint('https://api.x/prod/', '/chat'), 'https://api.x/prod/chat');
  assert.equal(endpoint('/api', 'selection'), '/api/selection');
});

test('postJson sends JSON and returns the body', async () => {
  let received;
  await withServer(
    (req, res) => {
      let raw = '';
      req.on('data', (c) => (raw += c));
      req.on('end', () => {
        received = {method: req.method, type: req.headers['content-type'], body: JSON.parse(raw)};
        reply(200, {answer: 'ok', citations: [], request_id: 'r1'})(req, res);
      });
    },
    async (url) => {
      const data = await postJson(fetch, `${url}/chat`, {question: 'What is PID?'});
      assert.equal(data.request_id, 'r1');
    },
  );
  assert.deepEqual(received, {method: 'POST', type: 'application/json', body: {question: 'What is PID?'}});
});

test('429 mentions the Retry-After wait', async () => {
  await withServer(reply(429, {error: {code: 'rate_limited', message: 'slow down'}}, {'Retry-After': '12'}), async (url) => {
    await assert.rejects(postJson(fetch, `${url}/chat`, {}, {labels}), (error) => {
      assert.ok(error instanceof ApiError);
      assert.equal(error.kind, 'rate_limited');
      assert.equal(error.retryAfter, 12);
      assert.equal(error.message, 'Too many questions at once. Please wait about 12 seconds and ask again.');
      return true;
    });
  });
});

test('503, 502 and 413/422 get kind messages; 4xx shows the server text', async () => {
  await withServer(reply(503, {error: {code: 'unavailable', message: 'x'}}), async (url) => {
    await assert.rejects(postJson(fetch, url, {}, {labels}), {kind: 'unavailable', message: /busy or being updated/});
  });
  await withServer(reply(422, {error: {code: 'invalid', message: '"question" must not be empty.'}}), async (url) => {
    await assert.rejects(postJson(fetch, url, {}, {labels}), {kind: 'invalid', message: '"question" must not be empty.'});
  });
  await withServer((req, res) => res.writeHead(502).end('<html>Bad gateway</html>'), async (url) => {
    await assert.rejects(postJson(fetch, url, {}, {labels}), {kind: 'upstream'});
  });
});

test('an unreachable API is a network error that keeps the question', async () => {
  const closed = await withServer(() => {}, async (url) => url);
  await assert.rejects(postJson(fetch, `${closed}/chat`, {}, {labels}), {kind: 'network', message: /your question is still in the box/});
});

test('a slow API times out', async () => {
  await withServer(
    () => {},
    async (url) => {
      await assert.rejects(postJson(fetch, url, {}, {timeoutMs: 100, labels}), {kind: 'timeout'});
    },
  );
});

test('Retry-After accepts seconds and HTTP dates', () => {
  assert.equal(parseRetryAfter('30'), 30);
  assert.equal(parseRetryAfter(new Date(10_000).toUTCString(), 0), 10);
  assert.equal(parseRetryAfter('soon'), null);
  assert.equal(parseRetryAfter(null), null);
});

test('describeFailure falls back to a generic message', () => {
  assert.deepEqual(describeFailure({status: 500}, labels), {kind: 'error', message: 'Something went wrong (HTTP 500). Please try again.'});
  // A translated site's labels are what the reader sees.
  const fr = {...labels, errorRateLimited: 'Trop de questions. Attendez {wait}.', waitSeconds: 'environ {n} s'};
  assert.equal(describeFailure({status: 429, retryAfter: 5}, fr).message, 'Trop de questions. Attendez environ 5 s.');
});

test('normaliseAnswer tolerates missing fields and drops broken citations', () => {
  assert.deepEqual(normaliseAnswer({answer: 'a', citations: [{n: '1', url: '/x'}, {url: '/no-n'}, null], low_confidence: 1}), {
    answer: 'a',
    citations: [{n: 1, url: '/x'}],
    confidence: null,
    lowConfidence: true,
    outcome: 'answered',
    relatedTopics: [],
    requestId: null,
  });
});

test('normaliseAnswer marks the offline answer given because the model failed', () => {
  assert.equal(normaliseAnswer({answer: 'a [1]', citations: [{n: 1}], mode: 'offline-fallback'}).offlineFallback, true);
  assert.equal('offlineFallback' in normaliseAnswer({answer: 'a', mode: 'something-else'}), false);
  assert.ok(labels.offlineFallback);
});

test('a refusal is shown in the site’s own words for its case, else the API’s text', async () => {
  const {refusalText} = await import('./api.mjs');
  const body = {answer: "The book doesn't mention “Foxglove”, so I won't guess.", low_confidence: true,
    refusal: {code: 'not_mentioned', names: ['Foxglove']}};
  const answer = normaliseAnswer(body);
  assert.deepEqual(answer.refusal, {code: 'not_mentioned', names: ['Foxglove']});
  const fr = {...labels, refusalNotMentioned: 'Le livre ne parle pas de {names}.'};
  assert.equal(refusalText(answer, fr), 'Le livre ne parle pas de “Foxglove”.');
  assert.equal(refusalText(answer, {...labels, refusalNotMentioned: undefined}), body.answer);
  assert.equal(refusalText(normaliseAnswer({answer: 'plain', refusal: {code: 'unknown'}}), fr), 'plain');
  assert.equal(refusalText(normaliseAnswer({answer: 'text'}), fr), 'text');
});

test('the reader can stop a request: it ends at once as "aborted", not as an error', async () => {
  let arrived;
  const reached = new Promise((resolve) => (arrived = resolve));
  await withServer(
    () => arrived(), // never answers
    async (url) => {
      const controller = new AbortController();
      const pending = postJson(fetch, `${url}/chat`, {question: 'q'}, {timeoutMs: 30000, labels, signal: controller.signal});
      await reached;
      const started = Date.now();
      controller.abort();
      await assert.rejects(pending, (error) => error instanceof ApiError && error.kind === 'aborted' && error.message === '');
      assert.ok(Date.now() - started < 1000);
    },
  );
});

test('each outcome is kept; the closest passage is shown without the API’s English lead', async () => {
  const {normaliseAnswer, refusalText} = await import('./api.mjs');
  const labels = {refusalNotCovered: 'Pas dans le livre.', closestPassage: 'Le passage le plus proche :'};
  const closest = normaliseAnswer({
    answer: 'The book may not answer this exactly. The closest passage:\n\nClamp the integrator [1].\n\nMore.',
    outcome: 'closest', low_confidence: true, citations: [{n: 1, url: '/d#a'}],
    related_topics: [{title: 'A', url: '/d#a'}, {title: 'B', url: '/d#b'}, {title: 'C', url: '/d#c'}],
  });
  assert.equal(closest.outcome, 'closest');
  assert.equal(refusalText(closest, labels), 'Clamp the integrator [1].\n\nMore.');
  assert.equal(closest.relatedTopics.length, 3);
  const refused = normaliseAnswer({answer: 'No.', outcome: 'not_covered', low_confidence: true, refusal: {code: 'not_covered'}});
  assert.equal(refused.outcome, 'not_covered');
  assert.equal(refusalText(refused, labels), 'Pas dans le livre.');
  // an API from before the outcome field: a refusal is not covered, anything else answered
  assert.equal(normaliseAnswer({answer: 'x', refusal: {code: 'off_topic'}}).outcome, 'not_covered');
  assert.equal(normaliseAnswer({answer: 'x', low_confidence: true}).outcome, 'answered');
  assert.equal(normaliseAnswer({answer: 'x', outcome: 'maybe'}).outcome, 'answered');
});

// A streamed answer: lines written one at a time by a real server, the test deciding when.
const streamed = (lines, {status = 200, between = null} = {}) => async (req, res) => {
  res.writeHead(status, {'Content-Type': 'application/x-ndjson'});
  for (const line of lines) {
    res.write(`${JSON.stringify(line)}\n`);
    if (between) await between();
  }
  res.end();
};

test('a streamed answer shows its checked sentences as they come, then returns the final body', async () => {
  const shown = [];
  let accept;
  let release;
  const held = new Promise((resolve) => (release = resolve));
  const final = {answer: 'Kp sets the gain [1]. Ki removes the offset [1].', citations: [{n: 1, url: '/docs/pid#gains'}], request_id: 'r9'};
  const result = await withServer(
    (req, res) => {
      accept = req.headers.accept;
      streamed([{partial: {answer: 'Kp sets the gain [1].', citations: [{n: 1, url: '/docs/pid#gains'}]}}, {final}], {between: () => held})(req, res);
    },
    async (url) => {
      const pending = postJson(fetch, `${url}/chat`, {question: 'x'}, {labels, onPartial: (partial) => {
        shown.push(partial.answer);
        release(); // the rest comes only once the first sentence was shown
      }});
      return pending;
    },
  );
  assert.match(accept, /application\/x-ndjson/);
  assert.deepEqual(shown, ['Kp sets the gain [1].']);
  assert.deepEqual(result, final);
});

test('a stream that ends in a failure, or breaks off, is an error the reader is told of', async () => {
  await withServer(streamed([{partial: {answer: 'A [1].', citations: []}}, {failed: {status: 503, body: {error: {code: 'busy'}}}}]), async (url) => {
    await assert.rejects(postJson(fetch, `${url}/chat`, {question: 'x'}, {labels, onPartial: () => {}}), (e) => e.kind === 'unavailable');
  });
  await withServer(streamed([{partial: {answer: 'A [1].', citations: []}}]), async (url) => {
    await assert.rejects(postJson(fetch, `${url}/chat`, {question: 'x'}, {labels, onPartial: () => {}}), (e) => e.kind === 'network');
  });
});

test('without onPartial only JSON is asked for', async () => {
  let accept;
  await withServer((req, res) => {
    accept = req.headers.accept;
    reply(200, {answer: 'ok', citations: []})(req, res);
  }, (url) => postJson(fetch, `${url}/sources`, {question: 'x'}, {labels}));
  assert.equal(accept, 'application/json');
});

test('with a stream URL, /chat streams from it and falls back to the API when it fails first', async () => {
  const final = {answer: 'Kp sets the gain [1].', citations: [{n: 1, url: '/docs/pid#gains'}], request_id: 'r1'};
  const whole = {...final, request_id: 'r2'};
  const asked = [];
  const api = (req, res) => {
    asked.push(`api ${req.url} ${req.headers.accept}`);
    reply(200, whole)(req, res);
  };
  await withServer(api, async (apiUrl) => {
    // the stream function streams: its sentences show, the API is not asked
    const shown = [];
    await withServer(streamed([{partial: {answer: 'Kp sets the gain [1].', citations: []}}, {final}]), async (streamUrl) => {
      const got = await postAnswer(fetch, {apiUrl, streamUrl}, 'chat', {question: 'x'}, {labels, onPartial: (p) => shown.push(p.answer)});
      assert.deepEqual(got, final);
    });
    assert.deepEqual(shown, ['Kp sets the gain [1].']);
    assert.deepEqual(asked, []);
    // unreachable (a closed port), or Lambda's own error: the API answers whole
    const closed = await withServer(() => {}, async (url) => url);
    assert.deepEqual(await postAnswer(fetch, {apiUrl, streamUrl: closed}, 'chat', {question: 'x'}, {labels, onPartial: () => {}}), whole);
    await withServer(reply(502, {message: 'Internal Server Error'}), async (streamUrl) => {
      assert.deepEqual(await postAnswer(fetch, {apiUrl, streamUrl}, 'chat', {question: 'x'}, {labels, onPartial: () => {}}), whole);
    });
    assert.deepEqual(asked, ['api /chat application/json', 'api /chat application/json']);
    // the question's own refusal (429) is the reader's answer, not a reason to ask twice
    await withServer(reply(429, {error: {message: 'slow down'}}, {'Retry-After': '30'}), async (streamUrl) => {
      await assert.rejects(postAnswer(fetch, {apiUrl, streamUrl}, 'chat', {question: 'x'}, {labels, onPartial: () => {}}), (e) => e.kind === 'rate_limited');
    });
    // a stream that broke off after a sentence showed is not asked again
    await withServer(streamed([{partial: {answer: 'A [1].', citations: []}}]), async (streamUrl) => {
      await assert.rejects(postAnswer(fetch, {apiUrl, streamUrl}, 'chat', {question: 'x'}, {labels, onPartial: () => {}}), (e) => e.kind === 'network');
    });
    // selections, and /chat without onPartial, go to the API
    await postAnswer(fetch, {apiUrl, streamUrl: closed}, 'selection', {question: 'x'}, {labels});
    assert.equal(asked.length, 3);
    assert.match(asked[2], /^api \/selection /);
  });
});
