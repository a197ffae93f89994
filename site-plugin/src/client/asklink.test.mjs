import test from 'node:test';
import assert from 'node:assert/strict';
import {ASK_PARAM, MAX_QUESTION_CHARS, askLink, isBot, readAskLink} from './asklink.mjs';

const site = 'https://you.github.io';
const path = '/book/docs/pid';
const page = `${site}${path}`;

test('a link asks its question, and the URL without the parameter keeps the rest as written', () => {
  assert.equal(ASK_PARAM, 'ask-textbook');
  assert.deepEqual(readAskLink(`${page}?ask-textbook=What+is+jitter%3F`), {question: 'What is jitter?', url: path});
  assert.deepEqual(readAskLink(`${page}?tab=py&ask-textbook=What%20is%20jitter%3F&q=a%20b+c#tuning`), {
    question: 'What is jitter?',
    url: `${path}?tab=py&q=a%20b+c#tuning`,
  });
  assert.deepEqual(readAskLink(`${page}/?ask-textbook=%20%20Kp%3F%20&flag#x`), {question: 'Kp?', url: `${path}/?flag#x`});
  // Unicode, and '=' inside the question
  assert.deepEqual(readAskLink(`${page}?ask-textbook=${encodeURIComponent('کنٹرولر کیا ہے؟ a=b')}`).question, 'کنٹرولر کیا ہے؟ a=b');
});

test('a link without the parameter is left alone', () => {
  for (const href of [page, `${page}?`, `${page}?ask=What`, `${page}?q=ask-textbook#ask-textbook=x`, `${page}#tuning`]) {
    assert.deepEqual(readAskLink(href), {question: null, url: null}, href);
  }
});

test('an empty, blank or too long question asks nothing, and the parameter still leaves the URL', () => {
  for (const value of ['', '%20%20', '+', encodeURIComponent('x'.repeat(MAX_QUESTION_CHARS + 1)), '%E0%A4%A']) {
    assert.deepEqual(readAskLink(`${page}?a=1&ask-textbook=${value}#h`), {question: null, url: `${path}?a=1#h`}, value);
  }
  assert.deepEqual(readAskLink(`${page}?ask-textbook`), {question: null, url: path});
  // The cap counts characters as the API does (code points): 2000 emoji fit, 2001 do not.
  assert.equal(readAskLink(`${page}?ask-textbook=${encodeURIComponent('🤖'.repeat(MAX_QUESTION_CHARS))}`).question.length, 2 * MAX_QUESTION_CHARS);
  assert.equal(readAskLink(`${page}?ask-textbook=${encodeURIComponent('🤖'.repeat(MAX_QUESTION_CHARS + 1))}`).question, null);
});

test('a repeated parameter asks the first question once and every copy leaves the URL', () => {
  assert.deepEqual(readAskLink(`${page}?ask-textbook=One%3F&b=2&ask-textbook=Two%3F`), {question: 'One?', url: `${path}?b=2`});
});

test('the link for a question is the page it was asked on, with the question as the only parameter', () => {
  assert.equal(askLink('https://you.github.io', '/book/docs/pid', 'What is jitter?'), `${page}?ask-textbook=What+is+jitter%3F`);
  assert.equal(askLink('https://you.github.io/', '/book/docs/pid/?x=1#tuning', ' Kp & Kd = ? '), `${page}/?ask-textbook=Kp+%26+Kd+%3D+%3F`);
  assert.equal(askLink('http://127.0.0.1:3000', '', 'Hi'), 'http://127.0.0.1:3000/?ask-textbook=Hi');
  assert.equal(askLink('https://x.org', '/book/docs/r%C3%A9seau', 'ok').split('?')[0], 'https://x.org/book/docs/r%C3%A9seau');
});

test('a built link reads back as the same question and the bare page', () => {
  for (const question of ['What is jitter?', 'a+b = c & d #1 %20', 'کنٹرولر کیا ہے؟', 'line\nbreak']) {
    const link = askLink('https://you.github.io', '/book/docs/pid', question);
    assert.deepEqual(readAskLink(link), {question, url: path}, question);
  }
});

test('crawlers and link previews are told apart from readers', () => {
  for (const agent of [
    'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)',
    'Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)',
    'Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)',
    'facebookexternalhit/1.1',
    'Mozilla/5.0 (Linux; Android 11; moto g power (2022)) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/119.0 Mobile Safari/537.36 Chrome-Lighthouse',
    'Mozilla/5.0 (compatible; Google-InspectionTool/1.0)',
  ]) {
    assert.ok(isBot(agent), agent);
  }
  for (const agent of [
    'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36',
    'Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1',
    'Mozilla/5.0 (Linux; Android 12; CUBOT_X30) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Mobile Safari/537.36',
    '',
  ]) {
    assert.ok(!isBot(agent), agent);
  }
});
