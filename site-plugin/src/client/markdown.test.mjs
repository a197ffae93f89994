import test from 'node:test';
import assert from 'node:assert/strict';
import {parseInline, parseMarkdown, safeHref, toPlainText} from './markdown.mjs';

const ALLOWED_TYPES = new Set([
  'paragraph', 'heading', 'list', 'code', 'quote', 'text', 'strong', 'emphasis', 'inlineCode', 'link', 'citation',
  'kbd', 'break', 'sub', 'sup', 'rule', 'table',
]);

function walk(nodes, visit) {
  for (const node of nodes) {
    visit(node);
    if (node.children) walk(node.children, visit);
    if (node.items) node.items.forEach((item) => walk(item, visit));
  }
}

test('paragraphs, emphasis, code and lists', () => {
  const blocks = parseMarkdown('A **PID** loop uses *feedback* and `kp`.\n\n- one\n- two\n\n1. first\n2. second');
  assert.deepEqual(blocks[0], {
    type: 'paragraph',
    children: [
      {type: 'text', value: 'A '},
      {type: 'strong', children: [{type: 'text', value: 'PID'}]},
      {type: 'text', value: ' loop uses '},
      {type: 'emphasis', children: [{type: 'text', value: 'feedback'}]},
      {type: 'text', value: ' and '},
      {type: 'inlineCode', value: 'kp'},
      {type: 'text', value: '.'},
    ],
  });
  assert.equal(blocks[1].type, 'list');
  assert.equal(blocks[1].ordered, false);
  assert.deepEqual(blocks[1].items.map(toPlainText), ['one', 'two']);
  assert.equal(blocks[2].ordered, true);
  assert.equal(blocks[2].start, 1);
});

test('fenced code keeps its text verbatim', () => {
  const [block] = parseMarkdown('```python\nprint("<b>hi</b>")\n```');
  assert.deepEqual(block, {type: 'code', lang: 'python', value: 'print("<b>hi</b>")'});
});

test('[n] markers become citations only when the citation exists', () => {
  const [p] = parseMarkdown('Gain matters [1]. Also [2, 3] and [9].', {citations: [{n: 1}, {n: 2}, {n: 3}]});
  assert.deepEqual(
    p.children.filter((n) => n.type === 'citation').map((n) => n.n),
    [1, 2, 3],
  );
  assert.match(toPlainText(p.children), /and \[9\]\.$/);
});

test('a [text](url) link is not mistaken for a citation', () => {
  const nodes = parseInline('see [1](/docs/x#y)', new Set([1]));
  assert.deepEqual(nodes[1], {type: 'link', href: '/docs/x#y', children: [{type: 'text', value: '1'}]});
});

test('safeHref allows http(s), mailto, site paths and fragments only', () => {
  for (const ok of ['https://a.b/c', 'http://a', 'mailto:x@y.z', '/docs/intro#goals', '#goals']) {
    assert.equal(safeHref(ok), ok);
  }
  for (const bad of [
    'javascript:alert(1)',
    'JaVaScRiPt:alert(1)',
    ' javascript:alert(1)',
    'java\tscript:alert(1)',
    'java\nscript:alert(1)',
    '\u0001javascript:alert(1)',
    'data:text/html,<script>alert(1)</script>',
    'vbscript:msgbox(1)',
    '//evil.example/x',
    '/\\evil.example',
    'relative/path',
    '',
    null,
  ]) {
    assert.equal(safeHref(bad), null, String(bad));
  }
});

test('a malicious answer yields only inert text and safe links', () => {
  const evil = [
    '<script>window.__xss = 1</script>',
    '<img src=x onerror="window.__xss=2">',
    '[click me](javascript:window.__xss=3) and [data](data:text/html;base64,PHNjcmlwdD4=)',
    '<a href="javascript:alert(1)">raw link</a>',
    '**<svg onload=alert(1)>**',
    '```html\n<iframe src="javascript:alert(1)"></iframe>\n```',
  ].join('\n\n');
  const blocks = parseMarkdown(evil);
  const hrefs = [];
  walk(blocks, (node) => {
    assert.ok(ALLOWED_TYPES.has(node.type), node.type);
    assert.deepEqual(
      Object.keys(node).filter((k) => !['type', 'children', 'value', 'href', 'n', 'items', 'ordered', 'start', 'level', 'lang'].includes(k)),
      [],
    );
    if (node.type === 'link') hrefs.push(node.href);
  });
  assert.deepEqual(hrefs, []);
  // The markup survives as visible text, which React escapes.
  const text = blocks.map((b) => (b.type === 'code' ? b.value : toPlainText(b.children))).join('\n');
  assert.match(text, /<script>window\.__xss = 1<\/script>/);
  assert.match(text, /<img src=x onerror="window\.__xss=2">/);
  assert.match(text, /click me and data/);
});

test('pathological input stays fast and bounded', () => {
  const started = Date.now();
  parseMarkdown('*'.repeat(50000) + '['.repeat(50000) + '`'.repeat(50000));
  parseMarkdown('[a](b '.repeat(20000));
  assert.ok(Date.now() - started < 2000, `took ${Date.now() - started} ms`);
});

test('GFM tables: header, alignment, inline Markdown and citations in cells', () => {
  const md = 'Gains:\n\n| term | effect | tune |\n|:-----|:------:|-----:|\n| **P** | reacts to `error` [1] | first |\n| D | damps \\| brakes | last |\n\nAfter.';
  const blocks = parseMarkdown(md, {citations: [{n: 1}]});
  assert.deepEqual(blocks.map((b) => b.type), ['paragraph', 'table', 'paragraph']);
  const table = blocks[1];
  assert.deepEqual(table.align, ['left', 'center', 'right']);
  assert.deepEqual(table.header.map(toPlainText), ['term', 'effect', 'tune']);
  assert.deepEqual(table.rows.map((row) => row.map(toPlainText)), [
    ['P', 'reacts to error [1]', 'first'],
    ['D', 'damps | brakes', 'last'],
  ]);
  assert.deepEqual(table.rows[0][0], [{type: 'strong', children: [{type: 'text', value: 'P'}]}]);
  assert.ok(table.rows[0][1].some((node) => node.type === 'citation' && node.n === 1));
});

test('a table row with fewer cells is padded, extra cells dropped; a bar in code stays', () => {
  const [table] = parseMarkdown('a | b\n--- | ---\nonly\n`x|y` | z | extra');
  assert.deepEqual(table.rows.map((row) => row.map(toPlainText)), [['only', ''], ['x|y', 'z']]);
});

test('a lone bar or a dash line is not a table', () => {
  assert.deepEqual(parseMarkdown('a | b\n\nc').map((b) => b.type), ['paragraph', 'paragraph']);
  assert.equal(parseMarkdown('Title\n---').some((b) => b.type === 'table'), false);
  const [block] = parseMarkdown('| <img src=x onerror=alert(1)> |\n|---|\n| <script>x</script> |');
  assert.equal(block.type, 'table');
  assert.equal(toPlainText(block.rows[0][0]), '<script>x</script>');  // text, never HTML
});

test('inline HTML the book renders: <code>, <kbd>, <br/>, <b>; anything else stays text', () => {
  const [p] = parseMarkdown('Press <kbd>Ctrl</kbd>+<KBD>C</KBD>, use <code>List&lt;T&gt;</code>.<br/>Then <b>save</b><br>and <sub>2</sub> <span onclick="x">s</span> <code class="x">y</code>');
  assert.deepEqual(p.children.slice(0, 8), [
    {type: 'text', value: 'Press '},
    {type: 'kbd', value: 'Ctrl'},
    {type: 'text', value: '+'},
    {type: 'kbd', value: 'C'},
    {type: 'text', value: ', use '},
    {type: 'inlineCode', value: 'List<T>'},
    {type: 'text', value: '.'},
    {type: 'break'},
  ]);
  assert.deepEqual(p.children[9], {type: 'strong', children: [{type: 'text', value: 'save'}]});
  assert.equal(p.children[10].type, 'break');
  assert.deepEqual(p.children[12], {type: 'sub', children: [{type: 'text', value: '2'}]});
  // Tags with attributes, or not on the list, are shown as the text they are.
  assert.match(toPlainText(p.children), /<span onclick="x">s<\/span> <code class="x">y<\/code>$/);
});

test('an offline quote’s separators: no stray "--- [n]", a rule only between blocks', () => {
  const blocks = parseMarkdown('--- [1]\n\nFirst [1].\n\n--- [2]\n\n***\n\nSecond [2].\n\n---', {citations: [{n: 1}, {n: 2}]});
  assert.deepEqual(blocks.map((b) => b.type), ['paragraph', 'rule', 'paragraph']);
  assert.doesNotMatch(blocks.map((b) => toPlainText(b.children || [])).join(' '), /---/);
  // A line of dashes under text is a heading (CommonMark setext), not a separator.
  assert.deepEqual(parseMarkdown('Tuning\n---\nText').map((b) => b.type), ['heading', 'paragraph']);
});

test('GFM tables without outer pipes stay tables, under a lead-in line too', () => {
  for (const md of ['Gains [1]:\na | b\n--- | ---\nKp | now\nKd | brakes', 'term | meaning\n:-- | --:\n`x` | y [1]']) {
    const table = parseMarkdown(md, {citations: [{n: 1}]}).find((b) => b.type === 'table');
    assert.ok(table, md);
    assert.equal(table.header.length, 2);
    assert.ok(table.rows.length >= 1);
  }
});
