import test, {mock} from 'node:test';
import assert from 'node:assert/strict';
import {GAP_PX, MARK_ATTRIBUTE, MARK_MS, PIN_MS, WAIT_MS, pinHeading, scrollDelta} from './pin.mjs';

// A page as the pin sees it: elements at document positions, a window that scrolls, listeners
// that tests fire, and a ResizeObserver the test triggers when the layout "grows".
function fakePage() {
  const listeners = new Map();
  const elements = new Map();
  const observers = [];
  const win = {
    scrollY: 0,
    scrolls: 0,
    location: {pathname: '/docs/pid', hash: '#tuning'},
    setTimeout: (fn, ms) => setTimeout(fn, ms),
    clearTimeout: (t) => clearTimeout(t),
    scrollTo({top}) {
      win.scrollY = top;
      win.scrolls += 1;
    },
    getComputedStyle: () => ({position: 'sticky'}),
    addEventListener: (type, fn) => listeners.set(type, [...(listeners.get(type) || []), fn]),
    removeEventListener: (type, fn) => listeners.set(type, (listeners.get(type) || []).filter((f) => f !== fn)),
    fire: (type) => (listeners.get(type) || []).forEach((fn) => fn({type})),
    listening: (type) => (listeners.get(type) || []).length,
    ResizeObserver: class {
      constructor(callback) {
        this.callback = callback;
        this.active = true;
        observers.push(this);
      }
      observe(target) {
        this.active = true;
        this.targets = [...(this.targets || []), target];
      }
      disconnect() {
        this.active = false;
        this.targets = [];
      }
    },
    Event: class {
      constructor(type) {
        this.type = type;
      }
    },
    grow(px) {
      for (const el of elements.values()) el.pageTop += px;
      observers.filter((o) => o.active).forEach((o) => o.callback());
    },
  };
  const navbar = {getBoundingClientRect: () => ({bottom: 60})};
  win.document = {
    body: {},
    querySelector: (selector) => (selector === '.navbar' ? navbar : null),
    getElementById: (id) => elements.get(id) || null,
    addEventListener() {},
    removeEventListener() {},
    dispatchEvent() {},
  };
  const add = (id, pageTop) => {
    const attributes = new Map();
    const el = {
      id,
      pageTop,
      tagName: 'H2',
      isConnected: true,
      focused: null,
      getBoundingClientRect: () => ({top: el.pageTop - win.scrollY}),
      hasAttribute: (name) => attributes.has(name),
      getAttribute: (name) => attributes.get(name) ?? null,
      setAttribute: (name, value) => attributes.set(name, value),
      removeAttribute: (name) => attributes.delete(name),
      focus: (options) => {
        el.focused = options;
      },
    };
    elements.set(id, el);
    return el;
  };
  return {win, add, observers, top: (id) => elements.get(id).getBoundingClientRect().top};
}

test.beforeEach(() => mock.timers.enable({apis: ['setTimeout', 'Date']}));
test.afterEach(() => mock.timers.reset());

test('scrollDelta ignores a pixel of rounding', () => {
  assert.equal(scrollDelta(73.4, 72), 0);
  assert.equal(scrollDelta(1500, 72), 1428);
  assert.equal(scrollDelta(-300, 72), -372);
});

test('the heading is placed under the navbar and kept there while the layout grows', () => {
  const {win, add, top} = fakePage();
  add('tuning', 900);
  pinHeading('tuning', {win});
  assert.equal(top('tuning'), 60 + GAP_PX);
  win.grow(4500); // diagrams render above the heading
  assert.equal(top('tuning'), 60 + GAP_PX);
  mock.timers.tick(PIN_MS - 500);
  win.grow(800);
  assert.equal(top('tuning'), 60 + GAP_PX);
});

test('it waits for the target page to render the heading, ignoring the old page’s one', () => {
  const {win, add, top} = fakePage();
  const old = add('tuning', 300);
  pinHeading('tuning', {win, stale: old});
  assert.equal(win.scrolls, 0);
  add('tuning', 2000); // the new page replaces the element with that id
  mock.timers.tick(60);
  assert.equal(top('tuning'), 60 + GAP_PX);
});

test('the reader scrolling lets go of the heading', () => {
  const {win, add, top} = fakePage();
  add('tuning', 900);
  pinHeading('tuning', {win});
  win.fire('wheel');
  win.grow(1000);
  mock.timers.tick(1000);
  assert.equal(top('tuning'), 60 + GAP_PX + 1000);
  assert.equal(win.listening('keydown'), 0, 'every listener is removed');
});

test('the heading is held long after PIN_MS: only the reader lets go', () => {
  const {win, add, top} = fakePage();
  add('tuning', 900);
  pinHeading('tuning', {win});
  mock.timers.tick(PIN_MS * 6);
  win.grow(700); // content inserted a minute later (a slow phone still drawing diagrams)
  assert.equal(top('tuning'), 60 + GAP_PX);
  const heading = win.document.getElementById('tuning');
  heading.pageTop += 300; // moved without resizing anything observed: the slow check finds it
  mock.timers.tick(1100);
  assert.equal(top('tuning'), 60 + GAP_PX);
  win.fire('keydown');
  win.grow(400);
  mock.timers.tick(2000);
  assert.equal(top('tuning'), 60 + GAP_PX + 400);
});

test('the reader scrolling before the heading renders lets go too', () => {
  const {win, add} = fakePage();
  pinHeading('tuning', {win});
  win.fire('wheel');
  add('tuning', 2000);
  mock.timers.tick(200);
  assert.equal(win.scrolls, 0);
});

test('the heading is placed when the page renders it (a mutation), not a poll later', () => {
  const {win, add, top} = fakePage();
  const watchers = [];
  win.MutationObserver = class {
    constructor(callback) {
      this.callback = callback;
      watchers.push(this);
    }
    observe() {}
    disconnect() {
      this.callback = null;
    }
  };
  pinHeading('tuning', {win});
  add('tuning', 2000);
  watchers.forEach((w) => w.callback?.([]));
  assert.equal(top('tuning'), 60 + GAP_PX);
  assert.equal(watchers[0].callback, null, 'the watcher is disconnected once the heading is found');
});

test('another navigation ends the pin', () => {
  const {win, add, top} = fakePage();
  add('tuning', 900);
  pinHeading('tuning', {win});
  win.location.hash = '#other';
  win.grow(500);
  assert.equal(top('tuning'), 60 + GAP_PX + 500);
});

test('the heading receives focus without scrolling and is marked for a moment', () => {
  const {win, add} = fakePage();
  const heading = add('tuning', 900);
  pinHeading('tuning', {win});
  assert.equal(heading.getAttribute('tabindex'), '-1');
  assert.deepEqual(heading.focused, {preventScroll: true});
  assert.equal(heading.hasAttribute(MARK_ATTRIBUTE), true);
  mock.timers.tick(MARK_MS + 10);
  assert.equal(heading.hasAttribute(MARK_ATTRIBUTE), false);
});

test('a heading that is never rendered gives up quietly', () => {
  const {win} = fakePage();
  let done = false;
  pinHeading('missing', {win, onDone: () => (done = true)});
  mock.timers.tick(WAIT_MS - 100);
  assert.equal(done, false);
  mock.timers.tick(200);
  assert.equal(done, true);
  assert.equal(win.scrolls, 0);
});

test('every ancestor of the heading is observed: a body that keeps the window\'s height does not resize', () => {
  const {win, add, observers} = fakePage();
  const heading = add('tuning', 900);
  const article = {parentElement: null};
  const markdown = {parentElement: article};
  heading.parentElement = markdown;
  pinHeading('tuning', {win});
  const targets = observers.at(-1).targets;
  assert.ok(targets.includes(markdown) && targets.includes(article) && targets.includes(win.document.body), targets);
});
