/** A button that puts text on the clipboard and says so for a moment. */
import React from 'react';
import {CopyIcon} from './Icons';
import styles from './styles.module.css';

/** Put text on the clipboard; the Clipboard API needs a secure context, else a hidden textarea. */
export async function copyText(text) {
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

/**
 * `text` is a string or a function giving it (built only when the reader copies); `icon` and
 * `title` (the tooltip) are the copy icon and `label` unless given. "Copied" is also said in a
 * status line, added while it shows, which screen readers announce (a changed button name is
 * not always read); none is left empty in the page.
 */
export default function CopyButton({text, label, copiedLabel, className = '', icon = <CopyIcon />, title = label, ...rest}) {
  const [copied, setCopied] = React.useState(false);
  React.useEffect(() => {
    if (!copied) return undefined;
    const timer = window.setTimeout(() => setCopied(false), 2000);
    return () => window.clearTimeout(timer);
  }, [copied]);
  return (
    <>
      <button
        type="button"
        className={`${styles.iconButton} ${className}`}
        aria-label={copied ? copiedLabel : label}
        title={title}
        onClick={() => copyText(typeof text === 'function' ? text() : text).then(() => setCopied(true), () => setCopied(false))}
        {...rest}>
        {icon}
        <span>{copied ? copiedLabel : label}</span>
      </button>
      {copied && <span className={styles.srOnly} role="status">{copiedLabel}</span>}
    </>
  );
}
