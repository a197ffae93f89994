import test from 'node:test';
import assert from 'node:assert/strict';
import {OPEN_EVENT, fill, isOpenShortcut, requestOpen, shortcutLabel} from './labels.mjs';

test('fill replaces known placeholders and leaves others as written', () => {
  assert.equal(fill('Source {n}: {title}', {n: 2, title: 'Derivative — PID'}), 'Source 2: Derivative — PID');
  assert.equal(fill('Wait {wait} ({other})', {wait: 'a little'}), 'Wait a little ({other})');
  assert.equal(fill(undefined), '');
});

test('the open shortcut is Ctrl+/ or Cmd+/, never Ctrl+K (Docusaurus search) or a bare slash', () => {
  assert.equal(shortcutLabel('MacIntel'), '⌘/');
  assert.equal(shortcutLabel('Linux x86_64'), 'Ctrl+/');
  const key = (k, mods = {}) => ({key: k, ctrlKey: false, metaKey: false, altKey: false, shiftKey: false, ...mods});
  assert.equal(isOpenShortcut(key('/', {ctrlKey: true})), true);
  assert.equal(isOpenShortcut(key('/', {metaKey: true})), true);
  assert.equal(isOpenShortcut(key('k', {ctrlKey: true})), false);
  assert.equal(isOpenShortcut(key('/')), false);
  assert.equal(isOpenShortcut(key('/', {ctrlKey: true, shiftKey: true})), false);
});

test('requestOpen sends the widget its open event, and does nothing where there is no window', () => {
  const target = new EventTarget();
  const seen = [];
  target.addEventListener(OPEN_EVENT, (event) => seen.push(event.type));
  assert.equal(requestOpen(target), true);
  assert.deepEqual(seen, ['textbook-chat:open']);
  assert.equal(requestOpen(null), false);
});
