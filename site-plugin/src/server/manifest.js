/** The build manifest (DESIGN.md contract): built from the docs plugins' loaded content, written atomically. */
'use strict';

const fs = require('node:fs/promises');
const path = require('node:path');

const MANIFEST_VERSION = 1;
const DOCS_PLUGIN_NAME = 'docusaurus-plugin-content-docs';

class ManifestError extends Error {}

/** Loaded docs plugin instances (one per `id`), in config order. */
function findDocsPlugins(plugins) {
  return (plugins || []).filter((plugin) => plugin.name === DOCS_PLUGIN_NAME && plugin.content);
}

/**
 * The docs plugins as `allContentLoaded` sees them (content by plugin id, no options): the
 * shape buildManifest reads, with routeBasePath read back from the last version's path
 * (baseUrl + routeBasePath), so `docusaurus start` writes the manifest too.
 */
function docsPluginsOfContent(allContent, baseUrl) {
  return Object.values(allContent?.[DOCS_PLUGIN_NAME] || {}).map((content) => {
    const last = (content?.loadedVersions || []).find((v) => v.isLast) || content?.loadedVersions?.[0];
    let route = last?.path ?? '';
    if (route.startsWith(baseUrl)) route = route.slice(baseUrl.length);
    route = route.replace(/^\/+|\/+$/g, '');
    return {name: DOCS_PLUGIN_NAME, content, options: {routeBasePath: `/${route}`}}; // as Docusaurus normalises it
  });
}

/** One manifest entry per built doc: every docs plugin instance, every version; drafts are not built. */
function docEntries(docsPlugin, locale) {
  const versions = docsPlugin.content.loadedVersions || [];
  return versions.flatMap((version) =>
    (version.docs || []).map((doc) => ({
      source: doc.source,
      id: doc.id,
      permalink: doc.permalink,
      title: doc.title,
      version: doc.version ?? version.versionName,
      locale,
      frontMatter: doc.frontMatter || {},
    })),
  );
}

/** Pure: postBuild props → manifest object. Throws ManifestError when the site has no docs plugin. */
function buildManifest({siteConfig, plugins, i18n, baseUrl}) {
  const docsPlugins = findDocsPlugins(plugins);
  if (docsPlugins.length === 0) {
    throw new ManifestError(
      'textbook-chat: this site has no docs plugin (@docusaurus/plugin-content-docs), so there is nothing ' +
        'for the chat to answer from. Enable `docs` in the classic preset (or add the docs plugin) in ' +
        'docusaurus.config.js, or remove docusaurus-plugin-textbook-chat from `plugins`.',
    );
  }
  const locale = i18n?.currentLocale ?? siteConfig.i18n?.defaultLocale ?? 'en';
  return {
    version: MANIFEST_VERSION,
    siteUrl: siteConfig.url,
    baseUrl: baseUrl ?? siteConfig.baseUrl,
    // Docusaurus leaves the key out when it is not configured; JSON has no undefined.
    trailingSlash: siteConfig.trailingSlash ?? null,
    routeBasePath: docsPlugins[0].options?.routeBasePath ?? 'docs',
    locale,
    // The indexer reads the other locales' manifests (manifest.<locale>.json) beside this one.
    defaultLocale: i18n?.defaultLocale ?? siteConfig.i18n?.defaultLocale ?? locale,
    locales: i18n?.locales ?? siteConfig.i18n?.locales ?? [locale],
    docs: docsPlugins.flatMap((plugin) => docEntries(plugin, locale)),
  };
}

/** Where the manifest goes: relative to the site; other locales get `manifest.<locale>.json`. */
function manifestFile(manifestPath, {siteDir, i18n}) {
  const file = path.resolve(siteDir, manifestPath);
  if (!i18n || i18n.currentLocale === i18n.defaultLocale) return file;
  const ext = path.extname(file);
  return `${file.slice(0, file.length - ext.length)}.${i18n.currentLocale}${ext || '.json'}`;
}

/** True when `file` would be published with the site (inside the build folder). */
function isInside(file, dir) {
  const rel = path.relative(path.resolve(dir), path.resolve(file));
  return rel !== '' && !rel.startsWith('..') && !path.isAbsolute(rel);
}

/** Writes through a temporary file so a failed build never leaves half a manifest. */
async function writeManifest(file, manifest) {
  const tmp = `${file}.${process.pid}.tmp`;
  try {
    await fs.mkdir(path.dirname(file), {recursive: true});
    await fs.writeFile(tmp, `${JSON.stringify(manifest, null, 2)}\n`, 'utf8');
    await fs.rename(tmp, file);
  } catch (error) {
    await fs.rm(tmp, {force: true}).catch(() => {});
    throw new ManifestError(
      `textbook-chat: could not write the build manifest to ${file} (${error.code || error.message}). ` +
        'Make sure that folder is writable, or set the plugin option "manifestPath" to another file.',
    );
  }
  return file;
}

module.exports = {
  MANIFEST_VERSION,
  ManifestError,
  buildManifest,
  docsPluginsOfContent,
  findDocsPlugins,
  isInside,
  manifestFile,
  writeManifest,
};
