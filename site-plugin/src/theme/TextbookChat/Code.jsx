/**
 * A code block in an answer, highlighted as the site highlights its own: prism-react-renderer (what
 * Docusaurus uses) with the site's `themeConfig.prism` theme, light or dark as the page is now.
 * Docusaurus's @theme/CodeBlock cannot be used here: the widget lives in Root, above the
 * ColorModeProvider that component needs.
 */
import React from 'react';
import useDocusaurusContext from '@docusaurus/useDocusaurusContext';
import {Highlight} from 'prism-react-renderer';
import CopyButton from './CopyButton';
import styles from './styles.module.css';

/** The page's colour mode, as Infima marks it on <html data-theme>, followed as it changes. */
function useDarkMode() {
  const [dark, setDark] = React.useState(false);
  React.useEffect(() => {
    const root = document.documentElement;
    const read = () => setDark(root.getAttribute('data-theme') === 'dark');
    read();
    const observer = new MutationObserver(read);
    observer.observe(root, {attributes: true, attributeFilter: ['data-theme']});
    return () => observer.disconnect();
  }, []);
  return dark;
}

export default function Code({value, lang, labels}) {
  const {siteConfig} = useDocusaurusContext();
  const prism = siteConfig.themeConfig?.prism || {};
  const dark = useDarkMode();
  const theme = (dark && prism.darkTheme) || prism.theme;
  const language = (lang || 'text').toLowerCase();
  // The copy button sits in a bar of its own above the code, never over it: a line of any
  // length (or one scrolled sideways) and a label of any length in the site's language.
  const bar = (style) => (
    <div className={styles.codeBar} style={style} data-code-bar="">
      <span className={styles.codeLanguage}>{lang || ''}</span>
      <CopyButton text={value} label={labels.copyCode} copiedLabel={labels.copied} className={styles.copy} />
    </div>
  );
  return (
    <div className={styles.codeBlock} dir="ltr">
      {theme ? (
        <Highlight theme={theme} code={value} language={language}>
          {({className, style, tokens, getLineProps, getTokenProps}) => (
            <>
              {bar(style)}
              <pre className={className} style={style} data-language={lang || undefined}>
                <code>
                  {tokens.map((line, i) => (
                    <span key={i} {...getLineProps({line, className: styles.codeLine})}>
                      {line.map((token, key) => (
                        <span key={key} {...getTokenProps({token})} />
                      ))}
                      {'\n'}
                    </span>
                  ))}
                </code>
              </pre>
            </>
          )}
        </Highlight>
      ) : (
        <>
          {bar()}
          <pre data-language={lang || undefined}>
            <code>{value}</code>
          </pre>
        </>
      )}
    </div>
  );
}
