'use strict';
// Serverless Framework 3.40.0 (the last v3 release) deploys python3.12 functions, SnapStart
// included, but its configuration schema predates that runtime and prints "Invalid
// configuration ... provider.runtime" on every command. This local plugin (listed in
// serverless.yml) adds python3.12 to the schema's runtime list; nothing else changes.
class Python312Runtime {
  constructor(serverless) {
    const definitions = serverless.configSchemaHandler.schema.definitions || {};
    const runtimes = definitions.awsLambdaRuntime && definitions.awsLambdaRuntime.enum;
    if (Array.isArray(runtimes) && !runtimes.includes('python3.12')) runtimes.push('python3.12');
  }
}

module.exports = Python312Runtime;
