'use strict';
// Each function's zip, written once and quickly (package.individually: one zip per function).
// Listed after serverless-python-requirements, which installs the requirements (the lock, the
// pip arguments, its caches); this local plugin then writes them into each function's zip
// itself, with scripts/lambda_zip.py (zlib): the requirements plugin deflates them in
// JavaScript at level 9, about 45 s of CPU per 115 MB offline zip and function, where zlib
// writes the same zip, no larger, in about 9 s. Told (its noDeploy, read when it injects) that
// every installed package is this plugin's to write, it injects nothing; lambda_zip.py also
// replaces anything it did inject. On the way, per function:
// - custom.leaveOut: packages a function never runs stay out of its zip: `selection` never
//   embeds or searches (functions/api/handlers/selection.py), so in the offline mode its zip
//   leaves out the local embedding model (its weights, numpy, tokenizers, safetensors);
// - custom.pyc: Lambda's /var/task is read-only, so Python cannot keep the bytecode it compiles
//   and every cold start would compile every dependency again (offline mode: ~0.25 s of CPU of
//   a 0.95 s cold start, mostly numpy; benchmarks/bench_cold_start.py --kinds chat-offline).
//   The requirements are compiled once, here, as unchecked-hash .pyc (every file in the zip has
//   one fixed date, so timestamp-checked .pyc would never match on Lambda), and so is what has
//   none once in the zip: the project's own functions/ (never in the source tree, where an
//   unchecked .pyc would hide an edit) and the top-level modules (typing_extensions). Only when
//   pythonBin is the functions' Python version (custom.pyc.pythonVersion): another version's
//   .pyc would be dead weight, so then it says so and leaves them out.
// `stream` runs the same zip as `chat`: a zip with the same code and the same list is copied.
const { execFileSync } = require('child_process');
const crypto = require('crypto');
const fs = require('fs');
const path = require('path');

const LAMBDA_ZIP = path.join(__dirname, 'lambda_zip.py');

// The requirements plugin's noDeploy key for a top-level name it installed (lib/inject.js).
const noDeployKey = (name) => name.split(/([-\\/]|\.py$|\.pyc$)/, 1)[0];

class FunctionZips {
  constructor(serverless, options, utils) {
    this.serverless = serverless;
    this.log = (utils && utils.log) || { notice: (m) => serverless.cli.log(m) };
    this.hooks = {
      'before:package:createDeploymentArtifacts': () => this.before(),
      'after:package:createDeploymentArtifacts': () => this.after(),
    };
  }

  requirements() {
    return path.join(this.serverless.serviceDir, '.serverless', 'requirements');
  }

  python() {
    const custom = this.serverless.service.custom || {};
    const python = (custom.pythonRequirements || {}).pythonBin || 'python3';
    const target = String((custom.pyc || {}).pythonVersion || '').replace('.', '');
    const version = execFileSync(python, ['-c', 'import sys; print("%d%d" % sys.version_info[:2])'])
      .toString().trim();
    return { python, target, version, pyc: version === target };
  }

  // After the requirements plugin installed them (its own before-hook, listed first).
  before() {
    const service = this.serverless.service;
    if (!service.package.individually) return; // one zip: the requirements plugin writes it
    const folder = this.requirements();
    if (!fs.existsSync(folder)) return;
    const { python, target, version, pyc } = this.python();
    if (!pyc) {
      this.log.notice(`No compiled .pyc in the package: ${python} is Python ${version[0]}.${version.slice(1)}, ` +
        `the functions run ${target[0]}.${target.slice(1)} (deploy with --param="pythonBin=python${target[0]}.${target.slice(1)}" ` +
        'for a faster cold start).');
    } else {
      try {
        execFileSync(python, ['-m', 'compileall', '-q', '-q', '-j', '0', '--invalidation-mode', 'unchecked-hash',
          folder], { stdio: 'pipe' });
      } catch (err) { // a file that does not compile is compiled (and fails) at import, as before
        this.log.notice('Some requirements did not compile to .pyc; they are compiled at import.');
      }
    }
    const requirements = service.custom.pythonRequirements = service.custom.pythonRequirements || {};
    const keys = fs.readdirSync(folder).map(noDeployKey);
    requirements.noDeploy = [...new Set([...(requirements.noDeploy || []), ...keys])];
    this.written = true;
  }

  after() {
    const service = this.serverless.service;
    const lists = (service.custom || {}).leaveOut || {};
    for (const name of Object.keys(lists)) {
      const fn = service.getFunction(name); // throws, naming it, for a function that does not exist
      if (!service.package.individually || !(fn.package && fn.package.artifact)) {
        throw new Error(`custom.leaveOut.${name} needs package.individually: true (one zip per function).`);
      }
    }
    if (!this.written) return;
    const { python, pyc } = this.python();
    const made = new Map(); // the same code and list: the same zip
    for (const name of service.getAllFunctions()) {
      const fn = service.getFunction(name);
      const artifact = fn.package && fn.package.artifact;
      if (!artifact) continue;
      const file = path.resolve(this.serverless.serviceDir, artifact);
      const leaveOut = lists[name] || [];
      const key = crypto.createHash('sha256').update(fs.readFileSync(file))
        .update(JSON.stringify(leaveOut)).digest('hex');
      if (made.has(key)) {
        fs.copyFileSync(made.get(key), file);
        continue;
      }
      execFileSync(python, [LAMBDA_ZIP, file, this.requirements(), '--leave-out', leaveOut.join(','),
        ...(pyc ? ['--pyc'] : [])], { stdio: 'pipe' });
      made.set(key, file);
      if (leaveOut.length) this.log.notice(`${name}: left out of its zip: ${leaveOut.join(', ')} (custom.leaveOut).`);
    }
  }
}

module.exports = FunctionZips;
