/** Plugin factory: wires Docusaurus lifecycle hooks to the options, manifest and indexer modules. */
'use strict';

const fs = require('node:fs');
const path = require('node:path');
const {publicConfig, validateOptions} = require('./options');
const {
  buildManifest,
  docsPluginsOfContent,
  findDocsPlugins,
  isInside,
  manifestFile,
  writeManifest,
} = require('./manifest');
const {runIndexer} = require('./indexer');
const {exampleTopics, pageLabels} = require('./bookData');
const {lastLocaleOfBuild} = require('./locales');
const {LLMS_FULL_TXT, LLMS_TXT, writeLlmsTxt} = require('./llmsTxt');

const PLUGIN_NAME = 'docusaurus-plugin-textbook-chat';

/** Folder the first docs plugin reads Markdown from (the indexer's DOCS argument). */
function docsDirOf(props) {
  const [docsPlugin] = findDocsPlugins(props.plugins);
  const current = docsPlugin.content.loadedVersions?.find((v) => v.versionName === 'current');
  return current?.contentPath ?? path.resolve(props.siteDir, docsPlugin.options?.path ?? 'docs');
}

function pluginTextbookChat(context, options) {
  return {
    name: PLUGIN_NAME,

    getThemePath() {
      return path.resolve(__dirname, '../theme');
    },

    async contentLoaded({actions}) {
      // Read in the browser with usePluginData(PLUGIN_NAME): public values only, never a key.
      actions.setGlobalData(publicConfig(options, context.i18n?.currentLocale));
    },

    // Docusaurus >= 3.6; merged into the global data above. Page names as the sidebar shows them.
    // Also runs on `docusaurus start` (and again when a page changes): the manifest is written
    // here too, so `textbook-chat index` / `serve --watch` find exact permalinks beside the site
    // without a build. A build's postBuild writes it again from the final props.
    async allContentLoaded({allContent, actions}) {
      actions.setGlobalData({pageLabels: pageLabels(allContent), exampleTopics: exampleTopics(allContent)});
      if (process.env.NODE_ENV === 'production') return; // `docusaurus build`: postBuild writes it
      const baseUrl = context.baseUrl ?? context.siteConfig?.baseUrl ?? '/';
      const plugins = docsPluginsOfContent(allContent, baseUrl);
      const manifest = buildManifest({siteConfig: context.siteConfig, plugins, i18n: context.i18n, baseUrl});
      const file = manifestFile(options.manifestPath, {siteDir: context.siteDir, i18n: context.i18n});
      await writeManifest(file, manifest);
    },

    async postBuild(props) {
      const manifest = buildManifest(props);
      const file = manifestFile(options.manifestPath, props);
      if (isInside(file, props.outDir)) {
        console.warn(
          `[textbook-chat] the build manifest ${file} is inside the build folder and will be published; ` +
            'set "manifestPath" outside it unless you mean to publish it.',
        );
      }
      await writeManifest(file, manifest);
      console.log(`[textbook-chat] wrote the build manifest (${manifest.docs.length} docs) to ${file}`);
      if (options.llmsTxt) {
        const wrote = await writeLlmsTxt(props, {apiUrl: options.apiUrl});
        console.log(
          `[textbook-chat] wrote ${LLMS_TXT} and ${LLMS_FULL_TXT} (${wrote.pages} pages, ${wrote.sections} sections) ` +
            `to ${props.outDir}; the plugin option llmsTxt: false turns this off`,
        );
      }
      // Once per build, after the last locale: the indexer reads every locale's manifest
      // beside the default locale's one and indexes every version and locale in one run.
      if (options.indexer.run && lastLocaleOfBuild(props.i18n)) {
        const main = manifestFile(options.manifestPath, {siteDir: props.siteDir});
        await runIndexer({
          command: options.indexer.command,
          args: options.indexer.args,
          docsDir: docsDirOf(props),
          manifestPath: fs.existsSync(main) ? main : file,
          cwd: props.siteDir,
        });
      }
    },
  };
}

/** `npm run swizzle docusaurus-plugin-textbook-chat TextbookChat -- --eject|--wrap` is supported. */
function getSwizzleConfig() {
  return {
    components: {
      TextbookChat: {
        actions: {eject: 'safe', wrap: 'safe'},
        description: 'The chat widget: floating button, panel and "Ask about this" popover.',
      },
    },
  };
}

module.exports = pluginTextbookChat;
module.exports.default = pluginTextbookChat;
module.exports.validateOptions = validateOptions;
module.exports.getSwizzleConfig = getSwizzleConfig;
module.exports.PLUGIN_NAME = PLUGIN_NAME;
