'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');
const {bookPages, htmlFileCandidates, llmsFullTxt, llmsTxt, markdownCopy, mcpUrl} = require('./llmsTxt');

const docs = [
  {id: 'intro', title: 'Introduction', permalink: '/book/docs/intro', frontMatter: {}, description: 'Where to start.'},
  {id: 'pid', title: 'PID [Control]', permalink: '/book/docs/pid', frontMatter: {}},
  {id: 'extra', title: 'Not in the sidebar', permalink: '/book/docs/extra', frontMatter: {}},
];
const props = {
  siteConfig: {url: 'https://example.org/', title: 'Robots', tagline: 'A small book.'},
  plugins: [{
    name: 'docusaurus-plugin-content-docs',
    content: {loadedVersions: [
      {versionName: 'current', isLast: false, docs: [{...docs[0], title: 'Next intro', permalink: '/book/docs/next/intro'}]},
      {versionName: '1.0', isLast: true, docs,
       sidebars: {main: [{type: 'doc', id: 'intro'}, {type: 'category', label: 'Control', items: [{type: 'doc', id: 'pid'}]}]}},
    ]},
  }],
};

test('the pages are those of the version readers land on, in sidebar order, then the rest', () => {
  const pages = bookPages(props);
  assert.deepEqual(pages.map((p) => p.url), [
    'https://example.org/book/docs/intro', 'https://example.org/book/docs/pid', 'https://example.org/book/docs/extra']);
  assert.equal(pages[0].version, '1.0');
});

test('llms.txt: title, summary, the full file, the MCP endpoint, then every page with its URL', () => {
  const site = {title: 'Robots', tagline: 'A small book.', version: '1.0', locale: 'fr',
                fullUrl: 'https://example.org/book/llms-full.txt', apiUrl: 'https://api.example.org/'};
  const text = llmsTxt(site, bookPages(props));
  const lines = text.split('\n');
  assert.equal(lines[0], '# Robots');
  assert.equal(lines[2], '> A small book.');
  assert.match(text, /\(version 1\.0, language fr\)/);
  assert.match(text, /\[llms-full\.txt\]\(https:\/\/example\.org\/book\/llms-full\.txt\)/);
  assert.match(text, /over MCP \(Streamable HTTP\) at https:\/\/api\.example\.org\/mcp:/);
  assert.deepEqual(lines.slice(lines.indexOf('## Docs') + 2, -1), [
    '- [Introduction](https://example.org/book/docs/intro): Where to start.',
    '- [PID \\[Control\\]](https://example.org/book/docs/pid)',
    '- [Not in the sidebar](https://example.org/book/docs/extra)',
  ]);
});

test('no MCP line for a local API or a relative one', () => {
  assert.equal(mcpUrl('http://127.0.0.1:8787'), null);
  assert.equal(mcpUrl('/api'), null);
  assert.equal(mcpUrl('https://x.example/prod/'), 'https://x.example/prod/mcp');
});

test('llms-full.txt: each section under its heading, linked with its #anchor', () => {
  const pages = [{title: 'PID', url: 'https://example.org/book/docs/pid', sections: [
    {level: 1, id: null, title: 'PID', text: 'Intro text.'},
    {level: 2, id: 'tuning', title: 'Tuning', text: 'Raise Kp.'},
    {level: 3, id: 'kick', title: 'Kick', text: ''},
  ]}];
  assert.equal(llmsFullTxt({title: 'Robots'}, pages), [
    '# Robots', '',
    '## [PID](https://example.org/book/docs/pid)', '', 'Intro text.', '',
    '### [Tuning](https://example.org/book/docs/pid#tuning)', '', 'Raise Kp.', '',
    '#### [Kick](https://example.org/book/docs/pid#kick)', ''].join('\n'));
});

test('the HTML file of a permalink, with and without a trailing slash', () => {
  assert.deepEqual(htmlFileCandidates('/b', '/book/', '/book/docs/pid'),
    [path.join('/b', 'docs/pid', 'index.html'), path.join('/b', 'docs/pid.html')]);
  assert.deepEqual(htmlFileCandidates('/b', '/book/', '/book/docs/pid/')[0], path.join('/b', 'docs/pid', 'index.html'));
  assert.deepEqual(htmlFileCandidates('/b', '/book/fr/', '/book/fr/docs/pid.html'), [path.join('/b', 'docs/pid.html')]);
});

test('a page\'s Markdown copy sits beside its URL: /docs/x -> /docs/x.md, also with a slash', () => {
  assert.deepEqual(markdownCopy('/book/', '/book/docs/pid'), {file: 'docs/pid.md', permalink: '/book/docs/pid.md'});
  assert.deepEqual(markdownCopy('/book/', '/book/docs/pid/'), {file: 'docs/pid.md', permalink: '/book/docs/pid.md'});
  assert.deepEqual(markdownCopy('/book/', '/book/'), {file: 'index.md', permalink: '/book/index.md'});
  assert.deepEqual(markdownCopy('/', '/docs/caf%C3%A9'), {file: 'docs/café.md', permalink: '/docs/caf%C3%A9.md'});
});
