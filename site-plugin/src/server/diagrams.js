/**
 * Mermaid diagrams as their source. The built HTML has none of them (theme-mermaid draws each in
 * the browser), so they are read from the doc's Markdown and put back in the section they belong
 * to, after the paragraph that comes before them.
 */
'use strict';

const FENCE = /^ {0,3}(`{3,}|~{3,})\s*([\w-]*)/;
const HEADING = /^ {0,3}#{2,6}\s+\S/;

/** Markdown inline syntax dropped, spaces collapsed: to find a paragraph's words in the HTML's text. */
function plain(text) {
  return String(text)
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/[`*_~>]|<[^>]+>/g, '')
    .replace(/^\s*([-+]|\d+[.)])\s+/, '')
    .replace(/\s+/g, ' ')
    .trim();
}

/**
 * The ```mermaid blocks of a doc's Markdown, in order: [{heading, after, source}], `heading`
 * the number of ## to ###### headings above it (0: under the page's title), `after` the plain
 * text of the last line before it.
 */
function mermaidBlocks(markdown) {
  const blocks = [];
  let heading = 0;
  let after = '';
  let open = null; // {fence, lines, mermaid}
  for (const line of String(markdown).replace(/^---\n[\s\S]*?\n---\n/, '').split(/\r?\n/)) {
    if (open) {
      if (line.trim().startsWith(open.fence) && line.trim().replace(/[`~]/g, '') === '') {
        if (open.mermaid) blocks.push({heading, after, source: open.lines.join('\n')});
        open = null;
      } else {
        open.lines.push(line);
      }
      continue;
    }
    const fence = FENCE.exec(line);
    if (fence) {
      open = {fence: fence[1], lines: [], mermaid: fence[2] === 'mermaid'};
    } else if (HEADING.test(line)) {
      heading += 1;
      after = '';
    } else if (line.trim()) {
      after = plain(line);
    }
  }
  return blocks;
}

/**
 * sections (pageSections') with each diagram fenced as ```mermaid in its section: after the
 * paragraph that ends with the text before it, else at the section's end.
 */
function withDiagrams(sections, blocks) {
  const headed = sections.filter((s) => s.level > 1);
  const out = sections.map((s) => ({...s}));
  for (const {heading, after, source} of blocks) {
    const target = heading === 0 ? out.find((s) => s.level === 1) : out[sections.indexOf(headed[heading - 1])];
    if (!target) continue;
    const fenced = `\`\`\`mermaid\n${source}\n\`\`\``;
    const paragraphs = target.text ? target.text.split('\n\n') : [];
    const tail = after.slice(-60);
    const at = tail ? paragraphs.findIndex((p) => plain(p).endsWith(tail)) : -1;
    paragraphs.splice(at < 0 ? paragraphs.length : at + 1, 0, fenced);
    target.text = paragraphs.join('\n\n');
  }
  return out;
}

module.exports = {mermaidBlocks, plain, withDiagrams};
