// Baseline (c): stock express-gateway with its own `proxy` policy as the only policy of the
// pipeline. TARGET=http://host:port node dist/bench/baselines/eg-proxy.js → prints {"port": N}.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const target = process.env.TARGET ?? 'http://127.0.0.1:8081';
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pgw-eg-baseline-'));
fs.mkdirSync(path.join(dir, 'models'));
for (const model of ['users', 'credentials', 'applications']) {
  fs.writeFileSync(path.join(dir, 'models', `${model}.json`), JSON.stringify({ $id: `http://express-gateway.io/models/${model}.json`, type: 'object', properties: {} }));
}
fs.writeFileSync(path.join(dir, 'system.config.yml'), 'db:\n  redis:\n    emulate: true\n    namespace: EG\n');
fs.writeFileSync(
  path.join(dir, 'gateway.config.yml'),
  [
    'http:',
    '  port: 0',
    'apiEndpoints:',
    '  api:',
    "    host: '*'",
    'serviceEndpoints:',
    '  upstream:',
    `    url: '${target}'`,
    'policies:',
    '  - proxy',
    'pipelines:',
    '  default:',
    '    apiEndpoints: [api]',
    '    policies:',
    '      - proxy:',
    '          - action:',
    '              serviceEndpoint: upstream',
    '',
  ].join('\n')
);
process.env.EG_DISABLE_CONFIG_WATCH = 'true';
process.env.LOG_LEVEL = process.env.LOG_LEVEL ?? 'error';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const gateway = require('express-gateway') as () => { load(dir: string): { run(): Promise<[{ app: import('node:http').Server }]> } };
gateway()
  .load(dir)
  .run()
  .then(([started]) => {
    const address = started.app.address() as import('node:net').AddressInfo;
    process.stdout.write(`${JSON.stringify({ port: address.port })}\n`);
  });
process.once('SIGTERM', () => process.exit(0));
