/** Plugin options: documented defaults, the Joi schema, validation and the public (browser) subset. */
'use strict';

const {Joi} = require('@docusaurus/utils-validation');

/** Texts shown by the widget; every one can be overridden (e.g. to translate the widget). */
const DEFAULT_LABELS = Object.freeze({
  button: 'Ask the textbook',
  title: 'Ask this textbook',
  placeholder: 'Ask a question about this textbook…',
  send: 'Ask',
  close: 'Close chat',
  clear: 'New conversation',
  askSelection: 'Ask about this',
  selectionPlaceholder: 'What do you want to know about the selected text?',
  sources: 'Sources',
  relatedTopics: 'These sections may help',
  lowConfidence: 'I am not sure the textbook answers this.',
  // Shown above an answer the API marks "mode": "offline-fallback" (the model failed).
  offlineFallback: 'The assistant’s model is not answering right now, so these are the book’s own words.',
  // The API's refusals, by case (a translated site translates these; the API's text is English).
  refusalNotCovered: "The book doesn't cover this, so I won't guess. These sections are the closest:",
  // {names}: what the question names that the book never mentions, quoted.
  refusalNotMentioned: "The book doesn't mention {names}, so I won't guess. These sections are the closest:",
  refusalEmptyQuestion: 'Please ask a question about the book in a few words, for example “What is …?”',
  refusalOffTopic: 'I can only answer questions about this book.',
  // Above the closest passage (the API's outcome "closest": the book may not answer exactly),
  // and above the sections listed with it (the quoted one first).
  closestPassage: 'The book may not answer this exactly. The closest passage:',
  closestSections: 'The closest sections',
  thinking: 'Looking through the textbook…',
  feedbackUp: 'This answer helped',
  feedbackDown: 'This answer did not help',
  feedbackThanks: 'Thanks for the feedback!',
  empty: 'Ask anything about this textbook. Answers cite the sections they come from.',
  examplesTitle: 'Try asking',
  // {topic}: a page name from the sidebar (the default examples are drawn from the book).
  exampleQuestion: 'What does the textbook say about {topic}?',
  // {keys}: the keyboard shortcut that opens the chat (Ctrl+/ or ⌘/).
  shortcut: 'Shortcut: {keys}',
  // The skip link after Docusaurus's "Skip to main content" (shown on keyboard focus); it opens
  // the chat. {keys}: the shortcut.
  skipToChat: 'Ask the textbook ({keys})',
  widen: 'Widen the chat',
  narrow: 'Make the chat narrower',
  copyCode: 'Copy',
  copied: 'Copied',
  // Copies the answer as Markdown, its citations as links to the sections.
  copyAnswer: 'Copy answer',
  // Copies a link that opens the page the question was asked on and asks it again
  // (`?ask-textbook=…`); linkCopied says it is on the clipboard.
  share: 'Share',
  shareTitle: 'Copy a link that opens this page and asks this question',
  linkCopied: 'Link copied',
  // Cancels the question being answered; the question goes back in the box.
  stop: 'Stop',
  // Read by screen readers after a link from the book's text to another site.
  newTab: '(opens in a new tab)',
  // A table in an answer (it scrolls sideways when it is wider than the panel).
  table: 'Table',
  feedbackComment: 'What was missing or wrong? (optional)',
  feedbackSend: 'Send',
  // A cited section the reader's language does not have yet; {language}: the book's default
  // language, named in the reader's language (so the mark needs no translation).
  untranslated: '{language}',
  untranslatedTitle: 'Not translated yet: this section is in the original language.',
  // {n}: the citation number; {title}: the section and page.
  source: 'Source {n}: {title}',
  selectedText: 'Selected text',
  clearSelection: 'Stop asking about the selection',
  explainSelection: 'Explain this passage.',
  // {length}, {max}: character counts.
  selectionTooLong: 'That selection is {length} characters long; the assistant reads at most {max}. Select a paragraph or two and try again.',
  sourcesFound: 'Found in the textbook; writing the answer…',
  // Above the sections the box finds as the reader types (no model): a link to each; Enter asks.
  searchResults: 'Sections in the textbook (Enter asks your question)',
  // Instead of that list when the site refused the box's searches for going too fast ({wait}:
  // waitSeconds); the box searches again by itself once the wait is over.
  searchPaused: 'Searching the textbook pauses for {wait}: this site allows only so many searches a minute. Enter still asks your question.',
  // Above the book's own passage, shown (where a model writes the answers) until the written
  // answer replaces it.
  passageWhileWriting: 'From the book, while the answer is written',
  // Above that passage when no answer came (it failed or the reader stopped it).
  passageKept: 'From the book (quoted; no answer was written)',
  errorTimeout: 'The assistant took too long to answer. Please try again in a moment.',
  errorNetwork: 'Could not reach the textbook assistant. Check your connection and try again; your question is still in the box.',
  // {wait}: waitSeconds or waitUnknown.
  errorRateLimited: 'Too many questions at once. Please wait {wait} and ask again.',
  waitSeconds: 'about {n} seconds',
  waitUnknown: 'a little',
  errorUnavailable: 'The assistant is busy or being updated. Please try again in a minute.',
  errorUpstream: 'The assistant could not write an answer just now. Please try again.',
  errorTooLarge: 'That text is too long. Select a shorter passage and try again.',
  errorInvalid: 'The assistant could not understand that request. Try rephrasing it.',
  // {status}: the HTTP status code.
  errorHttp: 'Something went wrong (HTTP {status}). Please try again.',
  errorBadResponse: 'The assistant sent an answer this page cannot read. Please try again.',
  errorUnknown: 'Something went wrong. Please try again.',
  feedbackError: 'Could not send feedback.',
});

/** Every option with its default. `validateOptions({})` returns exactly this (plus Docusaurus's `id`). */
const DEFAULT_OPTIONS = Object.freeze({
  // Where the textbook-chat HTTP API lives (API Gateway URL in production; `textbook-chat serve` listens on 8787).
  apiUrl: 'http://127.0.0.1:8787',
  // Where a model's answer streams on AWS: the `stream` function's URL (the stack's StreamUrl
  // output); null: /chat at apiUrl (`textbook-chat serve` streams there itself).
  streamUrl: null,
  // Build manifest for the indexer; relative paths are resolved against the site folder.
  // Default is outside the published build folder.
  manifestPath: '.textbook-chat/manifest.json',
  // Write llms.txt and llms-full.txt (llmstxt.org) into each locale's build folder: every page
  // of the version readers land on with its exact URL, and every section's text with its #anchor.
  llmsTxt: true,
  // Run `<command> index <docsDir> --manifest <manifestPath> ...args` after the build.
  indexer: Object.freeze({run: false, command: 'textbook-chat', args: Object.freeze([])}),
  // Longest text selection the "Ask about this" popover accepts (the API caps selections too).
  maxSelectionChars: 8000,
  // Show the "Ask about this" popover when the reader selects text in the article.
  selection: true,
  // Where selections count: the rendered Markdown of doc and blog pages.
  selectionSelector: 'article .markdown',
  // Give up on a request after this many milliseconds.
  requestTimeoutMs: 30000,
  // Questions offered on the empty panel; null: drawn from the book (page names in the sidebar), [] for none.
  exampleQuestions: null,
  labels: DEFAULT_LABELS,
  // Labels per locale of an i18n site, over `labels`: {fr: {button: 'Demander au manuel'}}.
  localeLabels: Object.freeze({}),
});

const labelsSchema = Joi.object(
  Object.fromEntries(
    Object.entries(DEFAULT_LABELS).map(([key, value]) => [key, Joi.string().min(1).default(value)]),
  ),
).default();

const OPTIONS_SCHEMA = Joi.object({
  apiUrl: Joi.string()
    .uri({scheme: ['http', 'https'], allowRelative: true})
    .default(DEFAULT_OPTIONS.apiUrl)
    .messages({
      'string.uri':
        '{{#label}} must be the http(s) URL of your textbook-chat API, e.g. "https://abc123.execute-api.us-east-1.amazonaws.com" (got {{#value}})',
      'string.uriCustomScheme':
        '{{#label}} must be the http(s) URL of your textbook-chat API, e.g. "https://abc123.execute-api.us-east-1.amazonaws.com" (got {{#value}})',
    }),
  streamUrl: Joi.string()
    .uri({scheme: ['http', 'https']})
    .allow(null)
    .default(DEFAULT_OPTIONS.streamUrl)
    .messages({
      'string.uri':
        '{{#label}} must be the https URL of your API\'s stream function (the StreamUrl output of `serverless deploy`), e.g. "https://abc123.lambda-url.us-east-1.on.aws/" (got {{#value}})',
      'string.uriCustomScheme':
        '{{#label}} must be the https URL of your API\'s stream function (the StreamUrl output of `serverless deploy`), e.g. "https://abc123.lambda-url.us-east-1.on.aws/" (got {{#value}})',
    }),
  manifestPath: Joi.string().min(1).default(DEFAULT_OPTIONS.manifestPath),
  llmsTxt: Joi.boolean().default(DEFAULT_OPTIONS.llmsTxt),
  indexer: Joi.object({
    run: Joi.boolean().default(DEFAULT_OPTIONS.indexer.run),
    command: Joi.string().min(1).default(DEFAULT_OPTIONS.indexer.command),
    args: Joi.array().items(Joi.string()).default([]),
  }).default(),
  maxSelectionChars: Joi.number().integer().min(1).max(100000).default(DEFAULT_OPTIONS.maxSelectionChars),
  selection: Joi.boolean().default(DEFAULT_OPTIONS.selection),
  selectionSelector: Joi.string().min(1).default(DEFAULT_OPTIONS.selectionSelector),
  requestTimeoutMs: Joi.number().integer().min(1000).default(DEFAULT_OPTIONS.requestTimeoutMs),
  exampleQuestions: Joi.array().items(Joi.string().min(1).max(200)).max(6).allow(null).default(DEFAULT_OPTIONS.exampleQuestions),
  labels: labelsSchema,
  localeLabels: Joi.object()
    .pattern(
      Joi.string(),
      Joi.object(Object.fromEntries(Object.keys(DEFAULT_LABELS).map((key) => [key, Joi.string().min(1)]))),
    )
    .default({}),
});

const LOOPBACK_HOST = /^(localhost|127(\.\d{1,3}){3}|\[::1\]|0\.0\.0\.0)$/i;

/** True for an API on the reader's own machine (what `textbook-chat serve` listens on). */
function isLoopbackUrl(apiUrl) {
  try {
    return LOOPBACK_HOST.test(new URL(apiUrl).hostname);
  } catch {
    return false; // a relative path such as /api: same origin as the site
  }
}

/**
 * Docusaurus calls this at startup; a wrong option fails the build with a message naming it.
 * Without an `apiUrl` option the URL comes from TEXTBOOK_CHAT_API_URL (the reindex workflow
 * sets it from the deployed stack), else the local `textbook-chat serve`. A production build
 * (`docusaurus build`) whose URL is a loopback address fails: readers' browsers would call their
 * own computer. TEXTBOOK_CHAT_ALLOW_LOCAL_API=1 allows it for a local test build.
 */
function validateOptions({validate, options}, env = process.env) {
  const given = {...(options ?? {})};
  if (given.apiUrl === undefined && env.TEXTBOOK_CHAT_API_URL) given.apiUrl = env.TEXTBOOK_CHAT_API_URL;
  if (given.streamUrl === undefined && env.TEXTBOOK_CHAT_STREAM_URL) given.streamUrl = env.TEXTBOOK_CHAT_STREAM_URL;
  const valid = validate(OPTIONS_SCHEMA, given);
  if (env.NODE_ENV === 'production' && env.TEXTBOOK_CHAT_ALLOW_LOCAL_API !== '1' && isLoopbackUrl(valid.apiUrl)) {
    throw new Error(
      `[textbook-chat] This production build would send readers' questions to ${valid.apiUrl}, ` +
        "an address on each reader's own computer. Set the deployed API's URL (what " +
        '`textbook-chat api-url --stage STAGE` prints) in the TEXTBOOK_CHAT_API_URL environment variable (the reindex ' +
        "workflow's api-url input sets it) or in the plugin's apiUrl option. For a local test " +
        'build, set TEXTBOOK_CHAT_ALLOW_LOCAL_API=1.',
    );
  }
  return valid;
}

/**
 * The API's base URL, which the widget appends /chat, /selection ... to. `serverless deploy`
 * lists its endpoints (…/chat): one pasted as the URL is taken for the base it names.
 */
function apiBase(apiUrl) {
  return apiUrl.replace(/\/+$/, '').replace(/\/(chat|selection|feedback|sources|health|mcp)$/, '');
}

/** The only values sent to the browser: no paths, commands or keys; labels of `locale`. */
function publicConfig(options, locale) {
  return {
    apiUrl: apiBase(options.apiUrl),
    streamUrl: options.streamUrl ? apiBase(options.streamUrl) : null,
    maxSelectionChars: options.maxSelectionChars,
    selection: options.selection,
    selectionSelector: options.selectionSelector,
    requestTimeoutMs: options.requestTimeoutMs,
    exampleQuestions: options.exampleQuestions,
    labels: {...options.labels, ...(options.localeLabels?.[locale] ?? {})},
  };
}

module.exports = {DEFAULT_LABELS, DEFAULT_OPTIONS, OPTIONS_SCHEMA, apiBase, isLoopbackUrl, validateOptions, publicConfig};
