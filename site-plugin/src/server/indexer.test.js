'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const {Writable} = require('node:stream');
const {IndexerError, indexerArgs, runIndexer} = require('./indexer');

const sink = () => new Writable({write: (_chunk, _enc, done) => done()});

// A real executable standing in for the textbook-chat CLI.
function fakeCli(body) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tc-cli-'));
  const file = path.join(dir, 'textbook-chat');
  fs.writeFileSync(file, `#!${process.execPath}\n${body}\n`, {mode: 0o755});
  return file;
}

test('indexer arguments follow the CLI contract', () => {
  assert.deepEqual(indexerArgs({docsDir: '/s/docs', manifestPath: '/s/m.json', args: ['--collection', 'book']}), [
    'index',
    '/s/docs',
    '--manifest',
    '/s/m.json',
    '--collection',
    'book',
  ]);
});

test('a successful run resolves and passes the manifest', async () => {
  const cli = fakeCli('console.log(JSON.stringify(process.argv.slice(2)))');
  const result = await runIndexer({command: cli, args: [], docsDir: '/s/docs', manifestPath: '/s/m.json', stdio: sink()});
  assert.deepEqual(JSON.parse(result.output), ['index', '/s/docs', '--manifest', '/s/m.json']);
});

test("a failing indexer fails with the indexer's own message", async () => {
  const cli = fakeCli("console.error('docs/intro.md:3: front matter is not valid YAML'); process.exit(2)");
  await assert.rejects(runIndexer({command: cli, docsDir: 'docs', manifestPath: 'm.json', stdio: sink()}), (error) => {
    assert.ok(error instanceof IndexerError);
    assert.match(error.message, /the indexer exited with code 2/);
    assert.match(error.message, /docs\/intro\.md:3: front matter is not valid YAML/);
    return true;
  });
});

test('a missing command says how to install it', async () => {
  await assert.rejects(
    runIndexer({command: '/nonexistent/textbook-chat', docsDir: 'docs', manifestPath: 'm.json', stdio: sink()}),
    /could not start the indexer "\/nonexistent\/textbook-chat" \(ENOENT\)\. It is not installed or not on PATH/,
  );
});
