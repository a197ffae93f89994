/** A built doc page's sections as the site serves them: each heading's id and text, and the text under it. */
'use strict';

// The doc's rendered Markdown (theme-classic DocItem/Content); the title header sits inside it.
const CONTENT_START = /<div class="[^"]*\btheme-doc-markdown\b[^"]*"[^>]*>/;
// Where the Markdown ends: the footer (tags, edit link) or the end of the article.
const CONTENT_END = /<footer\b|<\/article>/;
const HEADING = /<h([1-6])\b([^>]*)>([\s\S]*?)<\/h\1>/g;
const ENTITIES = {amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ', '#39': "'", '#x27': "'"};

/** The HTML between the doc's Markdown container and its footer ('' when the page is not a doc). */
function docContent(html) {
  const start = html.search(CONTENT_START);
  if (start < 0) return '';
  const rest = html.slice(start);
  const end = rest.search(CONTENT_END);
  return end < 0 ? rest : rest.slice(0, end);
}

function decode(text) {
  return text.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+\d*);/gi, (whole, name) => {
    const key = name.toLowerCase();
    if (key in ENTITIES) return ENTITIES[key];
    if (key.startsWith('#x')) return String.fromCodePoint(parseInt(key.slice(2), 16));
    if (key.startsWith('#')) return String.fromCodePoint(parseInt(key.slice(1), 10));
    return whole;
  });
}

/** Inline HTML as plain text: tags dropped, entities decoded, spaces collapsed. */
function inlineText(html) {
  return decode(html.replace(/<[^>]+>/g, '')).replace(/[\u200b\s]+/g, ' ').trim();
}

/** A table as GitHub-flavoured Markdown: its first row the header, then the `| --- |` row. */
function markdownTable(html) {
  const rows = [...html.matchAll(/<tr\b[^>]*>([\s\S]*?)<\/tr>/gi)].map(([, row]) =>
    [...row.matchAll(/<t([hd])\b[^>]*>([\s\S]*?)<\/t\1>/gi)].map(([, , cell]) =>
      inlineText(cell.replace(/<br\s*\/?>/gi, ' ')).replace(/\|/g, '\\|')));
  const width = Math.max(0, ...rows.map((cells) => cells.length));
  if (!width) return '';
  const line = (cells) => `| ${[...cells, ...Array(width - cells.length).fill('')].join(' | ')} |`;
  return [line(rows[0]), line(Array(width).fill('---')), ...rows.slice(1).map(line)].join('\n');
}

/**
 * Block HTML as readable plain text in Markdown's shape: paragraphs apart, list items as "- ",
 * code blocks fenced with their lines kept, tables as Markdown tables. The heading's hash link
 * and the copy buttons are dropped.
 */
function blockText(html) {
  const codes = [];
  let text = html
    .replace(/<(script|style|button|svg)\b[\s\S]*?<\/\1>/gi, '')
    .replace(/<table\b[^>]*>([\s\S]*?)<\/table>/gi, (_, table) => {
      codes.push(markdownTable(table));
      return `\n\n\u0000${codes.length - 1}\u0000\n\n`;
    })
    .replace(/<pre\b([^>]*)>([\s\S]*?)<\/pre>/gi, (_, attrs, code) => {
      const language = /\blanguage-([\w+#-]+)/.exec(attrs)?.[1] ?? '';
      // Prism ends each line with <br>; without one, each token-line span starts a line.
      const broken = /<br\s*\/?>/i.test(code)
        ? code.replace(/<br\s*\/?>/gi, '\n')
        : code.replace(/<span\b[^>]*class="[^"]*\btoken-line\b[^"]*"[^>]*>/gi, '\n');
      const lines = decode(broken.replace(/<[^>]+>/g, '')).replace(/^\n+|\n+$/g, '');
      codes.push(`\`\`\`${language}\n${lines}\n\`\`\``);
      return `\n\n\u0000${codes.length - 1}\u0000\n\n`;
    })
    .replace(/<li\b[^>]*>/gi, '\n- ')
    .replace(/<(br|hr)\b[^>]*>/gi, '\n')
    .replace(/<\/?(p|div|ul|ol|table|blockquote|details|summary|section|figure|dl|dt|dd)\b[^>]*>/gi, '\n\n')
    .replace(/<[^>]+>/g, '');
  text = decode(text)
    .replace(/\u200b/g, '')
    .split('\n')
    .map((line) => line.replace(/[ \t]+/g, ' ').trim())
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .replace(/\n(- )/g, '\n$1')
    .trim();
  return text.replace(/\u0000(\d+)\u0000/g, (_, i) => codes[Number(i)]);
}

/**
 * [{level, id, title, text}] in page order: the text before the first heading (under the
 * page's own title, level 1, with the id of its h1 if it has one), then one entry per heading.
 * Headings without an id are kept as text of the section above: they cannot be linked.
 */
function pageSections(html) {
  const content = docContent(html);
  if (!content) return [];
  const sections = [{level: 1, id: null, title: '', html: ''}];
  let last = 0;
  for (const match of content.matchAll(HEADING)) {
    const [whole, level, attrs, inner] = match;
    const id = /\bid="([^"]+)"/.exec(attrs)?.[1] ?? null;
    const current = sections[sections.length - 1];
    current.html += content.slice(last, match.index);
    last = match.index + whole.length;
    const title = inlineText(inner.replace(/<a\b[^>]*class="[^"]*hash-link[^"]*"[^>]*>[\s\S]*?<\/a>/g, ''));
    if (Number(level) === 1 && sections.length === 1 && !current.title) {
      Object.assign(current, {id: id ? decode(id) : null, title});
    } else if (id) {
      sections.push({level: Number(level), id: decode(id), title, html: ''});
    } else {
      current.html += `<p>${title}</p>`;
    }
  }
  sections[sections.length - 1].html += content.slice(last);
  return sections
    .map(({html: body, ...rest}) => ({...rest, text: blockText(body)}))
    .filter((s, i) => i > 0 || s.text || s.title);
}

module.exports = {blockText, docContent, inlineText, markdownTable, pageSections};
