/**
 * Evaluate a docusaurus.config.* the way `docusaurus build` loads it, with the site's own
 * installed modules, and print the settings the indexer needs as one JSON line.
 *
 * Usage: node read_config.cjs SITE_DIR CONFIG_FILE
 * Loader, first found from the site's node_modules: @docusaurus/utils `loadFreshModule` (what
 * @docusaurus/core calls: jiti, so .ts works), else the site's `jiti`, else (.js/.cjs/.mjs
 * only) Node's own import(). Exit 3 with a reason when none can load the file; exit 4 when the
 * config throws.
 */
'use strict';

const path = require('node:path');
const {createRequire} = require('node:module');
const {pathToFileURL} = require('node:url');

const [siteDir, configFile] = process.argv.slice(2);
const siteRequire = createRequire(path.join(path.resolve(siteDir), 'package.json'));

function loader() {
  try {
    const {loadFreshModule} = siteRequire('@docusaurus/utils');
    if (typeof loadFreshModule === 'function') return {name: '@docusaurus/utils', load: loadFreshModule};
  } catch {}
  try {
    const jiti = siteRequire('jiti');
    const create = jiti.createJiti || jiti.default || jiti;
    const instance = create(configFile, {interopDefault: true, requireCache: false});
    const load = instance.import ? (file) => instance.import(file, {default: true}) : (file) => instance(file);
    return {name: 'jiti', load};
  } catch {}
  if (/\.(c?js|mjs)$/.test(configFile)) {
    return {
      name: 'node',
      load: async (file) => {
        const mod = await import(pathToFileURL(file).href);
        return mod.default ?? mod;
      },
    };
  }
  return null;
}

const CLASSIC = /(^|[/\\@])(preset-classic|classic)$/;
const DOCS = /(^|[/\\@])((docusaurus-)?plugin-content-docs|content-docs)$/;

function entry(item) {
  // 'name' | ['name', options] | [fn, options] | fn | false/null (disabled)
  if (!item) return null;
  if (Array.isArray(item)) return {name: typeof item[0] === 'string' ? item[0] : '', options: item[1] || {}};
  return {name: typeof item === 'string' ? item : '', options: {}};
}

/** Every docs plugin instance's options, in the order Docusaurus loads them (presets' plugins
 * before `plugins`); the indexer picks the instance of the folder it indexes. */
function docsInstances(config) {
  const found = [];
  for (const preset of config.presets || []) {
    const item = entry(preset);
    if (item && CLASSIC.test(item.name.replace(/\/index\.js$/, '')) && item.options.docs !== false) {
      found.push(item.options.docs || {});
    }
  }
  for (const plugin of config.plugins || []) {
    const item = entry(plugin);
    if (item && DOCS.test(item.name.replace(/\/(lib\/)?index\.js$/, ''))) found.push(item.options);
  }
  return found.map((o) => ({id: o.id ?? null, path: o.path ?? null, routeBasePath: o.routeBasePath ?? null}));
}

async function main() {
  const chosen = loader();
  if (!chosen) {
    const kind = path.extname(configFile);
    console.error(`neither @docusaurus/utils nor jiti is installed in ${siteDir}, and Node cannot load a ${kind} config by itself`);
    process.exit(3);
  }
  let config;
  try {
    config = await chosen.load(configFile);
    if (typeof config === 'function') config = await config();
    config = await config;
  } catch (error) {
    const cause = error && error.cause ? ` (${error.cause.message || error.cause})` : '';
    console.error(`${(error && error.message) || error}${cause}`.split('\n')[0]);
    process.exit(4);
  }
  const docs = docsInstances(config || {});
  const out = {
    loader: chosen.name,
    title: config.title ?? null,
    url: config.url ?? null,
    baseUrl: config.baseUrl ?? null,
    trailingSlash: config.trailingSlash ?? null,
    markdownFormat: config.markdown?.format ?? null,
    docsInstances: docs,
  };
  process.stdout.write(`${JSON.stringify(out)}\n`);
}

main();
