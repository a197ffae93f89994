'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const {buildManifest, isInside, manifestFile, writeManifest, ManifestError} = require('./manifest');

function doc(id, permalink, extra = {}) {
  return {
    id,
    title: id.split('/').pop(),
    source: `@site/docs/${id}.md`,
    permalink,
    version: 'current',
    frontMatter: {},
    sidebar: 'book',
    ...extra,
  };
}

// Shaped like the postBuild props of Docusaurus 3.10.2 (DOCUSAURUS-RULES.md §3).
function props({trailingSlash, plugins} = {}) {
  const siteConfig = {url: 'https://example.github.io', baseUrl: '/book/', i18n: {defaultLocale: 'en'}};
  if (trailingSlash !== undefined) siteConfig.trailingSlash = trailingSlash;
  return {
    siteConfig,
    baseUrl: '/book/',
    siteDir: '/site',
    outDir: '/site/build/',
    i18n: {currentLocale: 'en', defaultLocale: 'en', locales: ['en']},
    plugins: plugins ?? [
      {name: 'docusaurus-theme-classic', options: {}, content: undefined},
      {
        name: 'docusaurus-plugin-content-docs',
        options: {id: 'default', routeBasePath: 'docs', path: 'docs'},
        content: {
          loadedVersions: [
            {
              versionName: 'current',
              contentPath: '/site/docs',
              docs: [
                doc('intro', '/book/docs/intro', {frontMatter: {title: 'Intro', tags: ['a']}}),
                doc('basics/advanced/README', '/book/docs/basics/advanced/'),
              ],
              drafts: [doc('draft', '/book/docs/draft')],
            },
            {versionName: '1.0', contentPath: '/site/versioned_docs/version-1.0', docs: [doc('intro', '/book/docs/1.0/intro', {version: '1.0'})]},
          ],
        },
      },
      {name: 'docusaurus-plugin-textbook-chat', options: {}, content: undefined},
    ],
  };
}

test('builds the DESIGN.md manifest from every version of the docs plugin, drafts left out', () => {
  const manifest = buildManifest(props());
  assert.deepEqual(Object.keys(manifest), ['version', 'siteUrl', 'baseUrl', 'trailingSlash', 'routeBasePath', 'locale', 'defaultLocale', 'locales', 'docs']);
  assert.deepEqual([manifest.defaultLocale, manifest.locales], ['en', ['en']]);
  assert.equal(manifest.version, 1);
  assert.equal(manifest.siteUrl, 'https://example.github.io');
  assert.equal(manifest.baseUrl, '/book/');
  assert.equal(manifest.trailingSlash, null);
  assert.equal(manifest.routeBasePath, 'docs');
  assert.deepEqual(
    manifest.docs.map((d) => [d.id, d.permalink, d.version]),
    [
      ['intro', '/book/docs/intro', 'current'],
      ['basics/advanced/README', '/book/docs/basics/advanced/', 'current'],
      ['intro', '/book/docs/1.0/intro', '1.0'],
    ],
  );
  assert.deepEqual(manifest.docs[0], {
    source: '@site/docs/intro.md',
    id: 'intro',
    permalink: '/book/docs/intro',
    title: 'intro',
    version: 'current',
    locale: 'en',
    frontMatter: {title: 'Intro', tags: ['a']},
  });
});

test('trailingSlash is passed through when configured', () => {
  assert.equal(buildManifest(props({trailingSlash: true})).trailingSlash, true);
  assert.equal(buildManifest(props({trailingSlash: false})).trailingSlash, false);
});

test('several docs plugin instances all contribute', () => {
  const base = props();
  const docsPlugin = base.plugins[1];
  const second = {
    ...docsPlugin,
    options: {id: 'community', routeBasePath: 'community'},
    content: {loadedVersions: [{versionName: 'current', docs: [doc('help', '/book/community/help')]}]},
  };
  const manifest = buildManifest({...base, plugins: [docsPlugin, second]});
  assert.deepEqual(manifest.docs.map((d) => d.permalink).at(-1), '/book/community/help');
  assert.equal(manifest.routeBasePath, 'docs');
});

test('a site without the docs plugin gets a clear error', () => {
  assert.throws(() => buildManifest(props({plugins: [{name: 'docusaurus-plugin-content-blog', content: {}}]})), (error) => {
    assert.ok(error instanceof ManifestError);
    assert.match(error.message, /no docs plugin \(@docusaurus\/plugin-content-docs\)/);
    assert.match(error.message, /docusaurus\.config\.js/);
    return true;
  });
});

test('manifest file: relative to the site, one per non-default locale', () => {
  const i18n = {currentLocale: 'en', defaultLocale: 'en'};
  assert.equal(manifestFile('.textbook-chat/manifest.json', {siteDir: '/site', i18n}), '/site/.textbook-chat/manifest.json');
  assert.equal(manifestFile('/tmp/m.json', {siteDir: '/site', i18n}), '/tmp/m.json');
  assert.equal(
    manifestFile('.textbook-chat/manifest.json', {siteDir: '/site', i18n: {currentLocale: 'fr', defaultLocale: 'en'}}),
    '/site/.textbook-chat/manifest.fr.json',
  );
});

test('isInside tells whether the manifest would be published', () => {
  assert.equal(isInside('/site/build/m.json', '/site/build/'), true);
  assert.equal(isInside('/site/.textbook-chat/manifest.json', '/site/build/'), false);
  assert.equal(isInside('/site/build-other/m.json', '/site/build'), false);
});

test('writeManifest writes JSON atomically and creates the folder', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tc-manifest-'));
  const file = path.join(dir, 'nested', 'manifest.json');
  await writeManifest(file, {version: 1, docs: []});
  assert.deepEqual(JSON.parse(fs.readFileSync(file, 'utf8')), {version: 1, docs: []});
  assert.deepEqual(fs.readdirSync(path.dirname(file)), ['manifest.json']);
  fs.rmSync(dir, {recursive: true});
});

test('a manifest write failure names the file and the option to change', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tc-manifest-'));
  const blocker = path.join(dir, 'not-a-dir');
  fs.writeFileSync(blocker, 'a file where a folder should be');
  const file = path.join(blocker, 'manifest.json');
  await assert.rejects(writeManifest(file, {}), (error) => {
    assert.ok(error instanceof ManifestError);
    assert.match(error.message, new RegExp(`could not write the build manifest to ${file.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')} \\(E`));
    assert.match(error.message, /"manifestPath"/);
    return true;
  });
  fs.rmSync(dir, {recursive: true});
});
