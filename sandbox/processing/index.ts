import type { Express } from 'express';
import type { CardIssuanceFeed } from '../issuer/issuance-feed';
import { IdempotencyBook } from '../shared/idempotency';
import { Notifier } from '../shared/notifier';
import { createSandboxApp, recordCap, type SandboxOptions } from '../shared/sandbox-app';
import { mountProcessingControlRoutes, mountProcessingRoutes, ProcessingState } from './routes';
import { mountTokenControlRoutes, mountTokenRoutes } from './token-routes';

/** Options of {@link createProcessingSandbox}. */
export interface ProcessingSandboxOptions extends SandboxOptions {
  /** The issuer's feed of new cards: each becomes known at once (`startSandboxes()` links them). */
  issuanceFeed?: CardIssuanceFeed;
  /**
   * Sends the gateway the steps of the transactions recorded through the control routes (`POST
   * /__sandbox/authorizations`, `/__sandbox/transactions`…, docs/upstreams.md 6.9); default one of
   * its own, without a target until `PUT /__sandbox/notify-target` sets one.
   */
  notifier?: Notifier;
}

/**
 * The card processing system sandbox: deterministic transaction histories for cards it knows
 * (issued by the linked issuer sandbox, or named by a card_created webhook), the fee table,
 * delivery methods per country and card status updates. Contract: docs/upstreams.md, section
 * "Card processing system".
 *
 * @param opts - `hangMs` for hanging answers (default 120000); `issuanceFeed` to know the issuer's cards
 */
export function createProcessingSandbox(opts: ProcessingSandboxOptions = {}): Express {
  const state = new ProcessingState(recordCap(opts.maxCards, 'SANDBOX_MAX_CARDS'));
  opts.issuanceFeed?.subscribe((card) => state.registerIssued(card));
  const keys = new IdempotencyBook();
  const notifier = opts.notifier ?? new Notifier('processing');
  return createSandboxApp({
    name: 'processing',
    options: { hangMs: opts.hangMs },
    resetState: () => {
      state.clear();
      keys.clear();
    },
    control: (router) => {
      mountProcessingControlRoutes(router, state, keys, notifier);
      mountTokenControlRoutes(router, state, keys, notifier);
    },
    routes: (router) => {
      mountProcessingRoutes(router, state);
      mountTokenRoutes(router, state, keys, notifier);
    },
  });
}
