'use strict';
// --param="answers=..." picks one block of custom.answers in serverless.yml. Serverless v3
// reports a misspelt value as "Value not found at "self" source" four times, never naming the
// param; serverless.yml falls back to '' for an unknown mode, and this local plugin stops every
// command (at `initialize`, once params are resolved, before any work) with one line naming the
// param and its values.
class AnswersParam {
  constructor(serverless, options) {
    this.hooks = {
      initialize: () => check(serverless.service.custom || {}, serverless),
      'before:deploy:deploy': () => budget(serverless, options || {}),
    };
  }
}

// The budget alarm is on by default: a deploy needs the author's e-mail, given once in SSM
// (/textbook-chat/<stage>/BUDGET_EMAIL, read by every deploy) or as --param="budgetEmail=...";
// --param="budgetEmail=off" deploys without an alarm.
function budget(serverless, options) {
  const resources = (serverless.service.resources || {}).Parameters || {};
  const email = String(((resources.BudgetEmail || {}).Default) ?? '');
  if (email) return;
  const stage = options.stage || serverless.service.provider.stage;
  throw new serverless.classes.Error(
    'The budget alarm needs your e-mail, once: aws ssm put-parameter --region "$AWS_REGION" ' +
      `--name /textbook-chat/${stage}/BUDGET_EMAIL --type String --value you@example.org ` +
      '(every later deploy reads it), or --param="budgetEmail=you@example.org"; ' +
      '--param="budgetEmail=off" deploys without an alarm (docs/deploying.md, "Watching it").'
  );
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
