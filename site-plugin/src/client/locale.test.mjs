import test from 'node:test';
import assert from 'node:assert/strict';
import {localeOfPath, localizedCitationTarget, rootBaseUrl} from './locale.mjs';

const fr = {currentLocale: 'fr', defaultLocale: 'en', locales: ['en', 'fr']};
const en = {...fr, currentLocale: 'en'};

test('the root baseUrl drops the locale segment of a translated build', () => {
  assert.equal(rootBaseUrl('/book/fr/', fr), '/book/');
  assert.equal(rootBaseUrl('/book/', en), '/book/');
  assert.equal(rootBaseUrl('/fr/', fr), '/');
  assert.equal(rootBaseUrl('/book', {}), '/book/');
});

test('the locale of a path is the one whose build serves it', () => {
  assert.equal(localeOfPath('/book/fr/docs/x', '/book/', fr), 'fr');
  assert.equal(localeOfPath('/book/docs/fresh', '/book/', fr), 'en');
  assert.equal(localeOfPath('/elsewhere', '/book/', fr), null);
});

test('a link to the default locale from a translated page is never prefixed twice', () => {
  const options = {baseUrl: '/book/fr/', siteUrl: 'https://x.io', origin: 'https://x.io', i18n: fr};
  assert.deepEqual(localizedCitationTarget('/book/docs/safety#stop', options), {internal: false, href: '/book/docs/safety#stop'});
  assert.deepEqual(localizedCitationTarget('https://x.io/book/docs/a?b#c', options), {internal: false, href: '/book/docs/a?b#c'});
  // Its own locale's pages stay router links.
  const own = localizedCitationTarget('/book/fr/docs/safety#stop', options);
  assert.equal(own.internal, true);
  assert.equal(own.to, '/book/fr/docs/safety#stop');
});

test('from the default locale, a translated page is a page load; a one-locale site is unchanged', () => {
  const options = {baseUrl: '/book/', i18n: en};
  assert.deepEqual(localizedCitationTarget('/book/fr/docs/x#h', options), {internal: false, href: '/book/fr/docs/x#h'});
  assert.equal(localizedCitationTarget('/book/docs/x#h', options).internal, true);
  const single = {baseUrl: '/book/', i18n: {currentLocale: 'en', defaultLocale: 'en', locales: ['en']}};
  assert.equal(localizedCitationTarget('/book/docs/x#h', single).to, '/book/docs/x#h');
  assert.equal(localizedCitationTarget('javascript:alert(1)', options), null);
});

test('the default language is named in the reader\'s language', async () => {
  const {languageName} = await import('./locale.mjs');
  assert.equal(languageName('en', 'fr'), 'anglais');
  assert.equal(languageName('en', 'en'), 'English');
  assert.notEqual(languageName('en', 'ur'), 'English');
  assert.equal(languageName('not a code!', 'fr'), 'not a code!');
});
