#!/usr/bin/env node
// Compiles the TypeScript sources with tsc (TypeScript 7, the native compiler) when dist/ is
// missing or older than any source file, so that `npm start` and `npm test` on a fresh clone work
// without a separate build step and later runs skip an unchanged build. `--force` always compiles
// (`npm run build`).
'use strict';
const crypto = require('crypto');
const fs = require('fs');
const path = require('path');
const { execFileSync } = require('child_process');

const root = path.resolve(__dirname, '..');
const sourceDirs = ['contracts', 'gateway', 'plugins', 'policies', 'sandbox', 'scripts', 'test', 'types', 'bench', 'examples', 'sdk/src'];
const stamp = path.join(root, 'dist', '.build-stamp');

/** Every source file with its modification time: a changed, added, removed or renamed file changes it. */
function sourceList(dir, out) {
  if (!fs.existsSync(dir)) return out;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) sourceList(full, out);
    else if (entry.name.endsWith('.ts')) out.push(`${path.relative(root, full)}:${fs.statSync(full).mtimeMs}`);
  }
  return out;
}

const inputs = ['tsconfig.json', 'package-lock.json'].map((f) => `${f}:${fs.statSync(path.join(root, f)).mtimeMs}`);
for (const dir of sourceDirs) sourceList(path.join(root, dir), inputs);
const signature = crypto.createHash('sha256').update(inputs.sort().join('\n')).digest('hex');
const built = fs.existsSync(stamp) ? fs.readFileSync(stamp, 'utf8') : '';
if (process.argv.includes('--force') || built !== signature) {
  // typescript 7 exports no `bin/tsc` subpath: resolve it from the package folder.
  const tsc = path.join(path.dirname(require.resolve('typescript/package.json')), 'bin', 'tsc');
  // A removed or renamed source must not leave its old output behind (a stale test file would still run).
  fs.rmSync(path.join(root, 'dist'), { recursive: true, force: true });
  try {
    execFileSync(process.execPath, [tsc, '-p', path.join(root, 'tsconfig.json')], { stdio: 'inherit' });
  } catch (err) {
    // tsc has printed the errors: exit with its status, without a Node stack trace.
    process.exit(typeof err.status === 'number' ? err.status : 1);
  }
  linkSdk();
  fs.writeFileSync(stamp, signature);
}

/**
 * The examples import the SDK by its package name, as a partner's code does (`@partner-gateway/sdk`,
 * mapped to sdk/src by tsconfig.json's `paths` for the compiler): this package in dist/node_modules
 * makes `node dist/examples/*.js` find the SDK compiled beside them.
 */
function linkSdk() {
  const dir = path.join(root, 'dist', 'node_modules', '@partner-gateway', 'sdk');
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'package.json'), `${JSON.stringify({ name: '@partner-gateway/sdk', private: true, main: 'index.js' }, null, 2)}\n`);
  fs.writeFileSync(path.join(dir, 'index.js'), "'use strict';\n// The SDK compiled by the project's build (scripts/build-if-needed.js).\nmodule.exports = require('../../../sdk/src/index.js');\n");
}
