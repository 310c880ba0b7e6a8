// Standalone runner: `node dist/sandbox/main.js` starts the three sandboxes and prints their
// URLs as one JSON line, e.g. {"issuer":"http://127.0.0.1:4101","processing":...,"accounts":...}.
import { startSandboxes } from './index';

function portFromEnv(name: string): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return 0;
  const port = Number(raw);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`${name} must be a port number, got "${raw}"`);
  return port;
}

async function main(): Promise<void> {
  const sandboxes = await startSandboxes({
    host: process.env.SANDBOX_HOST || undefined,
    ports: {
      issuer: portFromEnv('ISSUER_PORT'),
      processing: portFromEnv('PROCESSING_PORT'),
      accounts: portFromEnv('ACCOUNTS_PORT'),
    },
  });
  console.log(
    JSON.stringify({ issuer: sandboxes.issuer.url, processing: sandboxes.processing.url, accounts: sandboxes.accounts.url }),
  );
  const stop = (): void => {
    void sandboxes.close().then(() => {
      process.exitCode = 0;
    });
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}

main().catch((err: unknown) => {
  process.stderr.write(`sandbox: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
