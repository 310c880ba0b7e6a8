import type { Express } from 'express';
import { IdempotencyBook } from '../shared/idempotency';
import { createSandboxApp, recordCap, type SandboxOptions } from '../shared/sandbox-app';
import { CardStore, maskPan } from './card-store';
import type { CardIssuanceFeed } from './issuance-feed';
import { Notifier } from '../shared/notifier';
import { mountIssuerControlRoutes, mountIssuerRoutes } from './routes';

/** Options of {@link createIssuerSandbox}. */
export interface IssuerSandboxOptions extends SandboxOptions {
  /**
   * Told about every card the issuer creates (`POST /cards`, and the new card of replace and
   * re-issue). `startSandboxes()` connects it to the processing sandbox.
   */
  issuanceFeed?: CardIssuanceFeed;
  /**
   * Sends the gateway the changes the issuer makes on its own (`POST /__sandbox/cards/{cardKey}/issuer-status`);
   * default one of its own, without a target until `PUT /__sandbox/notify-target` sets one.
   */
  notifier?: Notifier;
}

/**
 * The card issuer platform sandbox: issues cards with Luhn-valid PANs, runs their status
 * machine, limits, 3-D Secure answer, PIN operations and encrypted CVV/PAN reads.
 * Contract: docs/upstreams.md, section "Card issuer platform".
 *
 * @param opts - `hangMs` for hanging answers (default 120000); `issuanceFeed` to announce new cards
 * @example http.createServer(createIssuerSandbox()).listen(0)
 */
export function createIssuerSandbox(opts: IssuerSandboxOptions = {}): Express {
  const feed = opts.issuanceFeed;
  const cards = new CardStore(
    feed &&
      ((card) =>
        feed.publish({
          cardKey: card.cardKey,
          previousCardKey: card.previousCardKey,
          cardMask: maskPan(card.pan),
          type: card.type,
          holderClientCode: card.holderClientCode,
          currency: card.currency,
          createdAt: card.createdAt,
        })),
    recordCap(opts.maxCards, 'SANDBOX_MAX_CARDS'),
  );
  const keys = new IdempotencyBook();
  const notifier = opts.notifier ?? new Notifier('issuer');
  return createSandboxApp({
    name: 'issuer',
    options: { hangMs: opts.hangMs },
    resetState: () => {
      cards.clear();
      keys.clear();
    },
    control: (router) => mountIssuerControlRoutes(router, cards, notifier),
    routes: (router) => mountIssuerRoutes(router, cards, keys),
  });
}
