/** Where a citation link goes: an in-site route for the SPA router, or an external href. */

import {safeHref} from './markdown.mjs';

function withBase(pathname, baseUrl) {
  const base = baseUrl.endsWith('/') ? baseUrl : `${baseUrl}/`;
  if (base === '/' || pathname === base.slice(0, -1) || pathname.startsWith(base)) return pathname;
  // Tolerate an API that returns routes without the site's baseUrl.
  return base + pathname.replace(/^\/+/, '');
}

/**
 * `{internal: true, to, pathname, hash}` for a page of this site (navigate with the router),
 * `{internal: false, href}` for another site, or null when the URL is not safe to follow.
 * Citation URLs from the API are site-absolute paths that already include baseUrl.
 */
export function citationTarget(url, {baseUrl = '/', siteUrl = '', origin = ''} = {}) {
  if (typeof url !== 'string' || url.trim() === '') return null;
  const raw = url.trim();
  if (/^[a-z][a-z0-9+.-]*:/i.test(raw) || raw.startsWith('//')) {
    if (!safeHref(raw) || raw.startsWith('//')) return null;
    let parsed;
    try {
      parsed = new URL(raw);
    } catch {
      return null;
    }
    const ownOrigins = [origin, siteUrl && safeOrigin(siteUrl)].filter(Boolean);
    if (!ownOrigins.includes(parsed.origin)) return {internal: false, href: parsed.href};
    return internal(parsed.pathname, parsed.search, parsed.hash, baseUrl);
  }
  const match = /^([^?#]*)(\?[^#]*)?(#.*)?$/.exec(raw.startsWith('/') || raw.startsWith('#') ? raw : `/${raw}`);
  return internal(match[1], match[2] || '', match[3] || '', baseUrl);
}

function safeOrigin(url) {
  try {
    return new URL(url).origin;
  } catch {
    return '';
  }
}

function internal(pathname, search, hash, baseUrl) {
  const path = pathname === '' ? '' : withBase(pathname, baseUrl);
  return {internal: true, pathname: path, hash: hash === '#' ? '' : hash, to: `${path}${search}${hash === '#' ? '' : hash}`};
}

/** The element id a `#hash` points to (Docusaurus ids may hold non-ASCII letters, so decode). */
export function hashToId(hash) {
  if (!hash || hash === '#') return '';
  const raw = hash.startsWith('#') ? hash.slice(1) : hash;
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
}

/** A page's key in `pageLabels`: its path without trailing slash, query or fragment. */
export function pageKey(url) {
  const path = String(url || '').replace(/^[a-z][a-z0-9+.-]*:\/\/[^/]*/i, '').split(/[?#]/)[0];
  return path.replace(/\/+$/, '') || '/';
}

/**
 * "Section — Page" for a sources entry, the page named as the site's sidebar names it
 * (`pageLabels`, from the build) rather than its title; equal names are not repeated.
 */
export function citationLabel(citation, pageLabels = {}) {
  const title = (pageLabels[pageKey(citation?.url)] || citation?.title || '').trim();
  const section = (citation?.section_title || '').trim();
  const pageTitle = (citation?.title || '').trim();
  if (section && title && section !== title && section !== pageTitle) return `${section} — ${title}`;
  return (section === pageTitle ? title : section) || title || citation?.url || '';
}

/**
 * A related topic's or found source's "Page › Section" title (from the API) with the page
 * named as the sidebar names it, when the build knows that name.
 */
export function topicLabel(topic, pageLabels = {}) {
  const title = (topic?.title || '').trim();
  const page = pageLabels[pageKey(topic?.url)];
  if (!page) return title || topic?.url || '';
  const at = title.indexOf(' › ');
  return at === -1 ? page : `${page} › ${title.slice(at + 3)}`;
}
