#!/usr/bin/env node
// Compiles the TypeScript sources with tsc when dist/ is missing or older than any source file,
// so that `npm start` on a fresh clone works without a separate build step. `--force` always compiles.
'use strict';
const fs = require('fs');
const path = require('path');
const { execFileSync } = require('child_process');

const root = path.resolve(__dirname, '..');
const sourceDirs = ['gateway', 'plugins', 'policies', 'sandbox', 'scripts', 'test', 'types', 'bench', 'examples'];
const stamp = path.join(root, 'dist', '.build-stamp');

function newestSource(dir) {
  let newest = 0;
  if (!fs.existsSync(dir)) return newest;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestSource(full));
    else if (entry.name.endsWith('.ts')) newest = Math.max(newest, fs.statSync(full).mtimeMs);
  }
  return newest;
}

const newest = Math.max(
  fs.statSync(path.join(root, 'tsconfig.json')).mtimeMs,
  ...sourceDirs.map((d) => newestSource(path.join(root, d)))
);
const built = fs.existsSync(stamp) ? fs.statSync(stamp).mtimeMs : 0;
// --force: always compile (npm run build); otherwise only when a source is newer than the last build.
if (process.argv.includes('--force') || built < newest) {
  const tsc = require.resolve('typescript/bin/tsc');
  execFileSync(process.execPath, [tsc, '-p', path.join(root, 'tsconfig.json')], { stdio: 'inherit' });
  fs.writeFileSync(stamp, new Date().toISOString());
}
