/** "Ask about this": a small popover next to a text selection inside the article. */
import React, {useEffect, useState} from 'react';
import {headingText, isAskableElement, nearestHeadingId, popoverPosition, selectedText, selectionProblem} from '../../client/selection.mjs';
import {ChatIcon} from './Icons';
import styles from './styles.module.css';

function elementOf(node) {
  return node && node.nodeType === 1 ? node : node && node.parentElement;
}

/**
 * A drag that ends over the open panel extends the selection into the panel's own text. Put its
 * end back where the pointer was in the article: the caret at that point with the widget out of
 * the way of hit testing.
 */
function endSelectionUnderWidget(event, selector) {
  const selection = window.getSelection();
  if (!selection || selection.isCollapsed || event?.clientX == null) return;
  if (!elementOf(selection.focusNode)?.closest?.('[data-textbook-chat]')) return;
  const widgets = Array.from(document.querySelectorAll('[data-textbook-chat]'));
  const saved = widgets.map((el) => el.style.pointerEvents);
  let node = null;
  let offset = 0;
  try {
    widgets.forEach((el) => {
      el.style.pointerEvents = 'none';
    });
    if (document.caretRangeFromPoint) {
      const caret = document.caretRangeFromPoint(event.clientX, event.clientY);
      node = caret?.startContainer;
      offset = caret?.startOffset ?? 0;
    } else if (document.caretPositionFromPoint) {
      const caret = document.caretPositionFromPoint(event.clientX, event.clientY);
      node = caret?.offsetNode;
      offset = caret?.offset ?? 0;
    }
  } finally {
    widgets.forEach((el, i) => {
      el.style.pointerEvents = saved[i];
    });
  }
  if (node && isAskableElement(elementOf(node), selector)) {
    selection.setBaseAndExtent(selection.anchorNode, selection.anchorOffset, node, offset);
  }
}

function readSelection(selector, maxChars, labels) {
  const selection = window.getSelection();
  if (!selection || selection.isCollapsed || selection.rangeCount === 0) return null;
  const range = selection.getRangeAt(0);
  // The section's id, and its heading as the page shows it: the answer's source label.
  const withHeading = (anchor) => ({anchor, heading: anchor ? headingText(document.getElementById(anchor)) : ''});
  const start = elementOf(range.startContainer);
  const end = elementOf(range.endContainer);
  if (!isAskableElement(start, selector) || !isAskableElement(end, selector)) return null;
  const text = selectedText(selection.toString());
  if (!text) return null;
  // By the end of the selection (where the pointer let go), not the middle of its box.
  const lines = range.getClientRects();
  const rect = lines.length ? lines[lines.length - 1] : range.getBoundingClientRect();
  const position = popoverPosition(rect, {width: document.documentElement.clientWidth, height: window.innerHeight});
  return {
    text,
    ...withHeading(nearestHeadingId(range.startContainer, start.closest(selector))),
    pageUrl: window.location.pathname,
    // Absolute (document) coordinates, so the popover stays by the text while scrolling.
    left: position.left + window.scrollX,
    top: position.top + window.scrollY,
    problem: selectionProblem(text, maxChars, labels),
  };
}

export default function SelectionPopover({selector, maxChars, labels, onAsk}) {
  const [state, setState] = useState(null);

  useEffect(() => {
    let timer = null;
    // A press inside the widget (its buttons, the popover) is not a selection; a drag that
    // started in the article counts wherever it ends, even over the open panel.
    let pressedInWidget = false;
    const press = (event) => {
      pressedInWidget = Boolean(event?.target?.closest?.('[data-textbook-chat]'));
    };
    const update = (event) => {
      if (event?.type === 'keyup' ? event.target?.closest?.('[data-textbook-chat]') : pressedInWidget) return;
      if (event?.type === 'keyup' && event.key === 'Escape') {
        setState(null);
        return;
      }
      if (event?.type === 'mouseup') endSelectionUnderWidget(event, selector);
      window.clearTimeout(timer);
      // Let the browser finish updating the selection first.
      timer = window.setTimeout(() => setState(readSelection(selector, maxChars, labels)), 10);
    };
    const collapse = () => {
      const selection = window.getSelection();
      if (!selection || selection.isCollapsed) setState(null);
    };
    document.addEventListener('mousedown', press);
    document.addEventListener('touchstart', press);
    document.addEventListener('mouseup', update);
    document.addEventListener('keyup', update);
    document.addEventListener('touchend', update);
    document.addEventListener('selectionchange', collapse);
    return () => {
      if (event?.type === 'mouseup') endSelectionUnderWidget(event, selector);
      window.clearTimeout(timer);
      document.removeEventListener('mousedown', press);
      document.removeEventListener('touchstart', press);
      document.removeEventListener('mouseup', update);
      document.removeEventListener('keyup', update);
      document.removeEventListener('touchend', update);
      document.removeEventListener('selectionchange', collapse);
    };
  }, [selector, maxChars, labels]);

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
          {labels.askSelection}
        </button>
      )}
    </div>
  );
}
