import test from 'node:test';
import assert from 'node:assert/strict';
import {isolate, textDirection} from './direction.mjs';

test('the first letter decides, as dir="auto" does; text without one leaves it to the page', () => {
  assert.equal(textDirection('Raise the robot so the wheels spin freely.'), 'ltr');
  assert.equal(textDirection('روبوٹ کو اٹھائیں (Raise) تاکہ پہیے آزادی سے گھومیں۔'), 'rtl');
  assert.equal(textDirection('1. 20 ms — PID روبوٹ'), 'ltr'); // "ms" is its first word
  assert.equal(textDirection('3.5 — ۲۰ ملی سیکنڈ'), 'rtl');
  assert.equal(textDirection('עברית'), 'rtl');
  assert.equal(textDirection('速度'), 'ltr');
  assert.equal(textDirection('42 % [1]'), undefined);
  assert.equal(textDirection(undefined), undefined);
});

test('isolate wraps text in first-strong isolate marks, invisible in either direction', () => {
  assert.equal(isolate('Ctrl+/'), '\u2068Ctrl+/\u2069');
  assert.equal(isolate('Ctrl+/').length, 'Ctrl+/'.length + 2);
});
