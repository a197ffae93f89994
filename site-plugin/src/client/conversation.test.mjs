import test from 'node:test';
import assert from 'node:assert/strict';
import {
  MAX_STORED_MESSAGES,
  STORAGE_KEY,
  createInFlightGuard,
  historyForRequest,
  loadConversation,
  ratedIds,
  saveConversation,
} from './conversation.mjs';

// Same interface as window.sessionStorage.
class MemoryStorage {
  constructor() {
    this.map = new Map();
  }
  getItem(k) {
    return this.map.has(k) ? this.map.get(k) : null;
  }
  setItem(k, v) {
    this.map.set(k, String(v));
  }
  removeItem(k) {
    this.map.delete(k);
  }
}

test('conversation round-trips through sessionStorage', () => {
  const storage = new MemoryStorage();
  const messages = [
    {id: 'a', role: 'user', content: 'What is PID?'},
    {id: 'b', role: 'assistant', content: 'A controller [1].', citations: [{n: 1, url: '/x#y'}], requestId: 'r1'},
  ];
  assert.equal(saveConversation(storage, messages), true);
  assert.deepEqual(loadConversation(storage), messages);
  saveConversation(storage, []);
  assert.equal(storage.getItem(STORAGE_KEY), null);
});

test('corrupt, missing or blocked storage gives an empty conversation', () => {
  const storage = new MemoryStorage();
  storage.setItem(STORAGE_KEY, '{not json');
  assert.deepEqual(loadConversation(storage), []);
  storage.setItem(STORAGE_KEY, JSON.stringify([{role: 'system', content: 'x'}, {role: 'user', content: 1}]));
  assert.deepEqual(loadConversation(storage), []);
  assert.deepEqual(loadConversation(null), []);
  const full = {setItem() { throw new Error('QuotaExceededError'); }, removeItem() {}};
  assert.equal(saveConversation(full, [{role: 'user', content: 'x'}]), false);
});

test('only the latest messages are kept', () => {
  const storage = new MemoryStorage();
  const many = Array.from({length: 100}, (_, i) => ({id: String(i), role: 'user', content: `q${i}`}));
  saveConversation(storage, many);
  const kept = loadConversation(storage);
  assert.equal(kept.length, MAX_STORED_MESSAGES);
  assert.equal(kept.at(-1).content, 'q99');
});

test('history sends roles and text of the last turns only', () => {
  const messages = [
    {role: 'user', content: 'q1'},
    {role: 'assistant', content: 'a1', citations: [{n: 1}]},
    {role: 'user', content: 'q2'},
    {role: 'assistant', content: 'x'.repeat(5000)},
  ];
  assert.deepEqual(historyForRequest(messages, 3), [
    {role: 'assistant', content: 'a1'},
    {role: 'user', content: 'q2'},
    {role: 'assistant', content: 'x'.repeat(2000)},
  ]);
});

test('rated answers are remembered', () => {
  assert.deepEqual([...ratedIds([{requestId: 'r1', rating: 'up'}, {requestId: 'r2'}])], ['r1']);
});

test('the in-flight guard refuses a second identical request', () => {
  const guard = createInFlightGuard();
  assert.equal(guard.begin('ask'), true);
  assert.equal(guard.begin('ask'), false);
  assert.equal(guard.begin('rate:r1'), true);
  guard.end('ask');
  assert.equal(guard.begin('ask'), true);
});
