/** The chat widget: floating button, panel, conversation and "Ask about this". Swizzle it to customise. */
import React, {useCallback, useEffect, useRef, useState} from 'react';
import {useHistory, useLocation} from '@docusaurus/router';
import useDocusaurusContext from '@docusaurus/useDocusaurusContext';
import {usePluginData} from '@docusaurus/useGlobalData';
import {ApiError, endpoint, normaliseAnswer, postAnswer, postJson, refusalText} from '../../client/api.mjs';
import {isBot, readAskLink} from '../../client/asklink.mjs';
import {hashToId, topicLabel} from '../../client/citations.mjs';
import {isolate} from '../../client/direction.mjs';
import {languageName, localizedCitationTarget} from '../../client/locale.mjs';
import {pinHeading} from '../../client/pin.mjs';
import {SEARCH_AFTER_MS, readSections, searchBody, searchBoxQuery, searchMemory, searchPause, searchQuery} from '../../client/search.mjs';
import {createInFlightGuard, historyForRequest, loadConversation, saveConversation} from '../../client/conversation.mjs';
import {ARIA_SHORTCUT, OPEN_EVENT, fill, isOpenShortcut, shortcutLabel} from '../../client/labels.mjs';
import {keptPassage, readSources, rememberWrites, sourcesDelay} from '../../client/waiting.mjs';
import Answer, {TargetLink, Untranslated} from './Answer';
import {ChatIcon, CloseIcon, NarrowIcon, StopIcon, WidenIcon} from './Icons';
import SelectionPopover from './SelectionPopover';
import styles from './styles.module.css';

const PLUGIN_NAME = 'docusaurus-plugin-textbook-chat';
const WIDE_KEY = 'textbook-chat:wide';
const EXCERPT_CHARS = 280;
const PHONE_QUERY = '(max-width: 600px)';
// A new answer, or the book's passage while it is written, starts no lower than this share of the log.
const UPPER_PART = 0.4;

let counter = 0;
const newId = () => `m${Date.now().toString(36)}${(counter += 1)}`;
const excerpt = (text) => (text.length > EXCERPT_CHARS ? `${text.slice(0, EXCERPT_CHARS)}…` : text);
const samePath = (a, b) => a.replace(/\/+$/, '') === b.replace(/\/+$/, '');

function sessionStore() {
  try {
    return window.sessionStorage;
  } catch {
    return null;
  }
}

export default function TextbookChat() {
  const config = usePluginData(PLUGIN_NAME);
  const {siteConfig, i18n} = useDocusaurusContext();
  const history = useHistory();
  const location = useLocation();
  const {labels, apiUrl, requestTimeoutMs} = config;
  const pageLabels = config.pageLabels || {};
  // How a section only the default language has is marked: that language's name, in the reader's.
  const untranslatedMark = React.useMemo(
    () => (i18n && i18n.currentLocale !== i18n.defaultLocale ? fill(labels.untranslated, {language: languageName(i18n.defaultLocale, i18n.currentLocale)}) : ''),
    [i18n, labels.untranslated],
  );
  const examples = React.useMemo(
    () => config.exampleQuestions ?? (config.exampleTopics || []).map((topic) => fill(labels.exampleQuestion, {topic})),
    [config.exampleQuestions, config.exampleTopics, labels.exampleQuestion],
  );

  const [open, setOpen] = useState(false);
  const [messages, setMessages] = useState([]);
  const [loaded, setLoaded] = useState(false);
  const [input, setInput] = useState('');
  const [pending, setPending] = useState(false);
  const [error, setError] = useState(null);
  const [selection, setSelection] = useState(null);
  const [wide, setWide] = useState(false);
  // What POST /sources found for the question being answered: {seq, sources, passage}.
  const [found, setFound] = useState(null);
  // The model's answer as it is written, its checked sentences so far: {seq, answer, citations}.
  const [written, setWritten] = useState(null);
  // What the box finds as the reader types: {query, sections}; the searches lately made; and,
  // while the API refuses the box's searches for going too fast, {until, seconds}.
  const [searched, setSearched] = useState(null);
  const searches = useRef(searchMemory()).current;
  const [searchPaused, setSearchPaused] = useState(null);
  const stopper = useRef(null);
  // The passage on screen for the question being answered (kept if no answer comes).
  const quoted = useRef(null);
  // The answer whose start the log has shown (a new one is scrolled to, not past).
  const shown = useRef(null);
  const askSeq = useRef(0);
  const [keys, setKeys] = useState('Ctrl+/');
  const guard = useRef(createInFlightGuard()).current;
  const linkedWhileAsking = useRef(null); // a linked question that came while one was pending
  const inputRef = useRef(null);
  const toggleRef = useRef(null);
  const logRef = useRef(null);
  const panelRef = useRef(null);
  // The old page's element with the id a widget link goes to (the new page has not rendered yet).
  const leaving = useRef(null);

  // Every #anchor the reader lands on (a citation, a link in an answer or the page, one typed in
  // the address bar): its heading is held at the top while the page's layout grows, until the
  // reader scrolls, and receives focus.
  useEffect(() => {
    const id = hashToId(location.hash);
    const stale = leaving.current;
    leaving.current = null;
    if (!id) return undefined;
    return pinHeading(id, {stale, markClass: styles.targetMark});
  }, [location.pathname, location.hash, location.key]);

  useEffect(() => {
    setMessages(loadConversation(sessionStore()));
    setWide(sessionStore()?.getItem(WIDE_KEY) === '1');
    setKeys(shortcutLabel(window.navigator.platform || window.navigator.userAgentData?.platform || ''));
    setLoaded(true);
  }, []);
  useEffect(() => {
    if (!loaded) return;
    try {
      if (wide) sessionStore()?.setItem(WIDE_KEY, '1');
      else sessionStore()?.removeItem(WIDE_KEY);
    } catch {
      // storage full or blocked: the width just is not remembered
    }
  }, [wide, loaded]);
  useEffect(() => {
    if (loaded) saveConversation(sessionStore(), messages);
  }, [messages, loaded]);
  useEffect(() => {
    if (open) inputRef.current?.focus();
  }, [open, selection]);
  // A new answer opens at its start (with its question above it when both fit); while waiting,
  // the question and the spinner at the bottom are in view.
  useEffect(() => {
    const log = logRef.current;
    if (!log) return;
    const last = messages[messages.length - 1];
    // The book's passage shown while the answer is written opens at its start, as an answer does.
    const passage = pending ? log.querySelector('[data-streaming], [data-passage="writing"]') : null;
    const answer = passage || (!pending && last?.role === 'assistant' ? log.querySelector(`[data-message="${last.id}"]`) : null);
    if (!answer) {
      log.scrollTop = log.scrollHeight;
      return;
    }
    const key = passage ? answer.getAttribute('data-message') : last.id;
    if (shown.current === key && !error) return;
    shown.current = key;
    // (the passage has the sections found between it and its question)
    const question = passage ? log.querySelector(`[data-message="${last?.id}"]`) : answer.previousElementSibling;
    const fits = question && question.offsetHeight < log.clientHeight / 3;
    // ...and the answer (or the passage) then opens in the log's upper part: the sections found
    // between a passage and its question pushed it down until its label alone showed.
    const upper = answer.offsetTop - log.clientHeight * UPPER_PART;
    log.scrollTop = Math.max(0, (fits ? question : answer).offsetTop - 8, upper);
  }, [messages, pending, error, open, found, written?.seq]);

  const close = useCallback(() => {
    setOpen(false);
    toggleRef.current?.focus();
  }, []);

  // Ctrl+/ (⌘/) opens the chat from anywhere, and closes it from inside; Ctrl/⌘+K stays the search's.
  // Pressed in the site's own search box, it hands the box's words to the chat (Enter asks them).
  useEffect(() => {
    const onShortcut = (event) => {
      if (!isOpenShortcut(event)) return;
      event.preventDefault();
      const handed = searchBoxQuery(document.activeElement);
      if (handed) {
        // The search's modal (DocSearch) closes on Escape; the chat's box takes the words.
        document.activeElement.dispatchEvent(new KeyboardEvent('keydown', {key: 'Escape', code: 'Escape', bubbles: true}));
        document.activeElement.blur?.();
        if (!pending) setInput(handed);
        if (open) inputRef.current?.focus();
        else setOpen(true);
        return;
      }
      if (open && panelRef.current?.contains(document.activeElement)) close();
      else if (open) inputRef.current?.focus();
      else setOpen(true);
    };
    document.addEventListener('keydown', onShortcut);
    return () => document.removeEventListener('keydown', onShortcut);
  }, [open, close, pending]);

  // The skip link (theme/SkipToContent) opens the chat, or puts the cursor in its box when open.
  useEffect(() => {
    const onOpen = () => {
      if (open) inputRef.current?.focus();
      else setOpen(true);
    };
    window.addEventListener(OPEN_EVENT, onOpen);
    return () => window.removeEventListener(OPEN_EVENT, onOpen);
  }, [open]);

  // Esc closes the panel wherever focus is (inside the panel the panel's own handler runs first).
  useEffect(() => {
    if (!open) return undefined;
    const onEscape = (event) => {
      if (event.key === 'Escape' && !panelRef.current?.contains(event.target)) close();
    };
    document.addEventListener('keydown', onEscape);
    return () => document.removeEventListener('keydown', onEscape);
  }, [open, close]);

  const resolve = useCallback(
    (url) =>
      localizedCitationTarget(url, {baseUrl: siteConfig.baseUrl, siteUrl: siteConfig.url, origin: window.location.origin, i18n}),
    [siteConfig.baseUrl, siteConfig.url, i18n],
  );

  const onNavigate = useCallback(
    (event, target) => {
      if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
      event.preventDefault();
      const id = hashToId(target.hash);
      const samePage = !target.pathname || samePath(target.pathname, window.location.pathname);
      leaving.current = samePage || !id ? null : document.getElementById(id);
      history.push(target.pathname ? target.to : `${window.location.pathname}${target.to}`);
      // On a phone the panel covers the page: get out of the way of the section.
      if (window.matchMedia?.(PHONE_QUERY).matches) setOpen(false);
    },
    [history],
  );

  const ask = async (asked) => {
    const typed = (typeof asked === 'string' ? asked : input).trim();
    if (!typed && !selection) {
      inputRef.current?.focus();
      return;
    }
    // A ref, not state: a second click in the same frame must see the first one.
    if (!guard.begin('ask')) return;
    const question = typed || labels.explainSelection;
    const asking = selection;
    const shownQuestion = {id: newId(), role: 'user', content: question, ...(asking ? {selection: excerpt(asking.text)} : {})};
    const path = asking ? 'selection' : 'chat';
    const body = asking
      ? {question, selected_text: asking.text, page_url: asking.pageUrl, ...(asking.anchor ? {anchor: asking.anchor} : {}), ...(asking.heading ? {heading: asking.heading} : {})}
      : {question, history: historyForRequest(messages), page_url: window.location.pathname};
    // The question shows at once; it leaves the box, and comes back if the answer fails or is stopped.
    setMessages((previous) => [...previous, shownQuestion]);
    setInput('');
    setSelection(null);
    setPending(true);
    setError(null);
    const seq = (askSeq.current += 1);
    const controller = new AbortController();
    stopper.current = controller;
    // /sources ends with the answer, or with Stop (which aborts `controller`).
    const preview = new AbortController();
    controller.signal.addEventListener('abort', () => preview.abort());
    quoted.current = null;
    let sourcesTimer = null;
    // No answer came: the question goes back in the box so the reader can send it again; a
    // passage the reader was shown stays in the conversation, under its question, still a quote.
    const giveBack = () => {
      const kept = keptPassage(quoted.current, newId());
      if (kept) setMessages((previous) => [...previous, kept]);
      else setMessages((previous) => previous.filter((m) => m.id !== shownQuestion.id));
      setInput(typed);
      setSelection(asking);
    };
    try {
      if (!asking) {
        // Lambda buffers the answer: while a model writes it, show the sections it will draw on
        // and the book's own passage (at once where a model is known to write, else after a
        // moment, so a quick offline answer needs no second request).
        sourcesTimer = window.setTimeout(() => {
          postJson(fetch, endpoint(apiUrl, 'sources'), body, {timeoutMs: requestTimeoutMs, labels, signal: preview.signal})
            .then((data) => {
              const read = readSources(data);
              rememberWrites(sessionStore(), read);
              if (seq !== askSeq.current || preview.signal.aborted) return;
              quoted.current = read.passage;
              setFound({seq, sources: read.sources, passage: read.passage});
            })
            .catch(() => {}); // only a preview: an API without /sources just shows the spinner
        }, sourcesDelay(sessionStore()));
      }
      // Where a model writes the answer and the API streams it, its sentences show as they are
      // written, each once the API has checked it against the book; the answer replaces them.
      const onPartial = asking
        ? null
        : (partial) => {
            if (seq === askSeq.current && !controller.signal.aborted) setWritten({seq, answer: partial.answer, citations: partial.citations});
          };
      const answer = normaliseAnswer(
        await postAnswer(fetch, config, path, body, {timeoutMs: requestTimeoutMs, labels, signal: controller.signal, onPartial}),
      );
      setMessages((previous) => [
        ...previous,
        {
          id: newId(),
          role: 'assistant',
          content: refusalText(answer, labels),
          citations: answer.citations,
          lowConfidence: answer.lowConfidence,
          outcome: answer.outcome,
          offlineFallback: Boolean(answer.offlineFallback),
          relatedTopics: answer.relatedTopics,
          requestId: answer.requestId,
          // What Share links to: this question, on the page it was asked on.
          ...(asking ? {} : {asked: {question, page: body.page_url}}),
        },
      ]);
    } catch (failure) {
      // The question goes back in the box so the reader can send it again.
      giveBack();
      if (!(failure instanceof ApiError && failure.kind === 'aborted')) {
        setError(failure instanceof ApiError ? failure.message : labels.errorUnknown);
      }
    } finally {
      window.clearTimeout(sourcesTimer);
      preview.abort();
      quoted.current = null;
      stopper.current = null;
      guard.end('ask');
      setWritten(null);
      setPending(false);
    }
  };

  const stop = (event) => {
    // The send button takes this one's place as the answer ends: the click must not submit.
    event?.preventDefault();
    stopper.current?.abort();
    inputRef.current?.focus();
  };

  const patch = (id, change) => setMessages((previous) => previous.map((m) => (m.id === id ? {...m, ...change} : m)));

  const rate = async (message, rating) => {
    if (message.rating || !guard.begin(`rate:${message.id}`)) return;
    patch(message.id, {rating_pending: true, ratingError: null});
    try {
      await postJson(fetch, endpoint(apiUrl, 'feedback'), {request_id: message.requestId, rating}, {timeoutMs: requestTimeoutMs, labels});
      patch(message.id, {rating, rating_pending: false});
    } catch (failure) {
      patch(message.id, {rating_pending: false, ratingError: failure instanceof ApiError ? failure.message : labels.feedbackError});
    } finally {
      guard.end(`rate:${message.id}`);
    }
  };

  const comment = async (message, text) => {
    if (!guard.begin(`comment:${message.id}`)) return;
    patch(message.id, {comment_pending: true, ratingError: null});
    try {
      await postJson(fetch, endpoint(apiUrl, 'feedback'), {request_id: message.requestId, rating: message.rating, comment: text}, {timeoutMs: requestTimeoutMs, labels});
      patch(message.id, {commented: true, comment_pending: false});
    } catch (failure) {
      patch(message.id, {comment_pending: false, ratingError: failure instanceof ApiError ? failure.message : labels.feedbackError});
    } finally {
      guard.end(`comment:${message.id}`);
    }
  };

  const askAboutSelection = (picked) => {
    setSelection(picked);
    setError(null);
    setOpen(true);
  };

  // A link that asks (`?ask-textbook=…`, client/asklink.mjs) opens the chat and asks once, as a
  // new turn of the tab's conversation: in a reader's browser after hydration (no crawler, not
  // while prerendered), and the parameter leaves the URL so a reload or Back does not ask again.
  // Read on load and on every navigation in the app (a book's own link may ask).
  useEffect(() => {
    if (!loaded || isBot(window.navigator.userAgent)) return undefined;
    const take = () => {
      const linked = readAskLink(window.location.href);
      // Through the app's router (history.replaceState underneath), so what it holds as the
      // location loses the parameter too: a Tabs query string written later cannot bring it back.
      if (linked.url) history.replace(linked.url, history.location.state);
      if (!linked.question) return;
      setOpen(true);
      if (guard.isBusy('ask')) linkedWhileAsking.current = linked.question;
      else ask(linked.question);
    };
    if (!document.prerendering) take();
    else document.addEventListener('prerenderingchange', take, {once: true});
    return () => document.removeEventListener('prerenderingchange', take);
  }, [loaded, location.key]); // (not `ask`: a new function each render)

  // A link that asks, followed while an answer is on its way: asked as the next turn once that
  // answer ends (the last such link, if several), never dropped.
  useEffect(() => {
    if (pending || !linkedWhileAsking.current) return;
    const question = linkedWhileAsking.current;
    linkedWhileAsking.current = null;
    ask(question);
  }, [pending]); // (not `ask`: a new function each render)

  // The box searches the book as the reader types (a pause of SEARCH_AFTER_MS), with no model;
  // Enter asks. Words searched lately are listed again without a request. A search refused for
  // going too fast says so, and the box searches again once the wait is over; any other
  // failure just lists nothing.
  const query = open && !pending && !selection ? searchQuery(input) : '';
  useEffect(() => {
    if (!query) return undefined;
    const known = searches.get(query);
    if (known) {
      setSearched({query, sections: known});
      return undefined;
    }
    const controller = new AbortController();
    const after = Math.max(SEARCH_AFTER_MS, searchPaused ? searchPaused.until - Date.now() : 0);
    const timer = window.setTimeout(() => {
      postJson(fetch, endpoint(apiUrl, 'sources'), searchBody(query, window.location.pathname),
        {timeoutMs: requestTimeoutMs, labels, signal: controller.signal})
        .then((data) => {
          if (controller.signal.aborted) return;
          const sections = readSections(data);
          searches.set(query, sections);
          setSearchPaused(null);
          setSearched({query, sections});
        })
        .catch((failure) => {
          if (!controller.signal.aborted) setSearchPaused(searchPause(failure));
        });
    }, after);
    return () => {
      window.clearTimeout(timer);
      controller.abort();
    };
  }, [query, apiUrl, searchPaused]); // (labels and the timeout do not change while the reader types)
  const searchResults = query && searched?.query === query ? searched.sections : [];
  const searchWait = query && searchPaused && searchResults.length === 0 ? searchPaused.seconds : null;

  const writing = pending && written?.seq === askSeq.current ? written : null;
  const waitingPassage = pending && !writing && found?.seq === askSeq.current && found.passage ? found.passage : null;

  const onKeyDown = (event) => {
    if (event.key === 'Escape') {
      close();
    }
  };

  return (
    <div data-textbook-chat="" className={styles.root}>
      {config.selection && (
        <SelectionPopover selector={config.selectionSelector} maxChars={config.maxSelectionChars} labels={labels} onAsk={askAboutSelection} />
      )}
      <button
        ref={toggleRef}
        type="button"
        className={`${styles.toggle} ${open ? styles.toggleOpen : ''}`}
        aria-expanded={open}
        aria-controls="textbook-chat-panel"
        aria-label={open ? labels.close : labels.button}
        aria-keyshortcuts={ARIA_SHORTCUT}
        title={`${open ? labels.close : labels.button} (${fill(labels.shortcut, {keys: isolate(keys)})})`}
        onClick={() => (open ? close() : setOpen(true))}>
        {open ? <CloseIcon /> : <ChatIcon />}
        <span className={styles.toggleText}>{open ? '' : labels.button}</span>
      </button>
      {open && (
        <section
          ref={panelRef}
          id="textbook-chat-panel"
          className={`${styles.panel} ${wide ? styles.panelWide : ''}`}
          data-wide={wide ? 'true' : undefined}
          role="dialog"
          aria-modal="false"
          aria-labelledby="textbook-chat-title"
          onKeyDown={onKeyDown}>
          <header className={styles.header}>
            <h2 id="textbook-chat-title" className={styles.title}>{labels.title}</h2>
            {messages.length > 0 && (
              <button type="button" className={styles.textButton} onClick={() => setMessages([])} disabled={pending}>
                {labels.clear}
              </button>
            )}
            <button
              type="button"
              className={`${styles.iconButton} ${styles.widen}`}
              aria-label={wide ? labels.narrow : labels.widen}
              title={wide ? labels.narrow : labels.widen}
              aria-pressed={wide}
              onClick={() => setWide((w) => !w)}>
              {wide ? <NarrowIcon /> : <WidenIcon />}
            </button>
            <button type="button" className={styles.iconButton} aria-label={labels.close} title={labels.close} onClick={close}>
              <CloseIcon />
            </button>
          </header>
          <div ref={logRef} className={styles.log} role="log" aria-live="polite" aria-relevant="additions">
            {messages.length === 0 && !pending && (
              <div className={styles.empty}>
                <p>{labels.empty}</p>
                {examples.length > 0 && !selection && (
                  <div className={styles.examples} role="group" aria-label={labels.examplesTitle}>
                    <p className={styles.examplesTitle}>{labels.examplesTitle}</p>
                    {examples.map((question) => (
                      <button key={question} type="button" className={styles.example} onClick={() => ask(question)} disabled={pending}>
                        {question}
                      </button>
                    ))}
                  </div>
                )}
              </div>
            )}
            {messages.map((message) =>
              message.role === 'user' ? (
                <div key={message.id} className={styles.question} data-message={message.id}>
                  {message.selection && <blockquote className={styles.quoted} dir="auto">{message.selection}</blockquote>}
                  <p dir="auto">{message.content}</p>
                </div>
              ) : (
                <Answer
                  key={message.id}
                  message={message}
                  labels={labels}
                  pageLabels={pageLabels}
                  untranslatedMark={untranslatedMark}
                  resolve={resolve}
                  onNavigate={onNavigate}
                  onRate={rate}
                  onComment={comment}
                />
              ),
            )}
            {pending && (
              <p className={styles.loading} role="status">
                <span className={styles.spinner} aria-hidden="true" /> {labels.thinking}
                {/* The passage itself is not read out (the answer replacing it will be): this says it is there. */}
                {waitingPassage && <span className={styles.srOnly}> {labels.passageWhileWriting}</span>}
              </p>
            )}
            {pending && !writing && found?.seq === askSeq.current && found.sources.length > 0 && (
              <nav className={`${styles.sources} ${styles.found}`} aria-label={labels.sourcesFound} data-sources-found="">
                <p className={styles.sourcesTitle}>{labels.sourcesFound}</p>
                <ul>
                  {found.sources.map((source) => (
                    <li key={source.url}>
                      <TargetLink url={source.url} resolve={resolve} onNavigate={onNavigate}>
                        <bdi>{topicLabel(source, pageLabels)}</bdi>
                      </TargetLink>
                      <Untranslated item={source} mark={untranslatedMark} labels={labels} />
                    </li>
                  ))}
                </ul>
              </nav>
            )}
            {writing && (
              <Answer
                message={{id: `writing-${writing.seq}`, role: 'assistant', content: writing.answer, citations: writing.citations, streaming: true}}
                labels={labels}
                pageLabels={pageLabels}
                untranslatedMark={untranslatedMark}
                resolve={resolve}
                onNavigate={onNavigate}
              />
            )}
            {waitingPassage && (
              <Answer
                message={{id: `passage-${found.seq}`, role: 'assistant', content: found.passage.answer, citations: found.passage.citations, passage: 'writing'}}
                labels={labels}
                pageLabels={pageLabels}
                untranslatedMark={untranslatedMark}
                resolve={resolve}
                onNavigate={onNavigate}
              />
            )}
          </div>
          {searchResults.length > 0 && (
            <nav className={styles.search} aria-label={labels.searchResults} data-search-results="">
              <p className={styles.sourcesTitle}>{labels.searchResults}</p>
              <ul>
                {searchResults.map((section) => (
                  <li key={section.url}>
                    <TargetLink url={section.url} resolve={resolve} onNavigate={onNavigate} data-search-result="">
                      <bdi>{section.path.join(' › ')}</bdi>
                    </TargetLink>
                    {section.snippet && <span className={styles.searchSnippet} dir="auto">{section.snippet}</span>}
                  </li>
                ))}
              </ul>
            </nav>
          )}
          {searchWait !== null && (
            <p className={styles.search} role="status" data-search-paused="">
              {fill(labels.searchPaused, {wait: fill(labels.waitSeconds, {n: searchWait})})}
            </p>
          )}
          {error && (
            <p className={styles.error} role="alert">
              {error}
            </p>
          )}
          <form
            className={styles.form}
            onSubmit={(event) => {
              event.preventDefault();
              ask();
            }}>
            {selection && (
              <div className={styles.selectionBox}>
                <blockquote className={styles.quoted} aria-label={labels.selectedText} dir="auto">{excerpt(selection.text)}</blockquote>
                <button type="button" className={styles.iconButton} aria-label={labels.clearSelection} title={labels.clearSelection} onClick={() => setSelection(null)}>
                  <CloseIcon />
                </button>
              </div>
            )}
            <label htmlFor="textbook-chat-input" className={styles.srOnly}>
              {selection ? labels.selectionPlaceholder : labels.placeholder}
            </label>
            <textarea
              id="textbook-chat-input"
              ref={inputRef}
              className={styles.input}
              rows={2}
              dir="auto"
              value={input}
              readOnly={pending}
              placeholder={selection ? labels.selectionPlaceholder : labels.placeholder}
              onChange={(event) => setInput(event.target.value)}
              onKeyDown={(event) => {
                if (event.key === 'Enter' && !event.shiftKey && !event.nativeEvent.isComposing) {
                  event.preventDefault();
                  ask();
                }
              }}
            />
            {pending ? (
              <button key="stop" type="button" className={`button button--secondary ${styles.send}`} onClick={stop} data-stop="">
                <StopIcon /> {labels.stop}
              </button>
            ) : (
              <button key="send" type="submit" className={`button button--primary ${styles.send}`}>
                {labels.send}
              </button>
            )}
            <p className={styles.shortcutHint} aria-hidden="true">{fill(labels.shortcut, {keys: isolate(keys)})}</p>
          </form>
        </section>
      )}
    </div>
  );
}
