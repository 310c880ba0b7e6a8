/**
 * `npm run sdk:generate [-- --from URL]` regenerates the partner SDK's types (`sdk/openapi.json`,
 * `sdk/src/generated/`) from the OpenAPI document the gateway serves in sandbox mode: built here from
 * `config/gateway.config.yml`, read as the gateway reads it, without starting one; `--from` takes
 * the document a running gateway serves instead. It needs the SDK's dev dependencies (`npm install`
 * in `sdk/`, once). `test/sdk/generated-types.test.ts` says when the committed types are stale
 * (docs/sdk.md#types).
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { buildOpenApiDocument } from '../gateway/openapi/document';
import { readGatewayConfigFile } from '../gateway/runtime/config-file';

const ROOT = path.resolve(__dirname, '..', '..');
const SDK = path.join(ROOT, 'sdk');

function main(): number {
  const { values } = parseArgs({ options: { from: { type: 'string' }, config: { type: 'string' } } });
  if (!fs.existsSync(path.join(SDK, 'node_modules', 'openapi-typescript'))) {
    process.stderr.write('sdk:generate needs the SDK\'s dev dependencies: run `npm install` in sdk/ first\n');
    return 1;
  }
  let source = values.from;
  let dir: string | undefined;
  if (!source) {
    const configFile = values.config ?? path.join(process.env.CONFIG_DIR || path.join(ROOT, 'config'), 'gateway.config.yml');
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pgw-sdk-generate-'));
    source = path.join(dir, 'openapi.json');
    fs.writeFileSync(source, JSON.stringify(buildOpenApiDocument(readGatewayConfigFile(configFile))));
  }
  try {
    execFileSync(process.execPath, [path.join(SDK, 'scripts', 'generate-types.js'), source], { stdio: 'inherit' });
    return 0;
  } catch (err) {
    return typeof (err as { status?: unknown }).status === 'number' ? (err as { status: number }).status : 1;
  } finally {
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  }
}

process.exitCode = main();
