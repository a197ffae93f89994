'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const {normalizePluginOptions} = require('@docusaurus/utils-validation');
const plugin = require('./index');

function site() {
  const siteDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tc-site-'));
  const props = {
    siteDir,
    outDir: path.join(siteDir, 'build') + path.sep,
    baseUrl: '/book/',
    siteConfig: {url: 'https://example.org', baseUrl: '/book/'},
    i18n: {currentLocale: 'en', defaultLocale: 'en'},
    plugins: [
      {
        name: 'docusaurus-plugin-content-docs',
        options: {routeBasePath: 'docs', path: 'docs'},
        content: {
          loadedVersions: [
            {
              versionName: 'current',
              contentPath: path.join(siteDir, 'docs'),
              docs: [{id: 'intro', title: 'Intro', source: '@site/docs/intro.md', permalink: '/book/docs/intro', version: 'current', frontMatter: {}}],
            },
          ],
        },
      },
    ],
  };
  return {siteDir, props};
}

const options = (o = {}) => plugin.validateOptions({validate: normalizePluginOptions, options: o});

test('the plugin exposes its theme and only public global data', async () => {
  const instance = plugin({siteDir: '/x'}, options({apiUrl: 'https://api.example.org/'}));
  assert.equal(instance.name, 'docusaurus-plugin-textbook-chat');
  assert.ok(fs.existsSync(path.join(instance.getThemePath(), 'TextbookChat', 'index.jsx')));
  assert.ok(fs.existsSync(path.join(instance.getThemePath(), 'Root', 'index.jsx')));
  let data;
  await instance.contentLoaded({actions: {setGlobalData: (d) => (data = d)}});
  assert.equal(data.apiUrl, 'https://api.example.org');
  assert.equal(data.maxSelectionChars, 8000);
  assert.equal('indexer' in data || 'manifestPath' in data, false);
});

test('postBuild writes the manifest outside the build folder by default', async () => {
  const {siteDir, props} = site();
  await plugin({siteDir}, options()).postBuild(props);
  const manifest = JSON.parse(fs.readFileSync(path.join(siteDir, '.textbook-chat', 'manifest.json'), 'utf8'));
  assert.equal(manifest.docs.length, 1);
  assert.equal(manifest.docs[0].permalink, '/book/docs/intro');
  fs.rmSync(siteDir, {recursive: true});
});

test('postBuild writes llms.txt, llms-full.txt and each page\'s Markdown copy, unless llmsTxt is false', async () => {
  const {siteDir, props} = site();
  const page = path.join(props.outDir, 'docs', 'intro', 'index.html');
  fs.mkdirSync(path.dirname(page), {recursive: true});
  fs.writeFileSync(page, '<article><div class="theme-doc-markdown markdown"><header><h1>Intro</h1></header>' +
    '<p>Hello.</p><h2 class="anchor" id="first-steps">First steps<a href="#first-steps" class="hash-link">\u200b</a></h2>' +
    '<p>Step one.</p><!-- --><table><thead><tr><th>Gain</th><th>Effect</th></tr></thead>' +
    '<tbody><tr><td>Kp</td><td>faster</td></tr></tbody></table></div><footer></footer></article>');
  // theme-mermaid draws diagrams in the browser: the HTML has none, the Markdown has it
  fs.mkdirSync(path.join(siteDir, 'docs'));
  fs.writeFileSync(path.join(siteDir, 'docs', 'intro.md'),
    '# Intro\n\nHello.\n\n## First steps\n\nStep one.\n\n```mermaid\ngraph LR\n  A --> B\n```\n\n' +
    '| Gain | Effect |\n|---|---|\n| Kp | faster |\n');
  await plugin({siteDir}, options()).postBuild(props);
  const list = fs.readFileSync(path.join(props.outDir, 'llms.txt'), 'utf8');
  assert.match(list, /^- \[Intro\]\(https:\/\/example\.org\/book\/docs\/intro\) \(\[Markdown\]\(https:\/\/example\.org\/book\/docs\/intro\.md\)\)$/m);
  const full = fs.readFileSync(path.join(props.outDir, 'llms-full.txt'), 'utf8');
  const section = 'Step one.\n\n```mermaid\ngraph LR\n  A --> B\n```\n\n| Gain | Effect |\n| --- | --- |\n| Kp | faster |\n';
  assert.ok(full.endsWith(`### [First steps](https://example.org/book/docs/intro#first-steps)\n\n${section}`), full);
  const copy = fs.readFileSync(path.join(props.outDir, 'docs', 'intro.md'), 'utf8');
  assert.equal(copy, '# [Intro](https://example.org/book/docs/intro)\n\nHello.\n\n' +
    `## [First steps](https://example.org/book/docs/intro#first-steps)\n\n${section}`);

  const off = site();
  await plugin({siteDir: off.siteDir}, options({llmsTxt: false})).postBuild(off.props);
  assert.equal(fs.existsSync(path.join(off.props.outDir, 'llms.txt')), false);
  fs.rmSync(siteDir, {recursive: true});
  fs.rmSync(off.siteDir, {recursive: true});
});

test('postBuild runs the indexer when asked and fails the build with its message', async () => {
  const {siteDir, props} = site();
  const cli = path.join(siteDir, 'fake-cli');
  fs.writeFileSync(
    cli,
    `#!${process.execPath}\nconst a = process.argv.slice(2);\n` +
      "require('fs').writeFileSync(__dirname + '/argv.json', JSON.stringify(a));\n" +
      "if (a.includes('--fail')) { console.error('Qdrant at http://q:6333 refused the connection'); process.exit(1); }\n",
    {mode: 0o755},
  );
  await plugin({siteDir}, options({indexer: {run: true, command: cli}})).postBuild(props);
  const argv = JSON.parse(fs.readFileSync(path.join(siteDir, 'argv.json'), 'utf8'));
  assert.deepEqual(argv, ['index', path.join(siteDir, 'docs'), '--manifest', path.join(siteDir, '.textbook-chat', 'manifest.json')]);
  await assert.rejects(
    plugin({siteDir}, options({indexer: {run: true, command: cli, args: ['--fail']}})).postBuild(props),
    /Qdrant at http:\/\/q:6333 refused the connection/,
  );
  fs.rmSync(siteDir, {recursive: true});
});

test('a multi-locale build runs the indexer once, after the last locale, on the default manifest', async () => {
  const {siteDir, props} = site();
  const cli = path.join(siteDir, 'fake-cli');
  fs.writeFileSync(
    cli,
    `#!${process.execPath}\nconst fs = require('fs');\n` +
      "fs.appendFileSync(__dirname + '/runs.txt', JSON.stringify(process.argv.slice(2)) + '\\n');\n",
    {mode: 0o755},
  );
  const i18n = {defaultLocale: 'en', locales: ['en', 'fr']};
  for (const locale of ['en', 'fr']) {
    const localized = {...props, i18n: {...i18n, currentLocale: locale}};
    await plugin({siteDir}, options({indexer: {run: true, command: cli}})).postBuild(localized);
  }
  const runs = fs.readFileSync(path.join(siteDir, 'runs.txt'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
  assert.equal(runs.length, 1);
  assert.equal(runs[0][3], path.join(siteDir, '.textbook-chat', 'manifest.json'));
  assert.ok(fs.existsSync(path.join(siteDir, '.textbook-chat', 'manifest.fr.json')));
  fs.rmSync(siteDir, {recursive: true});
});

test('swizzle config marks the widget safe to eject and wrap', () => {
  assert.deepEqual(plugin.getSwizzleConfig().components.TextbookChat.actions, {eject: 'safe', wrap: 'safe'});
});

test('`docusaurus start` (allContentLoaded outside a production build) writes the same manifest as postBuild', async () => {
  const {siteDir, props} = site();
  props.plugins[0].content.loadedVersions[0].isLast = true;
  props.plugins[0].content.loadedVersions[0].path = '/book/docs';
  props.plugins[0].options.routeBasePath = '/docs'; // what Docusaurus's validation makes of 'docs'
  const context = {siteDir, baseUrl: props.baseUrl, siteConfig: props.siteConfig, i18n: props.i18n};
  const allContent = {'docusaurus-plugin-content-docs': {default: props.plugins[0].content}};
  const file = path.join(siteDir, '.textbook-chat', 'manifest.json');
  const before = process.env.NODE_ENV;
  const opts = options();
  try {
    process.env.NODE_ENV = 'production';
    await plugin(context, opts).allContentLoaded({allContent, actions: {setGlobalData() {}}});
    assert.equal(fs.existsSync(file), false, 'a production build leaves it to postBuild');
    delete process.env.NODE_ENV; // `docusaurus start` does not set it
    await plugin(context, opts).allContentLoaded({allContent, actions: {setGlobalData() {}}});
    const started = fs.readFileSync(file, 'utf8');
    await plugin(context, opts).postBuild(props);
    assert.equal(started, fs.readFileSync(file, 'utf8'));
    assert.equal(JSON.parse(started).routeBasePath, '/docs');
  } finally {
    if (before === undefined) delete process.env.NODE_ENV;
    else process.env.NODE_ENV = before;
    fs.rmSync(siteDir, {recursive: true});
  }
});
