/** Renders the safe Markdown tree as React elements: text is always text, links only where safeHref allows. */
import React from 'react';
import {parseMarkdown} from '../../client/markdown.mjs';
import styles from './styles.module.css';

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

export default function Markdown({text, citations, renderCitation, onLink}) {
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
            return <pre key={i}><code>{block.value}</code></pre>;
          case 'quote':
            return <blockquote key={i}>{inline(block.children)}</blockquote>;
          default:
            return null;
        }
      })}
    </div>
  );
}
