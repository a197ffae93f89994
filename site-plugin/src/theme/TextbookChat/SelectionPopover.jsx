/** "Ask about this": a small popover next to a text selection inside the article. */
import React, {useEffect, useState} from 'react';
import {isAskableElement, nearestHeadingId, popoverPosition, selectionProblem} from '../../client/selection.mjs';
import {ChatIcon} from './Icons';
import styles from './styles.module.css';

function elementOf(node) {
  return node && node.nodeType === 1 ? node : node && node.parentElement;
}

function readSelection(selector, maxChars) {
  const selection = window.getSelection();
  if (!selection || selection.isCollapsed || selection.rangeCount === 0) return null;
  const range = selection.getRangeAt(0);
  const start = elementOf(range.startContainer);
  const end = elementOf(range.endContainer);
  if (!isAskableElement(start, selector) || !isAskableElement(end, selector)) return null;
  const text = selection.toString().trim();
  if (!text) return null;
  const rect = range.getBoundingClientRect();
  const position = popoverPosition(rect, {width: document.documentElement.clientWidth, height: window.innerHeight});
  return {
    text,
    anchor: nearestHeadingId(range.startContainer, start.closest(selector)),
    pageUrl: window.location.pathname,
    // Absolute (document) coordinates, so the popover stays by the text while scrolling.
    left: position.left + window.scrollX,
    top: position.top + window.scrollY,
    problem: selectionProblem(text, maxChars),
  };
}

export default function SelectionPopover({selector, maxChars, label, onAsk}) {
  const [state, setState] = useState(null);

  useEffect(() => {
    let timer = null;
    const update = (event) => {
      if (event?.target?.closest?.('[data-textbook-chat]')) return;
      if (event?.type === 'keyup' && event.key === 'Escape') {
        setState(null);
        return;
      }
      window.clearTimeout(timer);
      // Let the browser finish updating the selection first.
      timer = window.setTimeout(() => setState(readSelection(selector, maxChars)), 10);
    };
    const collapse = () => {
      const selection = window.getSelection();
      if (!selection || selection.isCollapsed) setState(null);
    };
    document.addEventListener('mouseup', update);
    document.addEventListener('keyup', update);
    document.addEventListener('touchend', update);
    document.addEventListener('selectionchange', collapse);
    return () => {
      window.clearTimeout(timer);
      document.removeEventListener('mouseup', update);
      document.removeEventListener('keyup', update);
      document.removeEventListener('touchend', update);
      document.removeEventListener('selectionchange', collapse);
    };
  }, [selector, maxChars]);

  if (!state) return null;
  return (
    <div data-textbook-chat="" className={styles.popover} style={{left: state.left, top: state.top}}>
      {state.problem ? (
        <p className={styles.popoverHint} role="alert">
          {state.problem.message}
        </p>
      ) : (
        <button
          type="button"
          className={styles.popoverButton}
          // Keep the reader's selection while clicking.
          onMouseDown={(event) => event.preventDefault()}
          onClick={() => {
            onAsk(state);
            setState(null);
          }}>
          <ChatIcon /> 
          {label}
        </button>
      )}
    </div>
  );
}
