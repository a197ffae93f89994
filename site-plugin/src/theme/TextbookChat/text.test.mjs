// Every text a reader sees comes from `labels` (so a site can translate the widget): no English
// in the widget's JSX text, nor in its aria-label / title / placeholder attributes.
import test from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import {fileURLToPath} from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const files = fs.readdirSync(here).filter((name) => name.endsWith('.jsx'));

function withoutComments(source) {
  return source.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '').replace(/\{\/\*[\s\S]*?\*\/\}/g, '');
}

test('the widget has no literal reader-facing text outside labels', () => {
  assert.ok(files.length >= 5, files);
  const found = [];
  for (const name of files) {
    const source = withoutComments(fs.readFileSync(path.join(here, name), 'utf8'));
    for (const match of source.matchAll(/>([^<>{}]*[A-Za-z]{2,}[^<>{}]*)</g)) {
      if (!/=>|&&|\|\||\(|\)|;/.test(match[1])) found.push(`${name}: text ${JSON.stringify(match[1].trim())}`);
    }
    for (const match of source.matchAll(/\b(aria-label|title|placeholder|alt)=("[^"]*[A-Za-z][^"]*"|'[^']*[A-Za-z][^']*')/g)) {
      found.push(`${name}: ${match[1]}=${match[2]}`);
    }
  }
  assert.deepEqual(found, []);
});
