'use strict';
// SnapStart (--param="snapStart=true") runs on published Lambda versions, and each deploy
// publishes one more, every one of them cached and billed (docs/deploying.md "Cold start and
// SnapStart"). After a deploy this local plugin deletes each function's older versions: it keeps
// $LATEST, every version an alias points at (the API's `snapstart` alias) and the newest
// custom.prune.keep (default 1). Without SnapStart no version is published and it does nothing.

/** The version numbers to delete, from a function's versions and aliases. */
function toDelete(versions, aliases, keep) {
  const numbered = versions
    .map((v) => v.Version)
    .filter((v) => /^\d+$/.test(v))
    .sort((a, b) => Number(b) - Number(a));
  const aliased = new Set(aliases.flatMap((a) => [a.FunctionVersion,
    ...Object.keys((a.RoutingConfig || {}).AdditionalVersionWeights || {})]));
  return numbered.slice(Math.max(keep, 0)).filter((v) => !aliased.has(v));
}

async function all(provider, method, params, key) {
  const items = [];
  let marker;
  do {
    const page = await provider.request('Lambda', method, { ...params, ...(marker ? { Marker: marker } : {}) });
    items.push(...(page[key] || []));
    marker = page.NextMarker;
  } while (marker);
  return items;
}

class Prune {
  constructor(serverless, options, utils) {
    this.serverless = serverless;
    this.log = (utils && utils.log) || { notice: (m) => serverless.cli.log(m) };
    this.hooks = { 'after:deploy:deploy': () => this.prune() };
  }

  async prune() {
    const service = this.serverless.service;
    if (!service.provider.versionFunctions) return; // no SnapStart: no version is published
    const keep = Number(((service.custom || {}).prune || {}).keep ?? 1);
    const provider = this.serverless.getProvider('aws');
    for (const name of service.getAllFunctions()) {
      const FunctionName = service.getFunction(name).name;
      const versions = await all(provider, 'listVersionsByFunction', { FunctionName }, 'Versions');
      const aliases = await all(provider, 'listAliases', { FunctionName }, 'Aliases');
      const gone = toDelete(versions, aliases, keep);
      for (const Qualifier of gone) {
        await provider.request('Lambda', 'deleteFunction', { FunctionName, Qualifier });
      }
      if (gone.length) this.log.notice(`${name}: deleted ${gone.length} old version(s) (${gone.join(', ')}); SnapStart bills each one it keeps.`);
    }
  }
}

module.exports = Prune;
module.exports.toDelete = toDelete;
