/** Runs the textbook-chat indexer on the manifest after the build, failing with the indexer's own message. */
'use strict';

const {spawn} = require('node:child_process');

class IndexerError extends Error {}

const TAIL_LINES = 20;

function indexerArgs({docsDir, manifestPath, args}) {
  return ['index', docsDir, '--manifest', manifestPath, ...(args || [])];
}

function tail(text) {
  return text.trim().split('\n').slice(-TAIL_LINES).join('\n');
}

/**
 * Spawns `<command> index <docsDir> --manifest <manifestPath> ...args`, streaming its output
 * through. Resolves on exit 0; otherwise rejects with an IndexerError quoting the indexer.
 */
function runIndexer({command, args, docsDir, manifestPath, cwd, env, stdio = process.stdout}) {
  const argv = indexerArgs({docsDir, manifestPath, args});
  return new Promise((resolve, reject) => {
    let output = '';
    let child;
    try {
      child = spawn(command, argv, {cwd, env: env || process.env, stdio: ['ignore', 'pipe', 'pipe']});
    } catch (error) {
      reject(new IndexerError(`textbook-chat: could not start the indexer "${command}": ${error.message}`));
      return;
    }
    const collect = (chunk) => {
      output += chunk.toString();
      if (output.length > 64 * 1024) output = output.slice(-32 * 1024);
      if (stdio) stdio.write(chunk);
    };
    child.stdout.on('data', collect);
    child.stderr.on('data', collect);
    child.on('error', (error) => {
      const hint =
        error.code === 'ENOENT'
          ? ` It is not installed or not on PATH: install it (pip install textbook-chat) or set the plugin option "indexer.command".`
          : '';
      reject(new IndexerError(`textbook-chat: could not start the indexer "${command}" (${error.code || error.message}).${hint}`));
    });
    child.on('close', (code, signal) => {
      if (code === 0) {
        resolve({command, argv, output});
        return;
      }
      const how = signal ? `was stopped by ${signal}` : `exited with code ${code}`;
      const said = tail(output);
      reject(
        new IndexerError(
          `textbook-chat: the indexer ${how}: ${[command, ...argv].join(' ')}` +
            (said ? `\n${said}` : '\n(it printed nothing)'),
        ),
      );
    });
  });
}

module.exports = {IndexerError, indexerArgs, runIndexer};
