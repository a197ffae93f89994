import test from 'node:test';
import assert from 'node:assert/strict';
import {SEARCH_MIN_CHARS, SEARCH_PAUSE_S, readSections, searchBody, searchBoxQuery, searchMemory, searchPause, searchQuery} from './search.mjs';

test('a search needs a few characters, its spaces folded', () => {
  assert.equal(searchQuery('  pi '), '');
  assert.equal(searchQuery('x'.repeat(SEARCH_MIN_CHARS)), 'xxx');
  assert.equal(searchQuery('  loop \n jitter '), 'loop jitter');
  assert.equal(searchQuery('why '.repeat(80)), '', 'a long paragraph is a question, not a search');
  assert.equal(searchQuery(undefined), '');
});

test('the body asks /sources to search, from the reader\'s page', () => {
  assert.deepEqual(searchBody('loop jitter', '/docs/intro'), {question: 'loop jitter', page_url: '/docs/intro', top_k: 5, search: true});
});

test('sections are read with their heading path, the page first', () => {
  const read = readSections({
    sections: [
      {title: 'Measuring loop jitter', doc_title: 'The Loop', heading_path: ['The Loop', 'Timing', 'Measuring loop jitter'], url: '/docs/loop#jitter', snippet: 'Jitter is…'},
      {title: 'Gains', doc_title: 'PID', heading_path: ['Gains'], url: '/docs/pid#gains'},
      {title: 'no url'},
      null,
    ],
  });
  assert.equal(read.length, 2);
  assert.deepEqual(read[0], {url: '/docs/loop#jitter', title: 'Measuring loop jitter', path: ['The Loop', 'Timing', 'Measuring loop jitter'], snippet: 'Jitter is…'});
  assert.deepEqual(read[1].path, ['PID', 'Gains']);
  assert.equal(read[1].snippet, '');
  assert.deepEqual(readSections({}), []);
  assert.deepEqual(readSections('nope'), []);
});

function input({type = 'text', className = '', id = '', role = '', label = '', value = '', within = false, tag = 'INPUT'} = {}) {
  const attributes = {type, role, 'aria-label': label};
  return {
    tagName: tag,
    type,
    className,
    id,
    value,
    getAttribute: (name) => attributes[name] || null,
    closest: () => (within ? {} : null),
  };
}

test('the site\'s search box hands its query to the chat; other boxes do not', () => {
  assert.equal(searchBoxQuery(input({className: 'DocSearch-Input', type: 'search', value: ' pid tuning '})), 'pid tuning');
  assert.equal(searchBoxQuery(input({className: 'navbar__search-input', value: 'jitter'})), 'jitter');
  assert.equal(searchBoxQuery(input({role: 'combobox', within: true, value: 'gear ratio'})), 'gear ratio');
  assert.equal(searchBoxQuery(input({type: 'search', value: 'x'})), 'x');
  assert.equal(searchBoxQuery(input({type: 'search', value: '   '})), '');
  assert.equal(searchBoxQuery(input({value: 'a name field'})), '', 'a form on the page is not the search');
  assert.equal(searchBoxQuery(input({tag: 'TEXTAREA', type: 'search', value: 'mine'})), '', "the chat's own box");
  assert.equal(searchBoxQuery(null), '');
});

test('the box remembers its latest searches, the oldest forgotten first', () => {
  const memory = searchMemory(2);
  memory.set('loop', ['a']);
  memory.set('loop j', ['b']);
  assert.deepEqual(memory.get('loop'), ['a']);
  memory.set('loop', ['a2']); // searched again: the newest
  memory.set('loop ji', ['c']);
  assert.equal(memory.get('loop j'), undefined);
  assert.deepEqual(memory.get('loop'), ['a2']);
  assert.deepEqual(memory.get('loop ji'), ['c']);
});

test('a refused search pauses the box for the wait the API gives, any other failure does not', () => {
  assert.deepEqual(searchPause({kind: 'rate_limited', retryAfter: 42}, 1000), {until: 43000, seconds: 42});
  assert.deepEqual(searchPause({kind: 'rate_limited', retryAfter: 1.2}, 0), {until: 2000, seconds: 2});
  assert.deepEqual(searchPause({kind: 'rate_limited', retryAfter: null}, 0), {until: SEARCH_PAUSE_S * 1000, seconds: SEARCH_PAUSE_S});
  assert.equal(searchPause({kind: 'network'}), null);
  assert.equal(searchPause({kind: 'unavailable', retryAfter: 5}), null);
  assert.equal(searchPause(null), null);
});
