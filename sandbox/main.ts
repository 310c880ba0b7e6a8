// Standalone runner: `node dist/sandbox/main.js` starts the three sandboxes and prints their
// URLs as one JSON line, e.g. {"issuer":"http://127.0.0.1:4101","processing":...,"accounts":...}.
//
// It never exits without saying why (a silent exit mid-run leaves nothing to go on): a crash is
// one JSON line on stderr and exit 1; a signal is logged and exits 0 once the servers are
// closed (5 s at most); a server that fails or closes while serving, or an event loop that
// drains without a stop being asked for, is logged and exits 1.
//
// Notifications (docs/upstreams.md, section 9): with GATEWAY_NOTIFY_URL and ISSUER_NOTIFY_SECRET /
// PROCESSING_NOTIFY_SECRET the issuer and processing sandboxes notify that gateway listener from the
// start; `PUT /__sandbox/notify-target` on each sets or changes it at run time.
import { notifyTargetFromEnv, startSandboxes, type Sandboxes } from './index';

/** Longest a signalled stop waits for the servers to close. */
const STOP_TIMEOUT_MS = 5000;

function portFromEnv(name: string): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return 0;
  const port = Number(raw);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`${name} must be a port number, got "${raw}"`);
  return port;
}

/** One JSON line on stderr, written synchronously so that it is out before the process exits. */
function logLine(fields: Record<string, unknown>): void {
  try {
    process.stderr.write(`${JSON.stringify({ time: new Date().toISOString(), pid: process.pid, ...fields })}\n`);
  } catch {
    // stderr is gone: nobody is left to tell.
  }
}

let stopRequested = false;

/** Logs why the sandbox dies and exits 1. */
function die(msg: string, reason: unknown, extra: Record<string, unknown> = {}): never {
  stopRequested = true;
  logLine({
    msg,
    reason: reason instanceof Error ? reason.message : String(reason),
    stack: reason instanceof Error ? reason.stack : undefined,
    ...extra,
  });
  process.exit(1);
}

process.on('uncaughtException', (err, origin) => die('sandbox exiting', err, { origin }));
process.on('unhandledRejection', (reason) => die('sandbox exiting', reason, { origin: 'unhandledRejection' }));
// The parent that reads stdout is gone: nothing to do about it, and no reason to die.
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code !== 'EPIPE') die('sandbox exiting', err, { origin: 'stdout' });
});
process.on('beforeExit', () => {
  // Servers keep the loop alive: it drains only when they are gone without a stop asked for.
  if (!stopRequested) die('sandbox exiting', new Error('the event loop drained without a requested stop'));
});
process.on('exit', (code) => {
  if (code !== 0 || !stopRequested) logLine({ msg: 'sandbox exited', code });
});

function watch(sandboxes: Sandboxes): void {
  for (const sandbox of [sandboxes.issuer, sandboxes.processing, sandboxes.accounts]) {
    sandbox.server.on('error', (err) => die('sandbox exiting', err, { sandbox: sandbox.name, origin: 'server error' }));
    sandbox.server.on('close', () => {
      if (!stopRequested) die('sandbox exiting', new Error(`the ${sandbox.name} server closed unexpectedly`), { sandbox: sandbox.name });
    });
  }
  const stop = (signal: NodeJS.Signals): void => {
    if (stopRequested) return;
    stopRequested = true;
    logLine({ msg: 'sandbox stopping', signal });
    const cap = setTimeout(() => {
      logLine({ msg: 'sandbox stopped', signal, closed: false, afterMs: STOP_TIMEOUT_MS });
      process.exit(0);
    }, STOP_TIMEOUT_MS);
    cap.unref();
    void sandboxes.close().then(() => {
      clearTimeout(cap);
      process.exitCode = 0;
    });
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
  process.once('SIGHUP', stop);
}

async function main(): Promise<void> {
  const notify = notifyTargetFromEnv(process.env);
  const sandboxes = await startSandboxes({
    notify,
    host: process.env.SANDBOX_HOST || undefined,
    ports: {
      issuer: portFromEnv('ISSUER_PORT'),
      processing: portFromEnv('PROCESSING_PORT'),
      accounts: portFromEnv('ACCOUNTS_PORT'),
    },
  });
  watch(sandboxes);
  if (notify) {
    // The URL and which upstreams notify; the secrets never.
    const upstreams = [notify.issuerSecret && 'issuer', notify.processingSecret && 'processing'].filter(Boolean);
    logLine({ msg: 'sandbox notifying', url: notify.url, upstreams });
  }
  console.log(
    JSON.stringify({ issuer: sandboxes.issuer.url, processing: sandboxes.processing.url, accounts: sandboxes.accounts.url }),
  );
}

main().catch((err: unknown) => {
  process.stderr.write(`sandbox: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
