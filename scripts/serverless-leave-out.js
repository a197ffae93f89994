'use strict';
// Each function's zip holds only what it runs (package.individually). serverless-python-requirements
// puts every requirement in every zip; listed after it, this local plugin takes out of a function's
// zip the packages custom.leaveOut names for it: `selection` never embeds or searches
// (functions/api/handlers/selection.py), so in the offline mode its zip leaves out the local
// embedding model (its weights, numpy, tokenizers, safetensors), which only `chat` loads.
// A package is its folder, its `.libs` and its `-x.y.dist-info` (names as installed).
const path = require('path');
const fs = require('fs');
// jszip: serverless-python-requirements' own dependency, the library that wrote the zip
const JSZip = require(require.resolve('jszip', { paths: [path.dirname(require.resolve('serverless-python-requirements'))] }));

class LeaveOut {
  constructor(serverless, options, utils) {
    this.serverless = serverless;
    this.log = (utils && utils.log) || { notice: (m) => serverless.cli.log(m) };
    this.hooks = { 'after:package:createDeploymentArtifacts': () => this.leaveOut() };
  }

  async leaveOut() {
    const service = this.serverless.service;
    const lists = (service.custom || {}).leaveOut || {};
    for (const [name, packages] of Object.entries(lists)) {
      const fn = service.getFunction(name); // throws, naming it, for a function that does not exist
      const artifact = fn.package && fn.package.artifact;
      if (!service.package.individually || !artifact) {
        throw new Error(`custom.leaveOut.${name} needs package.individually: true (one zip per function).`);
      }
      const file = path.resolve(this.serverless.serviceDir, artifact);
      const zip = await JSZip.loadAsync(fs.readFileSync(file));
      const gone = (entry) => {
        const top = entry.split('/', 1)[0];
        return packages.some((p) => top === p || top === `${p}.libs` || (top.startsWith(`${p}-`) && top.endsWith('.dist-info')));
      };
      const names = Object.keys(zip.files).filter(gone);
      names.forEach((entry) => zip.remove(entry));
      await new Promise((resolve, reject) => zip
        .generateNodeStream({ platform: 'UNIX', compression: 'DEFLATE', compressionOptions: { level: 9 } })
        .pipe(fs.createWriteStream(file)).on('finish', resolve).on('error', reject));
      if (names.length) this.log.notice(`${name}: left out of its zip: ${packages.join(', ')} (custom.leaveOut).`);
    }
  }
}

module.exports = LeaveOut;
