/** Reader-facing text: fill a label's {placeholders}, and the keyboard shortcut that opens the chat. */

/** `fill('Wait {wait}', {wait: '3 s'})` → 'Wait 3 s'; an unknown {name} stays as written. */
export function fill(template, values = {}) {
  return String(template ?? '').replace(/\{(\w+)\}/g, (whole, name) => (name in values ? String(values[name]) : whole));
}

/** True on Apple platforms, where the shortcut uses ⌘ instead of Ctrl. */
export function isApple(platform = '') {
  return /Mac|iPhone|iPad|iPod/i.test(platform);
}

/**
 * The shortcut that opens the chat: Ctrl+/ (⌘/ on Apple). Docusaurus search owns Ctrl/⌘+K, the
 * browsers leave Ctrl+/ alone, and "/" alone would fire while typing in the search box.
 */
export function shortcutLabel(platform = '') {
  return isApple(platform) ? '⌘/' : 'Ctrl+/';
}

/** aria-keyshortcuts value for the toggle button. */
export const ARIA_SHORTCUT = 'Control+/ Meta+/';

export function isOpenShortcut(event) {
  return event.key === '/' && (event.ctrlKey || event.metaKey) && !event.altKey && !event.shiftKey;
}

/** The event the skip link sends the widget: open the chat and put the cursor in its question box. */
export const OPEN_EVENT = 'textbook-chat:open';

/** Ask the widget on this page to open (it listens for OPEN_EVENT on window). */
export function requestOpen(target = typeof window === 'undefined' ? null : window) {
  if (!target || typeof target.dispatchEvent !== 'function' || typeof CustomEvent === 'undefined') return false;
  target.dispatchEvent(new CustomEvent(OPEN_EVENT));
  return true;
}
