'use strict';
// Lambda's /var/task is read-only: Python cannot keep the bytecode it compiles, so without .pyc
// in the zip every cold start compiles every dependency again (offline mode: ~0.25 s of CPU of a
// 0.95 s cold start, mostly numpy; benchmarks/bench_cold_start.py --kinds chat-offline).
// Listed after serverless-python-requirements, this local plugin compiles the installed
// requirements once, at package time, as unchecked-hash .pyc: the packaged zip gives every file
// one fixed date, so timestamp-checked .pyc would never match on Lambda. What that leaves
// without bytecode is compiled inside each function's zip once it is made: the project's own
// functions/ (never in the source tree, where an unchecked .pyc would hide an edit) and the
// top-level modules the requirements plugin injects without their __pycache__ (typing_extensions:
// ~0.05 s of CPU per cold start; functions/: ~0.2 s). Only when pythonBin is
// the functions' Python version (custom.pyc.pythonVersion): another version's .pyc would be
// dead weight, so then it says so and leaves them out.
const { execFileSync } = require('child_process');
const path = require('path');

// Adds to a zip an unchecked-hash .pyc of each .py it holds that has none, with that file's
// date; a file that does not compile is left to compile at import.
const OWN_PYC = `
import importlib.util, sys, zipfile
from importlib._bootstrap_external import _code_to_hash_pyc
with zipfile.ZipFile(sys.argv[1], "a", zipfile.ZIP_DEFLATED) as z:
    names = set(z.namelist())
    for info in [i for i in z.infolist() if i.filename.endswith(".py")]:
        pyc = importlib.util.cache_from_source(info.filename)
        if pyc in names:
            continue
        source = z.read(info)
        try:
            code = compile(source, info.filename, "exec", dont_inherit=True)
        except (SyntaxError, ValueError):
            continue
        out = zipfile.ZipInfo(pyc, info.date_time)
        out.external_attr, out.compress_type = info.external_attr, zipfile.ZIP_DEFLATED
        z.writestr(out, bytes(_code_to_hash_pyc(code, importlib.util.source_hash(source), False)))
`;

class CompileRequirements {
  constructor(serverless, options, utils) {
    this.serverless = serverless;
    this.log = (utils && utils.log) || { notice: (m) => serverless.cli.log(m) };
    this.hooks = {
      'before:package:createDeploymentArtifacts': () => this.compile(),
      'after:package:createDeploymentArtifacts': () => this.compileOwn(),
    };
  }

  python() {
    const custom = this.serverless.service.custom || {};
    const python = (custom.pythonRequirements || {}).pythonBin || 'python3';
    const target = String((custom.pyc || {}).pythonVersion || '').replace('.', '');
    const version = execFileSync(python, ['-c', 'import sys; print("%d%d" % sys.version_info[:2])'])
      .toString().trim();
    return { python, target, version };
  }

  compileOwn() {
    const { python, target, version } = this.python();
    if (version !== target) return; // compile() said so
    const service = this.serverless.service;
    for (const name of service.getAllFunctions()) {
      const fn = service.getFunction(name);
      const artifact = fn.package && fn.package.artifact;
      if (!artifact) continue;
      execFileSync(python, ['-c', OWN_PYC, path.resolve(this.serverless.serviceDir, artifact)],
        { stdio: 'pipe' });
    }
  }

  compile() {
    const { python, target, version } = this.python();
    const folder = path.join(this.serverless.serviceDir, '.serverless', 'requirements');
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
