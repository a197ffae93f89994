'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const {blockText, pageSections} = require('./pageSections');

// The shape Docusaurus 3 (theme-classic) renders a doc in, trimmed: the title header, a
// paragraph, headings with their hash links, a list, a Prism code block with its copy button.
const PAGE = `<html><body><nav>Menu <h2 id="nav">not the doc</h2></nav><article>
<nav class="theme-doc-breadcrumbs">Home</nav>
<div class="theme-doc-markdown markdown"><header><h1>PID Control</h1></header>
<p>A controller &amp; its <strong>three</strong> terms.</p>
<h2 class="anchor anchorWithStickyNavbar_abc" id="tuning">Tuning the <code>Kp</code> gain<a href="#tuning" class="hash-link" aria-label="Direct link to Tuning" title="Direct link to Tuning">\u200b</a></h2>
<ul><li>Start low.</li><li>Raise it until it oscillates.</li></ul>
<h3 class="anchor" id="derivative-kick">Derivative kick<a href="#derivative-kick" class="hash-link">\u200b</a></h3>
<div class="codeBlockContainer"><pre class="prism-code language-python"><code><span class="token-line"><span class="token keyword">def</span> d(e):<br></span><span class="token-line">    return e &lt; 0<br></span></code></pre><div class="buttonGroup"><button aria-label="Copy code">Copy<svg></svg></button></div></div>
<h4>No id here</h4><p>Still text.</p>
<table><thead><tr><th>Gain</th><th>Effect</th></tr></thead><tbody><tr><td>Kp</td><td>faster</td></tr></tbody></table>
</div><footer class="theme-doc-footer">Edit this page</footer></article></body></html>`;

test('a doc page becomes its sections: heading ids and titles, and the text under each', () => {
  const sections = pageSections(PAGE);
  assert.deepEqual(sections.map(({level, id, title}) => ({level, id, title})), [
    {level: 1, id: null, title: 'PID Control'},
    {level: 2, id: 'tuning', title: 'Tuning the Kp gain'},
    {level: 3, id: 'derivative-kick', title: 'Derivative kick'},
  ]);
  assert.equal(sections[0].text, 'A controller & its three terms.');
  assert.equal(sections[1].text, '- Start low.\n- Raise it until it oscillates.');
  assert.equal(sections[2].text,
    '```python\ndef d(e):\n    return e < 0\n```\n\nNo id here\n\nStill text.\n\n| Gain | Effect |\n| --- | --- |\n| Kp | faster |');
});

test('a page that is not a doc has no sections', () => {
  assert.deepEqual(pageSections('<html><body><main><h2 id="x">Blog</h2></main></body></html>'), []);
});

test('code keeps its lines and indentation; entities are decoded once', () => {
  assert.equal(blockText('<pre><code><span class="token-line">if x:</span><span class="token-line">  y = 1</span></code></pre>'),
    '```\nif x:\n  y = 1\n```');
  assert.equal(blockText('<p>&amp;lt; is &#60; and &#x3E;</p>'), '&lt; is < and >');
});

test('a table keeps its header row, the |---| row and its cells, pipes escaped', () => {
  assert.equal(blockText('<p>Before.</p><table><tbody><tr><td>a|b</td><td><code>x</code></td></tr>' +
    '<tr><td>c</td></tr></tbody></table><p>After.</p>'),
  'Before.\n\n| a\\|b | x |\n| --- | --- |\n| c |  |\n\nAfter.');
});
