'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const {normalizePluginOptions} = require('@docusaurus/utils-validation');
const {DEFAULT_OPTIONS, DEFAULT_LABELS, validateOptions, publicConfig} = require('./options');

// The same callback Docusaurus passes to validateOptions at startup.
const validate = (options) => validateOptions({validate: normalizePluginOptions, options});
const errorOf = (options) => {
  try {
    validate(options);
  } catch (error) {
    return error.message;
  }
  assert.fail(`expected ${JSON.stringify(options)} to be rejected`);
};

test('validate({}) equals the documented defaults', () => {
  assert.deepEqual(validate({}), {...DEFAULT_OPTIONS, id: 'default'});
  assert.deepEqual(validate(undefined), {...DEFAULT_OPTIONS, id: 'default'});
});

test('the defaults are the ones the README documents', () => {
  assert.deepEqual(DEFAULT_OPTIONS, {
    apiUrl: 'http://127.0.0.1:8787',
    streamUrl: null,
    manifestPath: '.textbook-chat/manifest.json',
    llmsTxt: true,
    indexer: {run: false, command: 'textbook-chat', args: []},
    maxSelectionChars: 8000,
    selection: true,
    selectionSelector: 'article .markdown',
    requestTimeoutMs: 30000,
    exampleQuestions: null,
    labels: DEFAULT_LABELS,
    localeLabels: {},
  });
});

test('labels follow the locale of the build: localeLabels over labels over the defaults', () => {
  const options = validate({labels: {send: 'Go'}, localeLabels: {fr: {button: 'Demander au manuel'}}});
  assert.equal(publicConfig(options, 'fr').labels.button, 'Demander au manuel');
  assert.equal(publicConfig(options, 'fr').labels.send, 'Go');
  assert.equal(publicConfig(options, 'en').labels.button, DEFAULT_LABELS.button);
  assert.equal(errorOf({localeLabels: {fr: {buton: 'x'}}}), '"localeLabels.fr.buton" is not allowed');
});

test('partial nested options keep the other defaults', () => {
  const options = validate({indexer: {run: true}, labels: {button: 'Frag das Buch'}, apiUrl: '/api'});
  assert.deepEqual(options.indexer, {run: true, command: 'textbook-chat', args: []});
  assert.equal(options.labels.button, 'Frag das Buch');
  assert.equal(options.labels.send, DEFAULT_LABELS.send);
  assert.equal(options.apiUrl, '/api');
});

test('wrong options fail with a message naming the option', () => {
  assert.equal(errorOf({maxSelectionChars: '8000'}), '"maxSelectionChars" must be a number');
  assert.equal(errorOf({maxSelectionChars: 0}), '"maxSelectionChars" must be greater than or equal to 1');
  assert.equal(errorOf({indexer: {run: 'yes'}}), '"indexer.run" must be a boolean');
  assert.equal(errorOf({llmsTxt: 'no'}), '"llmsTxt" must be a boolean');
  assert.equal(errorOf({indexer: {args: '--dry-run'}}), '"indexer.args" must be an array');
  assert.equal(errorOf({labels: {button: ''}}), '"labels.button" is not allowed to be empty');
  assert.equal(errorOf({apiKey: 'sk-secret'}), '"apiKey" is not allowed');
  assert.equal(
    errorOf({apiUrl: 'ftp://example.com'}),
    '"apiUrl" must be the http(s) URL of your textbook-chat API, e.g. "https://abc123.execute-api.us-east-1.amazonaws.com" (got ftp://example.com)',
  );
  assert.equal(errorOf({apiUrl: 42}), '"apiUrl" must be a string');
  assert.equal(errorOf({requestTimeoutMs: 10}), '"requestTimeoutMs" must be greater than or equal to 1000');
});

test('only public values reach the browser', () => {
  const options = validate({apiUrl: 'https://api.example.com/prod/', indexer: {run: true, command: '/secret/path/textbook-chat'}});
  const config = publicConfig(options);
  assert.deepEqual(Object.keys(config).sort(), [
    'apiUrl',
    'exampleQuestions',
    'labels',
    'maxSelectionChars',
    'requestTimeoutMs',
    'selection',
    'selectionSelector',
    'streamUrl',
  ]);
  assert.equal(config.apiUrl, 'https://api.example.com/prod');
  assert.doesNotMatch(JSON.stringify(config), /secret|manifest|indexer/);
});

test('exampleQuestions: null (from the book), a list of up to 6, or [] for none; sent to the browser', () => {
  assert.equal(validate({}).exampleQuestions, null);
  const options = validate({exampleQuestions: ['What is a PID loop?']});
  assert.deepEqual(publicConfig(options, 'en').exampleQuestions, ['What is a PID loop?']);
  assert.deepEqual(validate({exampleQuestions: []}).exampleQuestions, []);
  assert.equal(errorOf({exampleQuestions: Array(7).fill('q')}), '"exampleQuestions" must contain less than or equal to 6 items');
  assert.equal(errorOf({exampleQuestions: ['']}), '"exampleQuestions[0]" is not allowed to be empty');
});

test('every label has a default with its placeholders documented by name', () => {
  for (const [key, value] of Object.entries(DEFAULT_LABELS)) {
    assert.ok(typeof value === 'string' && value.length > 0, key);
  }
  assert.match(DEFAULT_LABELS.exampleQuestion, /\{topic\}/);
  assert.match(DEFAULT_LABELS.errorRateLimited, /\{wait\}/);
  assert.match(DEFAULT_LABELS.source, /\{n\}.*\{title\}/);
});

test('the API URL comes from TEXTBOOK_CHAT_API_URL when the option is not given', () => {
  const env = {TEXTBOOK_CHAT_API_URL: 'https://abc.execute-api.eu-west-1.amazonaws.com/'};
  const withEnv = (options) => validateOptions({validate: normalizePluginOptions, options}, env);
  assert.equal(withEnv({}).apiUrl, 'https://abc.execute-api.eu-west-1.amazonaws.com/');
  assert.equal(withEnv({apiUrl: '/api'}).apiUrl, '/api'); // the option wins
  const bad = () => validateOptions({validate: normalizePluginOptions, options: {}}, {TEXTBOOK_CHAT_API_URL: 'ftp://x'});
  assert.throws(bad, /"apiUrl" must be the http\(s\) URL/);
});

test('a production build whose API is on the loopback fails and says what to set', () => {
  const build = (options, more = {}) =>
    validateOptions({validate: normalizePluginOptions, options}, {NODE_ENV: 'production', ...more});
  for (const url of [undefined, 'http://localhost:8787', 'http://127.0.0.1:9/x', 'http://[::1]:8787']) {
    assert.throws(() => build(url ? {apiUrl: url} : {}), (error) => {
      assert.match(error.message, /TEXTBOOK_CHAT_API_URL/);
      assert.match(error.message, /apiUrl option/);
      return true;
    });
  }
  assert.equal(build({apiUrl: 'https://api.example.org'}).apiUrl, 'https://api.example.org');
  assert.equal(build({apiUrl: '/api'}).apiUrl, '/api');
  assert.equal(build({}, {TEXTBOOK_CHAT_ALLOW_LOCAL_API: '1'}).apiUrl, 'http://127.0.0.1:8787');
  assert.equal(build({}, {TEXTBOOK_CHAT_API_URL: 'https://api.example.org'}).apiUrl, 'https://api.example.org');
  // `docusaurus start` (development) keeps the local API as its default
  assert.equal(validateOptions({validate: normalizePluginOptions, options: {}}, {}).apiUrl, 'http://127.0.0.1:8787');
});

test('the API URL is taken with or without a trailing /chat (the endpoint `serverless deploy` lists)', () => {
  const base = 'https://abc123.execute-api.eu-west-1.amazonaws.com';
  for (const given of [base, `${base}/`, `${base}/chat`, `${base}/chat/`, `${base}/health`]) {
    assert.equal(publicConfig(validate({apiUrl: given})).apiUrl, base, given);
  }
  assert.equal(publicConfig(validate({apiUrl: `${base}/prod/chat`})).apiUrl, `${base}/prod`);
  assert.equal(publicConfig(validate({apiUrl: `${base}/chatbot`})).apiUrl, `${base}/chatbot`);
  assert.equal(publicConfig(validate({apiUrl: '/api/chat'})).apiUrl, '/api');
});

test('streamUrl: the stream function\'s URL (option or TEXTBOOK_CHAT_STREAM_URL), sent to the browser', () => {
  assert.equal(publicConfig(validate({})).streamUrl, null);
  const url = 'https://abc123.lambda-url.eu-west-1.on.aws/';
  assert.equal(publicConfig(validate({streamUrl: url})).streamUrl, 'https://abc123.lambda-url.eu-west-1.on.aws');
  const fromEnv = validateOptions({validate: normalizePluginOptions, options: {}}, {TEXTBOOK_CHAT_STREAM_URL: url});
  assert.equal(fromEnv.streamUrl, url);
  assert.match(errorOf({streamUrl: 'ftp://x.example'}), /"streamUrl" must be the https URL of your API's stream function/);
});
