'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const {mermaidBlocks, withDiagrams} = require('./diagrams');

const SOURCE = `---
title: The cluster
---

Intro.

\`\`\`mermaid
graph TD
  A --> B
\`\`\`

## The cluster

The cluster looks as follows. Each box is a **server**/VM.

\`\`\`mermaid
graph LR
    LB[Load balancer] -->|HTTP :80| WEB[Web server]
\`\`\`

Orders are written by the web server only.

\`\`\`python
# not a heading
print("x")
\`\`\`

### Later

\`\`\`\`md
\`\`\`mermaid
graph fenced inside another fence
\`\`\`
\`\`\`\`
`;

test('each mermaid block of the Markdown, with the heading above it and the line before it', () => {
  assert.deepEqual(mermaidBlocks(SOURCE), [
    {heading: 0, after: 'Intro.', source: 'graph TD\n  A --> B'},
    {heading: 1, after: 'The cluster looks as follows. Each box is a server/VM.',
     source: 'graph LR\n    LB[Load balancer] -->|HTTP :80| WEB[Web server]'},
  ]);
});

test('a diagram goes back after its paragraph in its section, else at the section end', () => {
  const sections = [
    {level: 1, id: null, title: 'The cluster', text: 'Intro.'},
    {level: 2, id: 'the-cluster', title: 'The cluster',
     text: 'The cluster looks as follows. Each box is a server/VM.\n\nOrders are written by the web server only.'},
    {level: 3, id: 'later', title: 'Later', text: ''},
  ];
  const out = withDiagrams(sections, [...mermaidBlocks(SOURCE), {heading: 2, after: 'gone', source: 'graph X'}]);
  assert.equal(out[0].text, 'Intro.\n\n```mermaid\ngraph TD\n  A --> B\n```');
  assert.equal(out[1].text, 'The cluster looks as follows. Each box is a server/VM.\n\n' +
    '```mermaid\ngraph LR\n    LB[Load balancer] -->|HTTP :80| WEB[Web server]\n```\n\n' +
    'Orders are written by the web server only.');
  assert.equal(out[2].text, '```mermaid\ngraph X\n```');
  assert.equal(sections[1].text.includes('mermaid'), false); // the input is not changed
});
