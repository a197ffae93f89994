/**
 * A followed #anchor keeps its heading at the top of the window while the page's layout grows
 * above it (diagrams drawn after load, images without dimensions, tabs, KaTeX), until the reader
 * scrolls; the heading is marked for a moment and receives focus.
 */

// How long to wait for the target page to render the heading, and how long to hold it there.
export const WAIT_MS = 8000;
export const PIN_MS = 10000;
export const MARK_MS = 2000;
// Below the navbar, as far as Docusaurus's own heading links leave it (scroll-margin-top ≈ 0.5rem).
export const GAP_PX = 12;
const CHECK_MS = 150;
// Input that means the reader moves the page (a scrollbar drag starts with a mousedown).
export const READER_EVENTS = ['wheel', 'touchstart', 'pointerdown', 'mousedown', 'keydown'];
export const MARK_ATTRIBUTE = 'data-textbook-chat-target';

/** The height the sticky navbar covers at the top of the viewport (0 when it is hidden). */
export function navbarBottom(win) {
  const navbar = win.document.querySelector('.navbar');
  if (!navbar) return 0;
  const {position} = win.getComputedStyle(navbar);
  return position === 'sticky' || position === 'fixed' ? Math.max(0, navbar.getBoundingClientRect().bottom) : 0;
}

/** How far to scroll (px, positive: down) to bring the element's top to `want` px below the viewport top. */
export function scrollDelta(elementTop, want) {
  const delta = Math.round(elementTop - want);
  return Math.abs(delta) <= 1 ? 0 : delta;
}

/** A heading focusable by script only (not by Tab), so focus can move to it after a jump. */
function focusTarget(element) {
  if (!element.hasAttribute('tabindex') && !/^(A|BUTTON|INPUT|SELECT|TEXTAREA)$/.test(element.tagName)) {
    element.setAttribute('tabindex', '-1');
  }
  element.focus({preventScroll: true});
}

/**
 * Pin the element with `id` near the top of the window: now, and again whenever the layout moves
 * it, for PIN_MS or until the reader scrolls, clicks or presses a key. `stale` is an element of
 * the page being left that holds the same id (the target page has not rendered yet). Returns a
 * function that stops it. `markClass` styles the mark; `win` is the window (injected so the rules
 * can be tested).
 */
export function pinHeading(id, {win = globalThis.window, stale = null, mark = true, markClass = '', focus = true, onDone} = {}) {
  if (!id || !win) return () => {};
  const doc = win.document;
  const at = `${win.location.pathname}${win.location.hash}`;
  const started = Date.now();
  const timers = [];
  let observer = null;
  let element = null;
  let stopped = false;

  const find = () => {
    const found = doc.getElementById(id);
    return found && found !== stale && found.isConnected ? found : null;
  };
  const stop = () => {
    if (stopped) return;
    stopped = true;
    timers.forEach((t) => win.clearTimeout(t));
    observer?.disconnect();
    READER_EVENTS.forEach((type) => win.removeEventListener(type, stop, true));
    doc.removeEventListener('load', place, true);
    onDone?.();
  };
  function place() {
    if (stopped) return;
    // Another navigation took over, or the page re-rendered the heading.
    if (`${win.location.pathname}${win.location.hash}` !== at) {
      stop();
      return;
    }
    if (!element || !element.isConnected) element = find();
    if (!element) return;
    const delta = scrollDelta(element.getBoundingClientRect().top, navbarBottom(win) + GAP_PX);
    if (delta) win.scrollTo({top: Math.max(0, win.scrollY + delta), behavior: 'instant'});
  }
  const begin = () => {
    if (stopped) return;
    element = find();
    if (!element) {
      if (Date.now() - started < WAIT_MS) timers.push(win.setTimeout(begin, 50));
      else stop();
      return;
    }
    READER_EVENTS.forEach((type) => win.addEventListener(type, stop, {capture: true, passive: true}));
    place();
    if (focus) focusTarget(element);
    if (mark) {
      const marked = element;
      marked.setAttribute(MARK_ATTRIBUTE, '');
      if (markClass) marked.classList.add(markClass);
      timers.push(
        win.setTimeout(() => {
          marked.removeAttribute(MARK_ATTRIBUTE);
          if (markClass) marked.classList.remove(markClass);
        }, MARK_MS),
      );
    }
    // The layout grows: re-pin in the same frame. Images report their load; `hold` catches the rest.
    if (typeof win.ResizeObserver === 'function') {
      observer = new win.ResizeObserver(place);
      observer.observe(doc.body);
    }
    doc.addEventListener('load', place, true);
    // The table of contents follows scroll events, and it may mount after the scroll.
    const nudge = () => doc.dispatchEvent(new win.Event('scroll'));
    win.requestAnimationFrame?.(() => win.requestAnimationFrame(nudge));
    timers.push(win.setTimeout(nudge, 300));
    const holdUntil = Date.now() + PIN_MS;
    const hold = () => {
      if (stopped) return;
      place();
      if (Date.now() < holdUntil) timers.push(win.setTimeout(hold, CHECK_MS));
      else stop();
    };
    timers.push(win.setTimeout(hold, CHECK_MS));
  };
  begin();
  return stop;
}
