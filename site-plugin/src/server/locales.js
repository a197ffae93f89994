/** Which locales one `docusaurus build` builds, so the indexer runs once after the last of them. */
'use strict';

/**
 * The locales this build process builds, in Docusaurus's order (default locale first):
 * the `--locale`/`-l` values of the command line, else every locale of the i18n config.
 */
function localesToBuild(i18n, argv = process.argv) {
  const asked = [];
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i];
    if (arg.startsWith('--locale=')) asked.push(arg.slice('--locale='.length));
    else if (arg === '--locale' || arg === '-l') {
      while (i + 1 < argv.length && !argv[i + 1].startsWith('-')) asked.push(argv[(i += 1)]);
    }
  }
  const locales = asked.length ? asked : i18n?.locales?.length ? i18n.locales : [i18n?.currentLocale ?? 'en'];
  const first = i18n?.defaultLocale;
  return locales.includes(first) ? [first, ...locales.filter((l) => l !== first)] : [...locales];
}

// Docusaurus builds each locale with fresh plugin instances in the same process.
const BUILT = Symbol.for('docusaurus-plugin-textbook-chat.builtLocales');

/**
 * Records that `i18n.currentLocale` finished; true once every locale of this build has,
 * i.e. in the postBuild of the last one (a build of one locale: right away).
 */
function lastLocaleOfBuild(i18n, argv = process.argv, store = globalThis) {
  const expected = localesToBuild(i18n, argv);
  const built = (store[BUILT] ??= new Set());
  built.add(i18n?.currentLocale ?? expected[0]);
  const done = expected.every((locale) => built.has(locale));
  if (done) built.clear();
  return done;
}

module.exports = {lastLocaleOfBuild, localesToBuild};
