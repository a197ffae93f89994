/** A tiny, safe Markdown subset → plain data tree; the widget turns it into React elements (no raw HTML ever). */

// Answers are short; anything longer is cut so a hostile answer cannot make parsing slow.
export const MAX_MARKDOWN_CHARS = 20000;

const SAFE_SCHEMES = /^(https?:|mailto:)/i;

/**
 * The href to use for a Markdown link, or null when it is not safe to follow.
 * Allowed: http(s), mailto, site-absolute paths (`/…`) and fragments (`#…`).
 */
export function safeHref(raw) {
  if (typeof raw !== 'string') return null;
  // Browsers ignore control characters and whitespace inside a scheme ("java\tscript:").
  const squashed = raw.replace(/[\u0000-\u0020\u007f-\u009f]/g, '');
  if (squashed === '') return null;
  if (squashed.startsWith('//') || squashed.startsWith('/\\')) return null;
  if (squashed.startsWith('/') || squashed.startsWith('#')) return raw.trim();
  if (SAFE_SCHEMES.test(squashed)) return raw.trim();
  return null;
}

function findClosing(text, from, marker) {
  const at = text.indexOf(marker, from);
  return at > from ? at : -1;
}

function pushText(nodes, value) {
  if (!value) return;
  const last = nodes[nodes.length - 1];
  if (last && last.type === 'text') last.value += value;
  else nodes.push({type: 'text', value});
}

/** `[1]`, `[2, 3]` → citation numbers, or null when the bracket is not a citation marker. */
function citationNumbers(inner) {
  if (!/^\s*\d{1,3}(\s*,\s*\d{1,3})*\s*$/.test(inner)) return null;
  return inner.split(',').map((part) => Number(part.trim()));
}

// Inline HTML the book's pages render, allowed by name and only bare (no attributes): anything
// else stays visible text. `<br>` is a line break; the pairs below hold text or inline Markdown.
const BREAK_TAG = /<br\s*\/?>/iy;
const PAIRED_TAG = /<(code|kbd|sub|sup|b|strong|i|em)>([\s\S]{0,500}?)<\/\1\s*>/iy;
const TAG_NODE = {b: 'strong', strong: 'strong', i: 'emphasis', em: 'emphasis', sub: 'sub', sup: 'sup'};
const ENTITIES = {lt: '<', gt: '>', amp: '&', quot: '"', '#39': "'", apos: "'", nbsp: '\u00a0'};

/** The few HTML entities inline code is written with (`&lt;T&gt;`), as the characters they stand for. */
export function decodeEntities(text) {
  return text.replace(/&(lt|gt|amp|quot|#39|apos|nbsp);/g, (_, name) => ENTITIES[name]);
}

/** An allowed inline tag at `at`: `{node, end}`, or null (then `<` is text). */
function inlineTag(text, at, citationSet, depth) {
  BREAK_TAG.lastIndex = at;
  if (BREAK_TAG.test(text)) return {node: {type: 'break'}, end: BREAK_TAG.lastIndex};
  PAIRED_TAG.lastIndex = at;
  const match = PAIRED_TAG.exec(text);
  if (!match) return null;
  const name = match[1].toLowerCase();
  const end = PAIRED_TAG.lastIndex;
  if (name === 'code' || name === 'kbd') {
    return {node: {type: name === 'code' ? 'inlineCode' : 'kbd', value: decodeEntities(match[2])}, end};
  }
  const children = depth < 4 ? parseInline(match[2], citationSet, depth + 1) : [{type: 'text', value: match[2]}];
  return {node: {type: TAG_NODE[name], children}, end};
}

/** Inline Markdown: code, citations, links, strong, emphasis, allowed inline HTML; everything else is text. */
export function parseInline(text, citationSet = new Set(), depth = 0) {
  const nodes = [];
  let i = 0;
  let plain = '';
  const flush = () => {
    pushText(nodes, plain);
    plain = '';
  };
  while (i < text.length) {
    const ch = text[i];
    if (ch === '\\' && i + 1 < text.length && /[\\`*_[\]()#>!-]/.test(text[i + 1])) {
      plain += text[i + 1];
      i += 2;
      continue;
    }
    if (ch === '`') {
      const end = findClosing(text, i + 1, '`');
      if (end !== -1) {
        flush();
        nodes.push({type: 'inlineCode', value: text.slice(i + 1, end)});
        i = end + 1;
        continue;
      }
    }
    if (ch === '<') {
      const tag = inlineTag(text, i, citationSet, depth);
      if (tag) {
        flush();
        nodes.push(tag.node);
        i = tag.end;
        continue;
      }
    }
    if (ch === '[') {
      const close = text.indexOf(']', i + 1);
      if (close !== -1) {
        const inner = text.slice(i + 1, close);
        const numbers = citationNumbers(inner);
        if (numbers && text[close + 1] !== '(') {
          flush();
          for (const n of numbers) {
            if (citationSet.has(n)) nodes.push({type: 'citation', n});
            else pushText(nodes, `[${n}]`);
          }
          i = close + 1;
          continue;
        }
        if (text[close + 1] === '(' && !inner.includes('[')) {
          const end = text.indexOf(')', close + 2);
          if (end !== -1) {
            flush();
            const href = safeHref(text.slice(close + 2, end).trim().split(/\s+/)[0]);
            const children = depth < 4 ? parseInline(inner, citationSet, depth + 1) : [{type: 'text', value: inner}];
            if (href) nodes.push({type: 'link', href, children});
            else nodes.push(...children);
            i = end + 1;
            continue;
          }
        }
      }
    }
    if ((ch === '*' || ch === '_') && depth < 4) {
      const strong = text[i + 1] === ch;
      const marker = strong ? ch + ch : ch;
      const start = i + marker.length;
      const end = findClosing(text, start, marker);
      const wordInside = ch === '_' && /\w/.test(text[i - 1] || '');
      if (end !== -1 && !/\s/.test(text[start]) && !wordInside) {
        flush();
        nodes.push({type: strong ? 'strong' : 'emphasis', children: parseInline(text.slice(start, end), citationSet, depth + 1)});
        i = end + marker.length;
        continue;
      }
    }
    plain += ch;
    i += 1;
  }
  flush();
  return nodes;
}

const FENCE = /^\s{0,3}(`{3,}|~{3,})\s*([\w+-]*)/;
// GFM tables: a header row, a delimiter row (| --- | :-: |), then body rows.
const TABLE_DELIMITER = /^\s*\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$/;
const MAX_TABLE_COLUMNS = 20;
const MAX_TABLE_ROWS = 200;

/** Cells of a table row: split on `|` outside inline code, `\|` kept as a bar. */
export function tableCells(line) {
  let row = line.trim();
  if (row.startsWith('|')) row = row.slice(1);
  if (row.endsWith('|') && !row.endsWith('\\|')) row = row.slice(0, -1);
  const cells = [];
  let cell = '';
  let inCode = false;
  for (let i = 0; i < row.length; i += 1) {
    const ch = row[i];
    if (ch === '\\' && row[i + 1] === '|') {
      cell += '|';
      i += 1;
    } else if (ch === '`') {
      inCode = !inCode;
      cell += ch;
    } else if (ch === '|' && !inCode) {
      cells.push(cell.trim());
      cell = '';
    } else cell += ch;
  }
  cells.push(cell.trim());
  return cells.slice(0, MAX_TABLE_COLUMNS);
}

function isTableStart(lines, i) {
  return lines[i].includes('|') && i + 1 < lines.length && lines[i + 1].includes('-') && TABLE_DELIMITER.test(lines[i + 1]);
}

function alignments(delimiter) {
  return tableCells(delimiter).map((cell) => {
    const left = cell.startsWith(':');
    const right = cell.endsWith(':');
    return left && right ? 'center' : right ? 'right' : left ? 'left' : null;
  });
}
const HEADING = /^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$/;
const LIST_ITEM = /^\s*([-*+]|\d{1,9}[.)])\s+(.*)$/;
const QUOTE = /^\s{0,3}>\s?(.*)$/;
// A thematic break (---, ***, ___), with any citation markers an offline quote put after it.
const RULE = /^\s{0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*(?:\[\d{1,3}(?:\s*,\s*\d{1,3})*\][ \t]*)*$/;
// Under a paragraph line, `===` or `---` makes it a heading (CommonMark's setext headings).
const SETEXT = /^\s{0,3}(=+|-+)[ \t]*$/;

/**
 * Parse an answer into blocks: paragraph, heading, list, code, quote, table, rule.
 * `citations` (the API's list) decides which `[n]` markers become citation nodes.
 */
export function parseMarkdown(source, {citations = []} = {}) {
  const text = String(source ?? '').slice(0, MAX_MARKDOWN_CHARS).replace(/\r\n?/g, '\n');
  const citationSet = new Set(citations.map((c) => Number(c.n)));
  const inline = (s) => parseInline(s, citationSet);
  const lines = text.split('\n');
  const blocks = [];
  let paragraph = [];
  const endParagraph = () => {
    if (paragraph.length) blocks.push({type: 'paragraph', children: inline(paragraph.join(' '))});
    paragraph = [];
  };
  for (let i = 0; i < lines.length; i += 1) {
    const line = lines[i];
    const fence = FENCE.exec(line);
    if (fence) {
      endParagraph();
      const body = [];
      i += 1;
      while (i < lines.length && !lines[i].trim().startsWith(fence[1])) body.push(lines[i++]);
      blocks.push({type: 'code', lang: fence[2] || '', value: body.join('\n')});
      continue;
    }
    if (isTableStart(lines, i)) {
      endParagraph();
      const header = tableCells(line);
      const align = alignments(lines[i + 1]).slice(0, header.length);
      const rows = [];
      i += 2;
      while (i < lines.length && lines[i].trim() !== '' && !FENCE.test(lines[i]) && !HEADING.test(lines[i]) && !QUOTE.test(lines[i]) && rows.length < MAX_TABLE_ROWS) {
        const cells = tableCells(lines[i]);
        rows.push(header.map((_, c) => inline(cells[c] ?? '')));
        i += 1;
      }
      i -= 1;
      blocks.push({type: 'table', align, header: header.map(inline), rows});
      continue;
    }
    const setext = paragraph.length > 0 ? SETEXT.exec(line) : null;
    if (setext) {
      blocks.push({type: 'heading', level: setext[1][0] === '=' ? 1 : 2, children: inline(paragraph.join(' '))});
      paragraph = [];
      continue;
    }
    if (RULE.test(line)) {
      // A separator between blocks; one at the start or end, or next to another, says nothing.
      endParagraph();
      if (blocks.length && blocks[blocks.length - 1].type !== 'rule') blocks.push({type: 'rule'});
      continue;
    }
    const heading = HEADING.exec(line);
    if (heading) {
      endParagraph();
      blocks.push({type: 'heading', level: heading[1].length, children: inline(heading[2])});
      continue;
    }
    const item = LIST_ITEM.exec(line);
    if (item) {
      endParagraph();
      const ordered = /\d/.test(item[1]);
      const list = {type: 'list', ordered, start: ordered ? parseInt(item[1], 10) : 1, items: []};
      let current = [item[2]];
      while (i + 1 < lines.length) {
        const next = LIST_ITEM.exec(lines[i + 1]);
        if (next && /\d/.test(next[1]) === ordered) {
          list.items.push(inline(current.join(' ')));
          current = [next[2]];
        } else if (lines[i + 1].trim() !== '' && /^\s+\S/.test(lines[i + 1]) && !next) {
          current.push(lines[i + 1].trim());
        } else break;
        i += 1;
      }
      list.items.push(inline(current.join(' ')));
      blocks.push(list);
      continue;
    }
    const quote = QUOTE.exec(line);
    if (quote) {
      endParagraph();
      const body = [quote[1]];
      while (i + 1 < lines.length && QUOTE.test(lines[i + 1])) body.push(QUOTE.exec(lines[++i])[1]);
      blocks.push({type: 'quote', children: inline(body.join(' '))});
      continue;
    }
    if (line.trim() === '') endParagraph();
    else paragraph.push(line.trim());
  }
  endParagraph();
  if (blocks.length && blocks[blocks.length - 1].type === 'rule') blocks.pop();
  return blocks;
}

/** Plain text of a parsed tree (for aria labels and tests). */
export function toPlainText(nodes) {
  return nodes
    .map((node) => {
      if (node.type === 'text' || node.type === 'inlineCode' || node.type === 'code' || node.type === 'kbd') return node.value;
      if (node.type === 'break') return '\n';
      if (node.type === 'citation') return `[${node.n}]`;
      if (node.type === 'list') return node.items.map(toPlainText).join('\n');
      if (node.type === 'table') return [node.header, ...node.rows].map((row) => row.map(toPlainText).join('\t')).join('\n');
      return toPlainText(node.children || []);
    })
    .join('');
}
