'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const {lastLocaleOfBuild, localesToBuild} = require('./locales');

const i18n = (currentLocale) => ({currentLocale, defaultLocale: 'en', locales: ['fr', 'en', 'ur']});

test('every configured locale is built, the default first, unless --locale picks some', () => {
  assert.deepEqual(localesToBuild(i18n('en'), ['node', 'docusaurus', 'build']), ['en', 'fr', 'ur']);
  assert.deepEqual(localesToBuild(i18n('en'), ['docusaurus', 'build', '--locale', 'ur']), ['ur']);
  assert.deepEqual(localesToBuild(i18n('en'), ['docusaurus', 'build', '-l', 'ur', 'en', '--out-dir', 'x']), ['en', 'ur']);
  assert.deepEqual(localesToBuild(i18n('en'), ['docusaurus', 'build', '--locale=fr']), ['fr']);
  assert.deepEqual(localesToBuild({currentLocale: 'en'}, []), ['en']);
});

test('the indexer runs once per build: after the last locale, not after each', () => {
  const store = {};
  const argv = ['docusaurus', 'build'];
  assert.deepEqual(['en', 'fr', 'ur'].map((l) => lastLocaleOfBuild(i18n(l), argv, store)), [false, false, true]);
  // A second build in the same process starts over.
  assert.deepEqual(['en', 'fr', 'ur'].map((l) => lastLocaleOfBuild(i18n(l), argv, store)), [false, false, true]);
  assert.equal(lastLocaleOfBuild(i18n('ur'), ['docusaurus', 'build', '--locale', 'ur'], {}), true);
  assert.equal(lastLocaleOfBuild({currentLocale: 'en', defaultLocale: 'en', locales: ['en']}, argv, {}), true);
});
