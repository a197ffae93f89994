/**
 * llms.txt and llms-full.txt (the llms.txt proposal, llmstxt.org), written into each locale's
 * build folder: the book's title and summary, every page of the version readers land on with its
 * exact URL and its Markdown copy, and in the full file each section's text under its heading,
 * linked with its #anchor. Each page's Markdown copy (`<page>.md`, beside the page's URL) is
 * that page's part of the full file.
 */
'use strict';

const fs = require('node:fs/promises');
const path = require('node:path');
const {findDocsPlugins} = require('./manifest');
const {mainVersion, sidebarDocs} = require('./bookData');
const {isLoopbackUrl} = require('./options');
const {pageSections} = require('./pageSections');
const {mermaidBlocks, withDiagrams} = require('./diagrams');

const LLMS_TXT = 'llms.txt';
const LLMS_FULL_TXT = 'llms-full.txt';

/** The site's absolute URL for a permalink (permalinks already hold the baseUrl). */
function absoluteUrl(siteUrl, permalink) {
  return `${String(siteUrl ?? '').replace(/\/+$/, '')}${permalink}`;
}

/** A page's Markdown copy: its path under the build folder and its permalink (`/docs/x` -> `/docs/x.md`). */
function markdownCopy(baseUrl, permalink) {
  const rel = decodeURI(permalink.startsWith(baseUrl) ? permalink.slice(baseUrl.length) : permalink.replace(/^\/+/, ''))
    .replace(/\/+$/, '')
    .replace(/\.html?$/, '');
  const file = `${rel || 'index'}.md`;
  return {file, permalink: `${baseUrl}${encodeURI(file)}`};
}

/** The built HTML file of a permalink under outDir, as the static host serves it. */
function htmlFileCandidates(outDir, baseUrl, permalink) {
  const rel = decodeURI(permalink.startsWith(baseUrl) ? permalink.slice(baseUrl.length) : permalink.replace(/^\/+/, ''));
  const trimmed = rel.replace(/\/+$/, '');
  if (/\.html?$/.test(trimmed)) return [path.join(outDir, trimmed)];
  return [path.join(outDir, trimmed, 'index.html'), path.join(outDir, `${trimmed}.html`)];
}

/**
 * The pages of the version readers land on (each docs plugin's last version), in sidebar order
 * then the rest: [{title, url, permalink, description, version}].
 */
function bookPages({plugins, siteConfig}) {
  const pages = [];
  const seen = new Set();
  for (const plugin of findDocsPlugins(plugins)) {
    const version = mainVersion(plugin.content);
    if (!version) continue;
    const byId = new Map((version.docs ?? []).map((doc) => [doc.id, doc]));
    const ordered = [...sidebarDocs(version.sidebars).map(({id}) => byId.get(id)), ...byId.values()];
    for (const doc of ordered) {
      if (!doc || seen.has(doc.permalink)) continue;
      seen.add(doc.permalink);
      pages.push({
        title: doc.title,
        permalink: doc.permalink,
        url: absoluteUrl(siteConfig.url, doc.permalink),
        description: doc.description ?? doc.frontMatter?.description ?? '',
        version: version.versionName,
        source: doc.source ?? '',
      });
    }
  }
  return pages;
}

function oneLine(text) {
  return String(text ?? '').replace(/\s+/g, ' ').trim();
}

/** A Markdown link's text: brackets escaped so a title cannot end the link early. */
function linkText(text) {
  return oneLine(text).replace(/([[\]\\])/g, '\\$1');
}

function header({title, tagline}) {
  return [`# ${oneLine(title) || 'Documentation'}`, '', ...(oneLine(tagline) ? [`> ${oneLine(tagline)}`, ''] : [])];
}

/** The MCP endpoint readers' assistants can use, when the site calls a public API. */
function mcpUrl(apiUrl) {
  if (!apiUrl || !/^https?:\/\//.test(apiUrl) || isLoopbackUrl(apiUrl)) return null;
  return `${apiUrl.replace(/\/+$/, '')}/mcp`;
}

/** llms.txt: title, summary, where the full text and the MCP server are, then every page. */
function llmsTxt(site, pages) {
  const lines = header(site);
  const edition = [site.version && site.version !== 'current' ? `version ${site.version}` : '', site.locale ? `language ${site.locale}` : '']
    .filter(Boolean)
    .join(', ');
  lines.push(
    `Every page of this book${edition ? ` (${edition})` : ''} with its exact URL. ` +
      `The text of every section, each under its heading with its link, is in [${LLMS_FULL_TXT}](${site.fullUrl}). ` +
      'Cite the section URLs as given: each opens that heading on the site.',
  );
  const mcp = mcpUrl(site.apiUrl);
  if (mcp) {
    lines.push(
      '',
      `An AI assistant can also search the book and ask it questions over MCP (Streamable HTTP) at ${mcp}: ` +
        'the tools search_book, ask_book and fetch_page return passages, answers and whole pages with exact section links.',
    );
  }
  lines.push('', '## Docs', '');
  for (const page of pages) {
    const note = oneLine(page.description);
    const copy = page.markdownUrl ? ` ([Markdown](${page.markdownUrl}))` : '';
    lines.push(`- [${linkText(page.title)}](${page.url})${copy}${note ? `: ${note}` : ''}`);
  }
  return `${lines.join('\n')}\n`;
}

/**
 * One page's lines: its title as a heading of `depth` linked to its URL, each section under its
 * heading (one level deeper at least) linked to its #anchor.
 */
function pageLines(page, depth) {
  const lines = [`${'#'.repeat(depth)} [${linkText(page.title)}](${page.url})`, ''];
  for (const section of page.sections ?? []) {
    if (section.level > 1 || (section.title && section.title !== page.title && section.id)) {
      const level = Math.min(6, Math.max(depth + 1, section.level + depth - 1));
      lines.push(`${'#'.repeat(level)} [${linkText(section.title)}](${page.url}#${section.id})`, '');
    }
    if (section.text) lines.push(section.text, '');
  }
  return lines;
}

/** llms-full.txt: each page as H2 linked to its URL, each section under its heading linked to its #anchor. */
function llmsFullTxt(site, pages) {
  const lines = header(site);
  for (const page of pages) lines.push(...pageLines(page, 2));
  return `${lines.join('\n').replace(/\n+$/, '')}\n`;
}

/** A page's Markdown copy: the page as H1 linked to its URL, its sections as in llms-full.txt. */
function pageMarkdown(page) {
  return `${pageLines(page, 1).join('\n').replace(/\n+$/, '')}\n`;
}

/** The doc's Markdown source (`@site/docs/x.md`), for what the HTML does not hold (diagrams); '' when unreadable. */
async function readSource(siteDir, source) {
  if (!siteDir || !source || !source.startsWith('@site/')) return '';
  try {
    return await fs.readFile(path.join(siteDir, source.slice('@site/'.length)), 'utf8');
  } catch {
    return '';
  }
}

async function readPage(outDir, baseUrl, permalink) {
  for (const file of htmlFileCandidates(outDir, baseUrl, permalink)) {
    try {
      return await fs.readFile(file, 'utf8');
    } catch (error) {
      if (error.code !== 'ENOENT') throw error;
    }
  }
  return null;
}

/**
 * Writes both files into props.outDir (this locale's build folder); returns what it wrote.
 * A page whose HTML is missing is listed in llms.txt but has no sections in the full file.
 */
async function writeLlmsTxt(props, {apiUrl} = {}) {
  const {outDir, baseUrl, siteConfig, siteDir, i18n} = props;
  const base = baseUrl ?? siteConfig.baseUrl ?? '/';
  const pages = bookPages(props);
  const copies = {};
  for (const page of pages) {
    const html = await readPage(outDir, base, page.permalink);
    const diagrams = mermaidBlocks(await readSource(siteDir, page.source));
    page.sections = html ? withDiagrams(pageSections(html), diagrams) : [];
    if (!html) continue; // not built: no copy to point at
    const copy = markdownCopy(base, page.permalink);
    page.markdownUrl = absoluteUrl(siteConfig.url, copy.permalink);
    copies[copy.file] = pageMarkdown(page);
  }
  const site = {
    title: siteConfig.title,
    tagline: siteConfig.tagline,
    locale: i18n && i18n.locales?.length > 1 ? i18n.currentLocale : '',
    version: pages[0]?.version ?? '',
    fullUrl: absoluteUrl(siteConfig.url, `${base}${LLMS_FULL_TXT}`),
    apiUrl,
  };
  const files = {...copies, [LLMS_TXT]: llmsTxt(site, pages), [LLMS_FULL_TXT]: llmsFullTxt(site, pages)};
  await fs.mkdir(outDir, {recursive: true});
  for (const [name, text] of Object.entries(files)) {
    await fs.mkdir(path.dirname(path.join(outDir, name)), {recursive: true});
    await fs.writeFile(path.join(outDir, name), text, 'utf8');
  }
  return {pages: pages.length, sections: pages.reduce((n, p) => n + p.sections.length, 0),
          copies: Object.keys(copies).length};
}

module.exports = {
  LLMS_TXT, LLMS_FULL_TXT, bookPages, htmlFileCandidates, llmsFullTxt, llmsTxt, markdownCopy, mcpUrl,
  pageMarkdown, writeLlmsTxt,
};
