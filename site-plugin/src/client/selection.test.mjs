import test from 'node:test';
import assert from 'node:assert/strict';
import options from '../server/options.js';
import {isAskableElement, nearestHeadingId, popoverPosition, selectedText, selectionProblem} from './selection.mjs';

const {DEFAULT_LABELS} = options;

// A minimal element tree with the DOM properties the helpers read.
function el(tagName, attrs = {}, children = []) {
  const node = {nodeType: 1, tagName: tagName.toUpperCase(), id: attrs.id || '', childNodes: [], parentNode: null, previousSibling: null};
  children.forEach((child) => append(node, child));
  return node;
}
function text(value) {
  return {nodeType: 3, nodeValue: value, childNodes: [], parentNode: null, previousSibling: null};
}
function append(parent, child) {
  child.parentNode = parent;
  child.previousSibling = parent.childNodes.at(-1) || null;
  parent.childNodes.push(child);
}

test('nearest heading above the selection, across nesting', () => {
  const target = text('the selected words');
  const article = el('div', {}, [
    el('h1', {}, [text('Page title (no id in Docusaurus)')]),
    el('p', {}, [text('intro')]),
    el('h2', {id: 'goals'}, [text('Goals')]),
    el('div', {}, [el('h3', {id: 'tuning'}, [text('Tuning')]), el('p', {}, [text('…')])]),
    el('div', {class: 'admonition'}, [el('p', {}, [el('strong', {}, [target])])]),
    el('h2', {id: 'later'}, [text('Later')]),
  ]);
  assert.equal(nearestHeadingId(target, article), 'tuning');
});

test('selection inside a heading uses that heading; none above gives ""', () => {
  const inHeading = text('Goals');
  const top = text('before any heading');
  const article = el('div', {}, [el('p', {}, [top]), el('h2', {id: 'goals'}, [inHeading])]);
  assert.equal(nearestHeadingId(inHeading, article), 'goals');
  assert.equal(nearestHeadingId(top, article), '');
});

test('the search stops at the article root', () => {
  const target = text('x');
  const article = el('article', {}, [el('p', {}, [target])]);
  el('main', {}, [el('h2', {id: 'outside'}), article]);
  assert.equal(nearestHeadingId(target, article), '');
});

test('selection size: empty and over-cap are refused with a hint', () => {
  assert.equal(selectionProblem('a paragraph', 8000), null);
  assert.equal(selectionProblem('   ', 8000).code, 'empty');
  const problem = selectionProblem('x'.repeat(50000), 8000, DEFAULT_LABELS);
  assert.equal(problem.code, 'too_long');
  assert.equal(
    problem.message,
    'That selection is 50,000 characters long; the assistant reads at most 8,000. Select a paragraph or two and try again.',
  );
});

test('askable: inside the article, not in buttons, navbar or the widget', () => {
  const fake = (matches) => ({closest: (selector) => (selector.split(',').some((s) => matches.includes(s.trim())) ? {} : null)});
  assert.equal(isAskableElement(fake(['article .markdown']), 'article .markdown'), true);
  assert.equal(isAskableElement(fake([]), 'article .markdown'), false);
  assert.equal(isAskableElement(fake(['article .markdown', 'button']), 'article .markdown'), false);
  assert.equal(isAskableElement(fake(['article .markdown', '[data-textbook-chat]']), 'article .markdown'), false);
  assert.equal(isAskableElement(fake(['nav']), 'article .markdown'), false);
  assert.equal(isAskableElement(null, 'article .markdown'), false);
});

test('popover stays inside a 375 px viewport', () => {
  const viewport = {width: 375, height: 667};
  assert.deepEqual(popoverPosition({left: 340, width: 30, top: 100, bottom: 120}, viewport), {left: 207, top: 128});
  assert.deepEqual(popoverPosition({left: 0, width: 10, top: 640, bottom: 660}, viewport), {left: 8, top: 592});
});

test('headingText is the heading as shown, without the hash link', async () => {
  const {headingText} = await import('./selection.mjs');
  const text = (t) => ({nodeType: 3, textContent: t});
  const el = (cls, ...childNodes) => ({nodeType: 1, classList: {contains: (c) => c === cls}, childNodes});
  const heading = el('', text('1.2.5 Quality of '), el('code', text('QoS')), text(' settings'), el('hash-link', text('\u200b')));
  assert.equal(headingText(heading), '1.2.5 Quality of QoS settings');
  assert.equal(headingText(null), '');
});

test('selected text is sent as the reader sees it, whatever its lines start with', () => {
  for (const text of [':::tip Log everything', '# not a heading: a shell comment', '<Tabs> in MDX', 'import rclpy\nfrom x import y', '| a | b |']) {
    assert.equal(selectedText(`\n ${text} \n`), text);
    assert.equal(selectionProblem(selectedText(text), 8000), null);
  }
  assert.equal(selectedText('Derivative kick\u200b'), 'Derivative kick'); // the heading's "#" link
  assert.equal(selectedText(null), '');
});
