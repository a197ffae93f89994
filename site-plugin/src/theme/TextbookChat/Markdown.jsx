/** Renders the safe Markdown tree as React elements: text is always text, links only where safeHref allows. */
import React from 'react';
import {parseMarkdown} from '../../client/markdown.mjs';
import {CopyIcon} from './Icons';
import styles from './styles.module.css';

/** Put text on the clipboard; the Clipboard API needs a secure context, else a hidden textarea. */
async function copyText(text) {
  if (window.navigator.clipboard && window.isSecureContext) {
    await window.navigator.clipboard.writeText(text);
    return;
  }
  const area = document.createElement('textarea');
  area.value = text;
  area.setAttribute('readonly', '');
  area.style.position = 'fixed';
  area.style.opacity = '0';
  document.body.appendChild(area);
  area.select();
  try {
    document.execCommand('copy');
  } finally {
    area.remove();
  }
}

function CodeBlock({value, lang, labels}) {
  const [copied, setCopied] = React.useState(false);
  React.useEffect(() => {
    if (!copied) return undefined;
    const timer = window.setTimeout(() => setCopied(false), 2000);
    return () => window.clearTimeout(timer);
  }, [copied]);
  return (
    <div className={styles.codeBlock}>
      <pre data-language={lang || undefined}>
        <code>{value}</code>
      </pre>
      <button
        type="button"
        className={`${styles.iconButton} ${styles.copy}`}
        aria-label={copied ? labels.copied : labels.copyCode}
        title={labels.copyCode}
        onClick={() => copyText(value).then(() => setCopied(true), () => setCopied(false))}>
        <CopyIcon />
        <span>{copied ? labels.copied : labels.copyCode}</span>
      </button>
    </div>
  );
}

function Inline({nodes, renderCitation, onLink}) {
  return nodes.map((node, i) => {
    switch (node.type) {
      case 'text':
        return <React.Fragment key={i}>{node.value}</React.Fragment>;
      case 'strong':
        return <strong key={i}><Inline nodes={node.children} renderCitation={renderCitation} onLink={onLink} /></strong>;
      case 'emphasis':
        return <em key={i}><Inline nodes={node.children} renderCitation={renderCitation} onLink={onLink} /></em>;
      case 'inlineCode':
        return <code key={i}>{node.value}</code>;
      case 'link':
        return (
          <a key={i} href={node.href} onClick={(event) => onLink(event, node.href)} rel="noopener noreferrer nofollow">
            <Inline nodes={node.children} renderCitation={renderCitation} onLink={onLink} />
          </a>
        );
      case 'citation':
        return <React.Fragment key={i}>{renderCitation(node.n)}</React.Fragment>;
      default:
        return null;
    }
  });
}

export default function Markdown({text, citations, renderCitation, onLink, labels}) {
  const blocks = React.useMemo(() => parseMarkdown(text, {citations}), [text, citations]);
  const inline = (nodes) => <Inline nodes={nodes} renderCitation={renderCitation} onLink={onLink} />;
  return (
    <div className={styles.markdown}>
      {blocks.map((block, i) => {
        switch (block.type) {
          case 'paragraph':
            return <p key={i}>{inline(block.children)}</p>;
          case 'heading':
            // Not an <hN>: the page's own outline and anchors stay the article's.
            return <p key={i} className={styles.answerHeading}><strong>{inline(block.children)}</strong></p>;
          case 'list': {
            const items = block.items.map((item, j) => <li key={j}>{inline(item)}</li>);
            return block.ordered ? <ol key={i} start={block.start}>{items}</ol> : <ul key={i}>{items}</ul>;
          }
          case 'code':
            return <CodeBlock key={i} value={block.value} lang={block.lang} labels={labels} />;
          case 'table':
            return (
              <div key={i} className={styles.tableWrap}>
                <table>
                  <thead>
                    <tr>
                      {block.header.map((cell, j) => (
                        <th key={j} style={block.align[j] ? {textAlign: block.align[j]} : undefined}>{inline(cell)}</th>
                      ))}
                    </tr>
                  </thead>
                  <tbody>
                    {block.rows.map((row, r) => (
                      <tr key={r}>
                        {row.map((cell, j) => (
                          <td key={j} style={block.align[j] ? {textAlign: block.align[j]} : undefined}>{inline(cell)}</td>
                        ))}
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
            );
          case 'quote':
            return <blockquote key={i}>{inline(block.children)}</blockquote>;
          default:
            return null;
        }
      })}
    </div>
  );
}
