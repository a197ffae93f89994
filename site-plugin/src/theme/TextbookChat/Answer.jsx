/**
 * One assistant answer: Markdown with [n] citation links, sources, low-confidence topics, copy,
 * share (`message.asked`: the question and the page it was asked on) and feedback. Also the
 * book's passage shown while a model writes (`message.passage`: 'writing', or 'kept' when no
 * answer came), marked as a quote from the book.
 */
import React from 'react';
import {citationLabel, topicLabel} from '../../client/citations.mjs';
import {askLink} from '../../client/asklink.mjs';
import {answerAsMarkdown} from '../../client/copy.mjs';
import {fill} from '../../client/labels.mjs';
import CopyButton from './CopyButton';
import {LinkIcon, QuoteIcon, ThumbDownIcon, ThumbUpIcon, WarningIcon} from './Icons';
import Markdown from './Markdown';
import styles from './styles.module.css';

const clsx = (...names) => names.filter(Boolean).join(' ');

export function TargetLink({url, resolve, onNavigate, className, children, ...rest}) {
  const target = resolve(url);
  if (!target) return <span className={className}>{children}</span>;
  if (!target.internal) {
    return (
      <a className={className} href={target.href} target="_blank" rel="noopener noreferrer nofollow" {...rest}>
        {children}
      </a>
    );
  }
  return (
    <a className={className} href={target.to} onClick={(event) => onNavigate(event, target)} {...rest}>
      {children}
    </a>
  );
}

/** A section only the book's default language has: marked in the reader's language. */
export function Untranslated({item, mark, labels}) {
  if (!item?.untranslated || !mark) return null;
  return (
    <span className={styles.untranslated} title={labels.untranslatedTitle} data-untranslated="">
      {mark}
    </span>
  );
}

function Feedback({message, labels, onRate, onComment}) {
  const rated = message.rating;
  const [comment, setComment] = React.useState('');
  if (!message.requestId) return null;
  const field = `textbook-chat-comment-${message.id}`;
  return (
    <>
      <button
        type="button"
        className={clsx(styles.iconButton, rated === 'up' && styles.pressed)}
        aria-label={labels.feedbackUp}
        title={labels.feedbackUp}
        aria-pressed={rated === 'up'}
        disabled={Boolean(rated) || message.rating_pending}
        onClick={() => onRate(message, 'up')}>
        <ThumbUpIcon />
      </button>
      <button
        type="button"
        className={clsx(styles.iconButton, rated === 'down' && styles.pressed)}
        aria-label={labels.feedbackDown}
        title={labels.feedbackDown}
        aria-pressed={rated === 'down'}
        disabled={Boolean(rated) || message.rating_pending}
        onClick={() => onRate(message, 'down')}>
        <ThumbDownIcon />
      </button>
      {rated && <span className={styles.feedbackNote} role="status">{labels.feedbackThanks}</span>}
      {message.ratingError && <span className={styles.feedbackNote} role="alert">{message.ratingError}</span>}
      {rated && !message.commented && (
        <form
          className={styles.comment}
          onSubmit={(event) => {
            event.preventDefault();
            if (comment.trim()) onComment(message, comment.trim());
          }}>
          <label htmlFor={field} className={styles.srOnly}>{labels.feedbackComment}</label>
          <textarea
            id={field}
            className={styles.input}
            rows={2}
            maxLength={2000}
            dir="auto"
            value={comment}
            placeholder={labels.feedbackComment}
            readOnly={Boolean(message.comment_pending)}
            onChange={(event) => setComment(event.target.value)}
          />
          <button type="submit" className="button button--secondary button--sm" disabled={!comment.trim() || message.comment_pending}>
            {labels.feedbackSend}
          </button>
        </form>
      )}
    </>
  );
}

export default function Answer({message, labels, pageLabels = {}, untranslatedMark = '', resolve, onNavigate, onRate, onComment}) {
  const citations = message.citations || [];
  const byNumber = new Map(citations.map((c) => [c.n, c]));
  const renderCitation = (n) => {
    const citation = byNumber.get(n);
    return (
      <TargetLink
        url={citation.url}
        resolve={resolve}
        onNavigate={onNavigate}
        className={styles.citeMarker}
        aria-label={fill(labels.source, {n, title: citationLabel(citation, pageLabels)})}
        data-citation={n}>
        [{n}]
      </TargetLink>
    );
  };
  // The answer as Markdown a reader can paste anywhere: its citations as links to the sections.
  const asMarkdown = () =>
    answerAsMarkdown(message.content, citations, {
      absolute: (url) => {
        const target = resolve(url);
        if (!target) return null;
        return target.internal ? new URL(target.to, window.location.href).href : target.href;
      },
      label: (citation) => citationLabel(citation, pageLabels),
      sourcesTitle: labels.sources,
    });
  // The closest passage (the book may not answer exactly) is shown as a place to read, not as a
  // warning: its own note, the quote, and the closest sections (the quoted one first).
  const closest = message.outcome === 'closest';
  return (
    <div
      className={clsx(styles.answer, message.lowConfidence && !closest && styles.lowConfidence, closest && styles.closest, message.passage && styles.passage)}
      data-message={message.id}
      data-outcome={message.outcome || undefined}
      data-low-confidence={message.lowConfidence ? 'true' : undefined}
      data-passage={message.passage || undefined}
      data-streaming={message.streaming ? 'true' : undefined}
      // The passage shown while the answer is written, and the answer's checked sentences as
      // they come, are not read out: the answer replacing them will be (the status line says so).
      aria-live={message.passage === 'writing' || message.streaming ? 'off' : undefined}>
      {message.passage && (
        <p className={styles.passageNote} data-passage-label="">
          <QuoteIcon /> {message.passage === 'kept' ? labels.passageKept : labels.passageWhileWriting}
        </p>
      )}
      {message.offlineFallback && (
        <p className={styles.lowConfidenceNote} data-offline-fallback="true">{labels.offlineFallback}</p>
      )}
      {closest && (
        <p className={styles.closestNote} data-closest-note="">
          <QuoteIcon /> {labels.closestPassage}
        </p>
      )}
      {message.lowConfidence && !closest && (
        <p className={styles.lowConfidenceNote}>
          <WarningIcon /> 
          {labels.lowConfidence}
        </p>
      )}
      <Markdown text={message.content} citations={citations} renderCitation={renderCitation} resolve={resolve} onNavigate={onNavigate} labels={labels} />
      {message.lowConfidence && message.relatedTopics && message.relatedTopics.length > 0 && (
        <nav aria-label={closest ? labels.closestSections : labels.relatedTopics} className={styles.sources} data-related="">
          <p className={styles.sourcesTitle}>{closest ? labels.closestSections : labels.relatedTopics}</p>
          <ul>
            {message.relatedTopics.map((topic, i) => (
              <li key={i}>
                <TargetLink url={topic.url} resolve={resolve} onNavigate={onNavigate}>
                  <bdi>{topicLabel(topic, pageLabels)}</bdi>
                </TargetLink>
                <Untranslated item={topic} mark={untranslatedMark} labels={labels} />
              </li>
            ))}
          </ul>
        </nav>
      )}
      {citations.length > 0 && !closest && (
        <nav aria-label={labels.sources} className={styles.sources}>
          <p className={styles.sourcesTitle}>{labels.sources}</p>
          <ol>
            {citations.map((citation) => (
              <li key={citation.n} value={citation.n}>
                <TargetLink url={citation.url} resolve={resolve} onNavigate={onNavigate} data-source={citation.n}>
                  <bdi>{citationLabel(citation, pageLabels)}</bdi>
                </TargetLink>
                <Untranslated item={citation} mark={untranslatedMark} labels={labels} />
              </li>
            ))}
          </ol>
        </nav>
      )}
      {!message.streaming && (
      <div className={styles.feedback}>
        <CopyButton text={asMarkdown} label={labels.copyAnswer} copiedLabel={labels.copied} />
        {message.asked && (
          // A link that opens the page the question was asked on and asks it again.
          <CopyButton
            text={() => askLink(window.location.origin, message.asked.page, message.asked.question)}
            label={labels.share}
            title={labels.shareTitle}
            copiedLabel={labels.linkCopied}
            icon={<LinkIcon />}
            data-share=""
          />
        )}
        <Feedback message={message} labels={labels} onRate={onRate} onComment={onComment} />
      </div>
      )}
    </div>
  );
}
