import test from 'node:test';
import assert from 'node:assert/strict';
import {answerAsMarkdown} from './copy.mjs';

const citations = [
  {n: 1, title: 'PID control', section_title: 'Tuning', url: '/book/docs/pid#tuning'},
  {n: 2, title: 'Motors', section_title: 'Back-EMF [note]', url: '/book/docs/motors#back-emf'},
];
const absolute = (url) => (url.startsWith('/') ? `https://example.org${url}` : null);
const label = (c) => `${c.section_title} — ${c.title}`;

test('markers become links to the cited sections, and the sources follow', () => {
  const md = answerAsMarkdown('Tune Kp first [1]. Both matter [1, 2].\n\n- a list item [2]', citations, {absolute, label});
  assert.equal(md, [
    'Tune Kp first [1](https://example.org/book/docs/pid#tuning). Both matter [1](https://example.org/book/docs/pid#tuning)[2](https://example.org/book/docs/motors#back-emf).',
    '',
    '- a list item [2](https://example.org/book/docs/motors#back-emf)',
    '',
    'Sources:',
    '',
    '1. [Tuning — PID control](https://example.org/book/docs/pid#tuning)',
    '2. [Back-EMF \\[note\\] — Motors](https://example.org/book/docs/motors#back-emf)',
    '',
  ].join('\n'));
});

test('code, unknown markers and a book link keep their text', () => {
  const md = answerAsMarkdown('See [1](https://x.org/a) and [7].\n\n```python\nxs[1] = 2\n```', citations, {absolute, label});
  assert.match(md, /^See \[1\]\(https:\/\/x\.org\/a\) and \[7\]\./);
  assert.match(md, /```python\nxs\[1\] = 2\n```/);
});

test('no citations: the text alone; an unsafe citation URL is left out', () => {
  assert.equal(answerAsMarkdown('The book does not cover this.', []), 'The book does not cover this.\n');
  const md = answerAsMarkdown('Hm [1].', [{n: 1, title: 'x', url: 'javascript:alert(1)'}], {absolute, label});
  assert.equal(md, 'Hm [1].\n');
});
