/** One assistant answer: Markdown with [n] citation links, sources, low-confidence topics and feedback. */
import React from 'react';
import {citationLabel, topicLabel} from '../../client/citations.mjs';
import {fill} from '../../client/labels.mjs';
import {ThumbDownIcon, ThumbUpIcon, WarningIcon} from './Icons';
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

function Feedback({message, labels, onRate}) {
  const rated = message.rating;
  if (!message.requestId) return null;
  return (
    <div className={styles.feedback}>
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
    </div>
  );
}

export default function Answer({message, labels, pageLabels = {}, resolve, onNavigate, onRate}) {
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
  const onLink = (event, href) => {
    const target = resolve(href);
    if (target && target.internal) onNavigate(event, target);
  };
  return (
    <div className={clsx(styles.answer, message.lowConfidence && styles.lowConfidence)} data-low-confidence={message.lowConfidence ? 'true' : undefined}>
      {message.offlineFallback && (
        <p className={styles.lowConfidenceNote} data-offline-fallback="true">{labels.offlineFallback}</p>
      )}
      {message.lowConfidence && (
        <p className={styles.lowConfidenceNote}>
          <WarningIcon /> 
          {labels.lowConfidence}
        </p>
      )}
      <Markdown text={message.content} citations={citations} renderCitation={renderCitation} onLink={onLink} labels={labels} />
      {message.lowConfidence && message.relatedTopics && message.relatedTopics.length > 0 && (
        <nav aria-label={labels.relatedTopics} className={styles.sources}>
          <p className={styles.sourcesTitle}>{labels.relatedTopics}</p>
          <ul>
            {message.relatedTopics.map((topic, i) => (
              <li key={i}>
                <TargetLink url={topic.url} resolve={resolve} onNavigate={onNavigate}>
                  {topicLabel(topic, pageLabels)}
                </TargetLink>
              </li>
            ))}
          </ul>
        </nav>
      )}
      {citations.length > 0 && (
        <nav aria-label={labels.sources} className={styles.sources}>
          <p className={styles.sourcesTitle}>{labels.sources}</p>
          <ol>
            {citations.map((citation) => (
              <li key={citation.n} value={citation.n}>
                <TargetLink url={citation.url} resolve={resolve} onNavigate={onNavigate} data-source={citation.n}>
                  {citationLabel(citation, pageLabels)}
                </TargetLink>
              </li>
            ))}
          </ol>
        </nav>
      )}
      <Feedback message={message} labels={labels} onRate={onRate} />
    </div>
  );
}
