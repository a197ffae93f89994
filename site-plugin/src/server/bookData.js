/** What the widget learns from the book at build time: each page's name as the sidebar shows it
 * (for citation labels) and a few page names to suggest example questions. Public values only. */
'use strict';

const DOCS_PLUGIN = 'docusaurus-plugin-content-docs';
const EXAMPLE_COUNT = 3;

/** The version readers land on: the last released one, else the first loaded. */
function mainVersion(content) {
  const versions = content?.loadedVersions ?? [];
  return versions.find((v) => v.isLast) ?? versions[0] ?? null;
}

/** Doc ids in sidebar order with the label each sidebar item gives (categories walked depth-first). */
function sidebarDocs(sidebars) {
  const out = [];
  const walk = (items) => {
    for (const item of items ?? []) {
      if (item.type === 'doc' || item.type === 'ref') out.push({id: item.id, label: item.label});
      if (item.type === 'category') {
        if (item.link?.type === 'doc') out.push({id: item.link.id, label: undefined});
        walk(item.items);
      }
    }
  };
  for (const items of Object.values(sidebars ?? {})) walk(items);
  return out;
}

/** The sidebar's text for a doc, by the rule the theme uses: sidebar_label, item label, title. */
function labelOf(doc, itemLabel) {
  return doc.frontMatter?.sidebar_label ?? itemLabel ?? doc.title;
}

/**
 * {permalink: label} for every doc of every docs plugin and version, where the label differs
 * from the page title (the widget falls back to the title the API sends).
 */
function pageLabels(allContent) {
  const labels = {};
  for (const content of Object.values(allContent?.[DOCS_PLUGIN] ?? {})) {
    for (const version of content?.loadedVersions ?? []) {
      const byId = new Map(version.docs.map((doc) => [doc.id, doc]));
      const items = new Map(sidebarDocs(version.sidebars).map(({id, label}) => [id, label]));
      for (const doc of byId.values()) {
        const label = labelOf(doc, items.get(doc.id));
        if (label && label !== doc.title) labels[doc.permalink.replace(/\/+$/, '') || '/'] = label;
      }
    }
  }
  return labels;
}

/**
 * Page names to ask about on the empty panel: EXAMPLE_COUNT docs spread over the main docs
 * version in sidebar order, leaving out the first (usually the introduction).
 */
function exampleTopics(allContent, count = EXAMPLE_COUNT) {
  const content = allContent?.[DOCS_PLUGIN]?.default ?? Object.values(allContent?.[DOCS_PLUGIN] ?? {})[0];
  const version = mainVersion(content);
  if (!version) return [];
  const byId = new Map(version.docs.map((doc) => [doc.id, doc]));
  const ordered = sidebarDocs(version.sidebars).filter(({id}) => byId.has(id));
  const seen = new Set();
  const docs = (ordered.length ? ordered : version.docs.map((doc) => ({id: doc.id})))
    .filter(({id}) => !seen.has(id) && seen.add(id))
    .map(({id, label}) => labelOf(byId.get(id), label));
  const pool = docs.length > count ? docs.slice(1) : docs;
  if (pool.length <= count) return pool;
  return Array.from({length: count}, (_, i) => pool[Math.floor((i * pool.length) / count)]);
}

module.exports = {pageLabels, exampleTopics, mainVersion, sidebarDocs};
