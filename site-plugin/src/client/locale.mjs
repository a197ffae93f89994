/** Citation links on a translated site: a page of another locale's build is a full page load. */

import {citationTarget} from './citations.mjs';

/** The site's baseUrl without the locale segment Docusaurus adds for a non-default locale. */
export function rootBaseUrl(baseUrl = '/', {currentLocale, defaultLocale} = {}) {
  const base = baseUrl.endsWith('/') ? baseUrl : `${baseUrl}/`;
  if (!currentLocale || currentLocale === defaultLocale) return base;
  const suffix = `${currentLocale}/`;
  return base.endsWith(suffix) && base.length > suffix.length ? base.slice(0, -suffix.length) : base;
}

/** Which locale's build serves a site-absolute path (the default locale when none matches). */
export function localeOfPath(pathname, root, {locales = [], defaultLocale} = {}) {
  if (!pathname.startsWith(root)) return null;
  const rest = pathname.slice(root.length);
  return locales.find((l) => l !== defaultLocale && (rest === l || rest.startsWith(`${l}/`))) ?? defaultLocale;
}

/**
 * citationTarget for a site with locales (`i18n` from useDocusaurusContext()): a link into
 * another locale is left as the site-absolute path it is (never prefixed with this locale's
 * baseUrl) and opened as a page load, since this locale's router cannot render it.
 */
export function localizedCitationTarget(url, {i18n, ...options} = {}) {
  const target = citationTarget(url, options);
  if (!target || !i18n?.locales || i18n.locales.length < 2 || typeof url !== 'string') return target;
  const root = rootBaseUrl(options.baseUrl, i18n);
  const raw = url.trim();
  let path = raw;
  if (/^[a-z][a-z0-9+.-]*:/i.test(raw)) {
    if (target.internal === false) return target;
    path = new URL(raw).pathname + new URL(raw).search + new URL(raw).hash;
  }
  const pathname = path.split(/[?#]/)[0];
  const locale = localeOfPath(pathname, root, i18n);
  if (locale === null || locale === i18n.currentLocale) return target;
  return {internal: false, href: path};
}

/** A language's name in the reader's language ("انگریزی" for en on an Urdu page), else its code. */
export function languageName(code, inLocale) {
  try {
    return new Intl.DisplayNames([inLocale || code], {type: 'language'}).of(code) || code;
  } catch {
    return code;
  }
}
