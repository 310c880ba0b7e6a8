import type http from 'node:http';
import { createAccountsSandbox } from './accounts';
import { createIssuerSandbox } from './issuer';
import { createProcessingSandbox } from './processing';
import { listenSandbox, type RunningSandbox } from './shared/listen';
import type { SandboxName, SandboxOptions } from './shared/sandbox-app';

export { createAccountsSandbox } from './accounts';
export { createIssuerSandbox } from './issuer';
export { createProcessingSandbox } from './processing';
export { ISSUER_STATUS_CODES, cardStatusOf, type CardStatus, type IssuerStatusCode } from './issuer/status-codes';
export { DEFAULT_HANG_MS, type SandboxName, type SandboxOptions } from './shared/sandbox-app';
export { UPSTREAM_ERRORS, type UpstreamErrorBody, type UpstreamErrorCode } from './shared/sandbox-error';
export type { RunningSandbox } from './shared/listen';
export type { RecordedRequest } from './shared/request-log';
export type { FaultSpec, Fault, FaultMode } from './shared/faults';

/** The three sandboxes, all listening. */
export interface Sandboxes {
  issuer: RunningSandbox;
  processing: RunningSandbox;
  accounts: RunningSandbox;
  /** Closes all three. */
  close(): Promise<void>;
}

/** Options of {@link startSandboxes}. */
export interface StartSandboxesOptions extends SandboxOptions {
  /** Interface to listen on; default `127.0.0.1`. */
  host?: string;
  /** Port per sandbox; default 0 (a free port). */
  ports?: Partial<Record<SandboxName, number>>;
}

const FACTORIES: Readonly<Record<SandboxName, (opts: SandboxOptions) => http.RequestListener>> = {
  issuer: createIssuerSandbox,
  processing: createProcessingSandbox,
  accounts: createAccountsSandbox,
};

/**
 * Starts the issuer, processing and accounts sandboxes as real HTTP servers. If one cannot
 * listen (port taken), the others are closed again and the promise rejects.
 *
 * @param opts - `host` (default 127.0.0.1), `ports` (default 0 each), `hangMs` (default 120000)
 * @example
 * const sandboxes = await startSandboxes();
 * await fetch(`${sandboxes.issuer.url}/pin-encryption-key`);
 * await sandboxes.close();
 */
export async function startSandboxes(opts: StartSandboxesOptions = {}): Promise<Sandboxes> {
  const host = opts.host ?? '127.0.0.1';
  const names: SandboxName[] = ['issuer', 'processing', 'accounts'];
  const settled = await Promise.allSettled(
    names.map((name) => listenSandbox(name, FACTORIES[name]({ hangMs: opts.hangMs }), host, opts.ports?.[name] ?? 0)),
  );
  const running = settled.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
  const failure = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (failure) {
    await Promise.all(running.map((r) => r.close()));
    throw failure.reason;
  }
  const [issuer, processing, accounts] = running;
  return {
    issuer,
    processing,
    accounts,
    close: async () => {
      await Promise.all(running.map((r) => r.close()));
    },
  };
}
