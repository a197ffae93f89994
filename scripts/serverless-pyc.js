'use strict';
// Lambda's /var/task is read-only: Python cannot keep the bytecode it compiles, so without .pyc
// in the zip every cold start compiles every dependency again (offline mode: ~0.25 s of CPU of a
// 0.95 s cold start, mostly numpy; benchmarks/bench_cold_start.py --kinds chat-offline).
// Listed after serverless-python-requirements, this local plugin compiles the installed
// requirements once, at package time, as unchecked-hash .pyc: the packaged zip gives every file
// one fixed date, so timestamp-checked .pyc would never match on Lambda. Only when pythonBin is
// the functions' Python version (custom.pyc.pythonVersion): another version's .pyc would be
// dead weight, so then it says so and leaves them out.
const { execFileSync } = require('child_process');
const path = require('path');

class CompileRequirements {
  constructor(serverless, options, utils) {
    this.serverless = serverless;
    this.log = (utils && utils.log) || { notice: (m) => serverless.cli.log(m) };
    this.hooks = { 'before:package:createDeploymentArtifacts': () => this.compile() };
  }

  compile() {
    const custom = this.serverless.service.custom || {};
    const python = (custom.pythonRequirements || {}).pythonBin || 'python3';
    const target = String((custom.pyc || {}).pythonVersion || '').replace('.', '');
    const folder = path.join(this.serverless.serviceDir, '.serverless', 'requirements');
    const version = execFileSync(python, ['-c', 'import sys; print("%d%d" % sys.version_info[:2])'])
      .toString().trim();
    if (version !== target) {
      this.log.notice(`No compiled .pyc in the package: ${python} is Python ${version[0]}.${version.slice(1)}, ` +
        `the functions run ${target[0]}.${target.slice(1)} (deploy with --param="pythonBin=python${target[0]}.${target.slice(1)}" ` +
        'for a faster cold start).');
      return;
    }
    try {
      execFileSync(python, ['-m', 'compileall', '-q', '-q', '-j', '0', '--invalidation-mode', 'unchecked-hash',
        folder], { stdio: 'pipe' });
    } catch (err) { // a file that does not compile is compiled (and fails) at import, as before
      this.log.notice('Some requirements did not compile to .pyc; they are compiled at import.');
    }
  }
}

module.exports = CompileRequirements;
