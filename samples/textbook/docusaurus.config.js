// Docusaurus config for the textbook-chat sample textbook.
// Kept minimal on purpose: the indexer reads baseUrl, routeBasePath,
// trailingSlash and markdown.format from here.
const {themes: prismThemes} = require('prism-react-renderer');

/** @type {import('@docusaurus/types').Config} */
const config = {
  title: 'Signals, Sensors and Control',
  tagline: 'A practical introduction to robotics',
  url: 'https://example.github.io',
  baseUrl: '/textbook-chat-sample/',
  onBrokenLinks: 'throw',
  i18n: {defaultLocale: 'en', locales: ['en']},
  presets: [
    [
      'classic',
      /** @type {import('@docusaurus/preset-classic').Options} */
      ({
        docs: {
          routeBasePath: 'docs',
          sidebarPath: require.resolve('./sidebars.js'),
        },
        blog: false,
        theme: {customCss: require.resolve('./src/css/custom.css')},
      }),
    ],
  ],
  themeConfig: {
    navbar: {
      title: 'Signals, Sensors and Control',
      items: [{type: 'docSidebar', sidebarId: 'book', position: 'left', label: 'Book'}],
    },
    footer: {style: 'dark', copyright: 'Sample textbook for textbook-chat.'},
    prism: {theme: prismThemes.github, darkTheme: prismThemes.dracula, additionalLanguages: ['bash', 'yaml']},
  },
};

module.exports = config;
