/** An answer as Markdown for the clipboard: its [n] markers as links to the cited sections, and its sources. */

const MARKERS = /\[(\d{1,3}(?:\s*,\s*\d{1,3})*)\](?!\()/g;
const FENCE = /^\s{0,3}(`{3,}|~{3,})/;

/**
 * `text` with each `[n]` of a known citation written `[n](url)`, code blocks left as they are,
 * then "Sources:" and the numbered sections as links. `absolute(url)` gives the URL a reader can
 * open anywhere (null: not a safe link, the marker stays plain); `label(citation)` names one.
 */
export function answerAsMarkdown(text, citations = [], {absolute = (url) => url, label = (c) => c.title || '', sourcesTitle = 'Sources'} = {}) {
  const byNumber = new Map(citations.map((c) => [Number(c.n), c]));
  const href = (n) => (byNumber.has(n) ? absolute(byNumber.get(n).url) : null);
  let inCode = null;
  const lines = String(text ?? '').split('\n').map((line) => {
    const fence = FENCE.exec(line);
    if (fence && (inCode === null || fence[1][0] === inCode[0])) {
      inCode = inCode === null ? fence[1] : null;
      return line;
    }
    if (inCode !== null) return line;
    return line.replace(MARKERS, (whole, inner) => {
      const numbers = inner.split(',').map((part) => Number(part.trim()));
      if (!numbers.every((n) => href(n))) return whole;
      return numbers.map((n) => `[${n}](${href(n)})`).join('');
    });
  });
  const sources = citations
    .map((c) => ({n: Number(c.n), url: absolute(c.url), name: label(c)}))
    .filter((s) => s.url)
    .map((s) => `${s.n}. [${s.name.replace(/([[\]])/g, '\\$1')}](${s.url})`);
  const body = lines.join('\n').trim();
  return sources.length ? `${body}\n\n${sourcesTitle}:\n\n${sources.join('\n')}\n` : `${body}\n`;
}
