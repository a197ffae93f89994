/** Renders the safe Markdown tree as React elements: text is always text, links only where safeHref allows. */
import React from 'react';
import {textDirection} from '../../client/direction.mjs';
import {parseMarkdown, toPlainText} from '../../client/markdown.mjs';
import Code from './Code';
import {ExternalIcon} from './Icons';
import styles from './styles.module.css';

/**
 * A link from the book's own text, shown as the book shows it: a page of the site opens in the
 * app, another site in a new tab, marked. It never looks like one of the answer's citations.
 */
function BookLink({href, resolve, onNavigate, labels, children}) {
  const target = resolve(href);
  if (!target) return <>{children}</>;
  if (!target.internal) {
    return (
      <a className={styles.bookLink} href={target.href} target="_blank" rel="noopener noreferrer nofollow">
        {children}
        <ExternalIcon />
        <span className={styles.srOnly}>{labels.newTab}</span>
      </a>
    );
  }
  return (
    <a className={styles.bookLink} href={target.to} onClick={(event) => onNavigate(event, target)}>
      {children}
    </a>
  );
}

function Inline({nodes, ctx}) {
  const inner = (children) => <Inline nodes={children} ctx={ctx} />;
  return nodes.map((node, i) => {
    switch (node.type) {
      case 'text':
        return <React.Fragment key={i}>{node.value}</React.Fragment>;
      case 'strong':
        return <strong key={i}>{inner(node.children)}</strong>;
      case 'emphasis':
        return <em key={i}>{inner(node.children)}</em>;
      case 'sub':
        return <sub key={i}>{inner(node.children)}</sub>;
      case 'sup':
        return <sup key={i}>{inner(node.children)}</sup>;
      case 'inlineCode':
        return <code key={i}>{node.value}</code>;
      case 'kbd':
        return <kbd key={i}>{node.value}</kbd>;
      case 'break':
        return <br key={i} />;
      case 'link':
        return (
          <BookLink key={i} href={node.href} resolve={ctx.resolve} onNavigate={ctx.onNavigate} labels={ctx.labels}>
            {inner(node.children)}
          </BookLink>
        );
      case 'citation':
        return <React.Fragment key={i}>{ctx.renderCitation(node.n)}</React.Fragment>;
      default:
        return null;
    }
  });
}

export default function Markdown({text, citations, renderCitation, resolve, onNavigate, labels}) {
  const blocks = React.useMemo(() => parseMarkdown(text, {citations}), [text, citations]);
  const ctx = {renderCitation, resolve, onNavigate, labels};
  const inline = (nodes) => <Inline nodes={nodes} ctx={ctx} />;
  // dir="auto" on every block: a line in another script than the page's keeps its own direction.
  return (
    <div className={styles.markdown}>
      {blocks.map((block, i) => {
        switch (block.type) {
          case 'paragraph':
            return <p key={i} dir="auto">{inline(block.children)}</p>;
          case 'heading':
            // Not an <hN>: the page's own outline and anchors stay the article's.
            return <p key={i} dir="auto" className={styles.answerHeading}><strong>{inline(block.children)}</strong></p>;
          case 'list': {
            // The list runs the way its text does (its numbers on that side), each item its own way.
            const dir = textDirection(block.items.map(toPlainText).join(' '));
            const items = block.items.map((item, j) => <li key={j} dir="auto">{inline(item)}</li>);
            return block.ordered ? <ol key={i} start={block.start} dir={dir}>{items}</ol> : <ul key={i} dir={dir}>{items}</ul>;
          }
          case 'code':
            return <Code key={i} value={block.value} lang={block.lang} labels={labels} />;
          case 'table':
            return (
              <div key={i} className={styles.tableWrap} role="region" aria-label={labels.table} tabIndex={0}>
                <table dir={textDirection([...block.header, ...block.rows.flat()].map(toPlainText).join(' '))}>
                  <thead>
                    <tr>
                      {block.header.map((cell, j) => (
                        <th key={j} dir="auto" style={block.align[j] ? {textAlign: block.align[j]} : undefined}>{inline(cell)}</th>
                      ))}
                    </tr>
                  </thead>
                  <tbody>
                    {block.rows.map((row, r) => (
                      <tr key={r}>
                        {row.map((cell, j) => (
                          <td key={j} dir="auto" style={block.align[j] ? {textAlign: block.align[j]} : undefined}>{inline(cell)}</td>
                        ))}
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
            );
          case 'quote':
            return <blockquote key={i} dir="auto">{inline(block.children)}</blockquote>;
          case 'rule':
            return <hr key={i} />;
          default:
            return null;
        }
      })}
    </div>
  );
}
