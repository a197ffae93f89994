/**
 * A followed #anchor keeps its heading at the top of the window while the page's layout grows
 * above it (diagrams drawn after load, images without dimensions, tabs, KaTeX, content inserted
 * any time later), until the reader scrolls, clicks or presses a key; the heading is marked for a
 * moment and receives focus. On a slow phone the diagrams may draw for tens of seconds: the pin
 * has no time limit, only the reader lets go of it.
 */

// How long to wait for the target page to render the heading.
export const WAIT_MS = 30000;
// For this long the pin also checks the heading every CHECK_MS; later every SLOW_CHECK_MS. Any
// growth of the heading's ancestors moves it back in the same frame (ResizeObserver), before
// the browser paints: the checks catch only what moves it without resizing them.
export const PIN_MS = 10000;
export const MARK_MS = 2000;
// Below the navbar, as far as Docusaurus's own heading links leave it (scroll-margin-top ≈ 0.5rem).
export const GAP_PX = 12;
const CHECK_MS = 150;
const SLOW_CHECK_MS = 1000;
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
 * it, until the reader scrolls, clicks or presses a key (or another navigation). `stale` is an element of
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
  let watcher = null;
  let observed = null;
  let element = null;
  let stopped = false;
  let begun = false;
  let holdTimer = null;

  const find = () => {
    const found = doc.getElementById(id);
    return found && found !== stale && found.isConnected ? found : null;
  };
  const stop = () => {
    if (stopped) return;
    stopped = true;
    timers.forEach((t) => win.clearTimeout(t));
    win.clearTimeout(holdTimer);
    observer?.disconnect();
    watcher?.disconnect();
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
    if (observer && observed !== element) observeAncestors();
    const delta = scrollDelta(element.getBoundingClientRect().top, navbarBottom(win) + GAP_PX);
    if (delta) win.scrollTo({top: Math.max(0, win.scrollY + delta), behavior: 'instant'});
  }
  // Sizes that change when anything above the heading grows: each of its ancestors (a page
  // whose body keeps the window's height grows inside it, where an observer of the body alone
  // sees nothing) and the body.
  function observeAncestors() {
    observer.disconnect();
    observed = element;
    for (let node = element.parentElement; node; node = node.parentElement) observer.observe(node);
    observer.observe(doc.body); // again if it is an ancestor: observing twice is once
  }
  const begin = () => {
    if (stopped || begun) return;
    element = find();
    if (!element) return;
    begun = true;
    watcher?.disconnect();
    watcher = null;
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
      observeAncestors();
    }
    doc.addEventListener('load', place, true);
    // The table of contents follows scroll events, and it may mount after the scroll.
    const nudge = () => doc.dispatchEvent(new win.Event('scroll'));
    win.requestAnimationFrame?.(() => win.requestAnimationFrame(nudge));
    timers.push(win.setTimeout(nudge, 300));
    const fastUntil = Date.now() + PIN_MS;
    const hold = () => {
      if (stopped) return;
      place();
      holdTimer = win.setTimeout(hold, Date.now() < fastUntil ? CHECK_MS : SLOW_CHECK_MS);
    };
    holdTimer = win.setTimeout(hold, CHECK_MS);
  };
  const wait = () => {
    begin();
    if (stopped || begun) return;
    if (Date.now() - started < WAIT_MS) timers.push(win.setTimeout(wait, 50));
    else stop();
  };
  // The reader may scroll before the target page has rendered: that lets go too.
  READER_EVENTS.forEach((type) => win.addEventListener(type, stop, {capture: true, passive: true}));
  wait();
  // The heading is placed as soon as the page renders it, before the browser paints.
  if (!stopped && !begun && typeof win.MutationObserver === 'function') {
    watcher = new win.MutationObserver(begin);
    watcher.observe(doc, {childList: true, subtree: true});
  }
  return stop;
}
