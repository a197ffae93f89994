import test from 'node:test';
import assert from 'node:assert/strict';
import {SOURCES_AFTER_MS, WRITES_KEY, keptPassage, readSources, rememberWrites, sourcesDelay} from './waiting.mjs';

function memoryStorage() {
  const items = new Map();
  return {getItem: (k) => (items.has(k) ? items.get(k) : null), setItem: (k, v) => items.set(k, String(v)), items};
}

const PASSAGE = {
  answer: 'Jitter is the variation of the loop period [1].',
  citations: [{n: 1, title: 'The Control Loop', section_title: 'Loop jitter', url: '/book/docs/loop#loop-jitter'}],
};

test('a model API: sections and the passage, its citations numbered, and it writes', () => {
  const read = readSources({sources: [{title: 'Loop jitter', url: '/book/docs/loop#loop-jitter'}, {title: 'no url'}], passage: PASSAGE});
  assert.deepEqual(read.sources, [{title: 'Loop jitter', url: '/book/docs/loop#loop-jitter'}]);
  assert.equal(read.passage.answer, PASSAGE.answer);
  assert.deepEqual(read.passage.citations, PASSAGE.citations);
  assert.equal(read.writes, true);
});

test('a model API with no passage (a refusal, nothing to quote) still says a model writes', () => {
  assert.deepEqual(readSources({sources: [], passage: null}), {sources: [], passage: null, writes: true});
});

test('the offline API sends no passage field: it does not write, and nothing is quoted', () => {
  const read = readSources({sources: [{title: 'A', url: '/a'}], request_id: 'x'});
  assert.equal(read.passage, null);
  assert.equal(read.writes, false);
});

test('a passage without text or without a citation is not shown (never a quote without its sources)', () => {
  assert.equal(readSources({passage: {answer: '  ', citations: PASSAGE.citations}}).passage, null);
  assert.equal(readSources({passage: {answer: 'Text [1].', citations: []}}).passage, null);
  assert.equal(readSources({passage: {answer: 'Text [1].', citations: [{title: 'no n'}]}}).passage, null);
  assert.equal(readSources({passage: 'Text'}).passage, null);
  assert.deepEqual(readSources(null), {sources: [], passage: null, writes: false});
});

test('the first question waits before asking /sources; once a model is seen, later ones ask at once', () => {
  const storage = memoryStorage();
  assert.equal(sourcesDelay(storage), SOURCES_AFTER_MS);
  rememberWrites(storage, readSources({sources: []}));  // offline: nothing learnt
  assert.equal(sourcesDelay(storage), SOURCES_AFTER_MS);
  rememberWrites(storage, readSources({sources: [], passage: null}));
  assert.equal(storage.items.get(WRITES_KEY), '1');
  assert.equal(sourcesDelay(storage), 0);
});

test('a blocked or missing storage only loses the shortcut, never the question', () => {
  const blocked = {getItem: () => { throw new Error('SecurityError'); }, setItem: () => { throw new Error('QuotaExceeded'); }};
  assert.equal(sourcesDelay(blocked), SOURCES_AFTER_MS);
  assert.doesNotThrow(() => rememberWrites(blocked, {writes: true}));
  assert.equal(sourcesDelay(null), SOURCES_AFTER_MS);
});

test('a passage the reader was shown stays, marked, when no answer is written', () => {
  const kept = keptPassage(readSources({passage: PASSAGE}).passage, 'm1');
  assert.deepEqual(kept, {id: 'm1', role: 'assistant', content: PASSAGE.answer, citations: PASSAGE.citations, passage: 'kept'});
  assert.equal(keptPassage(null, 'm2'), null);
});
