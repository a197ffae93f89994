'use strict';
// --param="answers=..." picks one block of custom.answers in serverless.yml. Serverless v3
// reports a misspelt value as "Value not found at "self" source" four times, never naming the
// param; serverless.yml falls back to '' for an unknown mode, and this local plugin stops every
// command (at `initialize`, once params are resolved, before any work) with one line naming the
// param and its values.
class AnswersParam {
  constructor(serverless) {
    this.hooks = { initialize: () => check(serverless.service.custom || {}, serverless) };
  }
}

function check(custom, serverless) {
  const modes = Object.keys(custom.answers || {});
  const mode = custom.answersMode;
  if (modes.includes(mode)) return;
  throw new serverless.classes.Error(
    `--param="answers=${mode}" is not an answer mode: use ` +
      `${modes.map((m) => `--param="answers=${m}"`).join(' or ')} ` +
      '(docs/deploying.md "Two ways to answer"; openai is the default).'
  );
}

module.exports = AnswersParam;
