import type http from 'node:http';
import { createAccountsSandbox } from './accounts';
import { createIssuerSandbox } from './issuer';
import { CardIssuanceFeed } from './issuer/issuance-feed';
import { createProcessingSandbox } from './processing';
import { Notifier } from './shared/notifier';
import { listenSandbox, type RunningSandbox } from './shared/listen';
import type { SandboxNotifyTarget } from './shared/notify-target';
import type { SandboxName, SandboxOptions } from './shared/sandbox-app';

export { createAccountsSandbox } from './accounts';
export { createIssuerSandbox, type IssuerSandboxOptions } from './issuer';
export { CardIssuanceFeed, type IssuedCard, type IssuedCardListener } from './issuer/issuance-feed';
export { createProcessingSandbox, type ProcessingSandboxOptions } from './processing';
export type { KnownCard, Transaction } from './processing/transactions';
export { TOKENIZATION_REQUEST_PATH, VERIFICATION_REQUEST_PATH, tokenizationDeadlineMs } from './processing/token-routes';
export { SANDBOX_TOKEN_REQUESTOR_IDS } from './processing/tokens';
export { ISSUER_STATUS_CODES, cardStatusOf, type CardStatus, type IssuerStatusCode } from './issuer/status-codes';
export { DEFAULT_HANG_MS, type SandboxName, type SandboxOptions } from './shared/sandbox-app';
export { UPSTREAM_ERRORS, type UpstreamErrorBody, type UpstreamErrorCode } from './shared/sandbox-error';
export type { RunningSandbox } from './shared/listen';
export { Notifier, upstreamSignature, type NotifyTarget, type NotifierOptions } from './shared/notifier';
export { notifyTargetFromEnv, type SandboxNotifyTarget } from './shared/notify-target';
export type { RecordedRequest } from './shared/request-log';
export type { FaultSpec, Fault, FaultMode } from './shared/faults';

/** The three sandboxes, all listening. */
export interface Sandboxes {
  issuer: RunningSandbox;
  processing: RunningSandbox;
  accounts: RunningSandbox;
  /**
   * Where the issuer and processing sandboxes send their notifications (docs/upstreams.md, section 9):
   * the gateway's notification listener and each upstream's secret. Until set, they queue.
   */
  setNotifyTarget(target: SandboxNotifyTarget | undefined): void;
  /** Closes all three. */
  close(): Promise<void>;
}


/** Options of {@link startSandboxes}. */
export interface StartSandboxesOptions extends SandboxOptions {
  /** Interface to listen on; default `127.0.0.1`. */
  host?: string;
  /** Port per sandbox; default 0 (a free port). */
  ports?: Partial<Record<SandboxName, number>>;
  /**
   * Whether the processing sandbox knows every card the issuer sandbox creates (default true),
   * as a real processor processes the issuer's cards. `false` restores the unlinked behaviour:
   * a card is known only after a webhook or `POST /__sandbox/cards`.
   */
  linkCards?: boolean;
  /** Where to send notifications from the start; {@link Sandboxes.setNotifyTarget} sets it later. */
  notify?: SandboxNotifyTarget;
}

/** Builds the three request listeners; linked through one issuance feed unless `linkCards` is false. */
function buildSandboxes(opts: StartSandboxesOptions, notifiers: Record<'issuer' | 'processing', Notifier>): Record<SandboxName, http.RequestListener> {
  const base: SandboxOptions = { hangMs: opts.hangMs, maxCards: opts.maxCards, maxAccounts: opts.maxAccounts };
  const issuanceFeed = opts.linkCards === false ? undefined : new CardIssuanceFeed();
  return {
    issuer: createIssuerSandbox({ ...base, issuanceFeed, notifier: notifiers.issuer }),
    processing: createProcessingSandbox({ ...base, issuanceFeed, notifier: notifiers.processing }),
    accounts: createAccountsSandbox(base),
  };
}

/** Points both notifiers at `target` (a notifier without its secret has no target). */
function aim(notifiers: Record<'issuer' | 'processing', Notifier>, target: SandboxNotifyTarget | undefined): void {
  notifiers.issuer.setTarget(target?.issuerSecret ? { url: target.url, secret: target.issuerSecret } : undefined);
  notifiers.processing.setTarget(target?.processingSecret ? { url: target.url, secret: target.processingSecret } : undefined);
}

/**
 * Starts the issuer, processing and accounts sandboxes as real HTTP servers. If one cannot
 * listen (port taken), the others are closed again and the promise rejects.
 *
 * The processing sandbox knows every card the issuer sandbox creates (see `linkCards`).
 *
 * @param opts - `host` (default 127.0.0.1), `ports` (default 0 each), `hangMs` (default 120000), `linkCards` (default true)
 * @example
 * const sandboxes = await startSandboxes();
 * await fetch(`${sandboxes.issuer.url}/pin-encryption-key`);
 * await sandboxes.close();
 */
export async function startSandboxes(opts: StartSandboxesOptions = {}): Promise<Sandboxes> {
  const host = opts.host ?? '127.0.0.1';
  const names: SandboxName[] = ['issuer', 'processing', 'accounts'];
  const notifiers = { issuer: new Notifier('issuer'), processing: new Notifier('processing') };
  aim(notifiers, opts.notify);
  const listeners = buildSandboxes(opts, notifiers);
  const settled = await Promise.allSettled(names.map((name) => listenSandbox(name, listeners[name], host, opts.ports?.[name] ?? 0)));
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
    setNotifyTarget: (target) => aim(notifiers, target),
    close: async () => {
      notifiers.issuer.clear();
      notifiers.processing.clear();
      await Promise.all(running.map((r) => r.close()));
    },
  };
}
