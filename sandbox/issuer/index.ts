import type { Express } from 'express';
import { pinEncryptionKey } from '../shared/rsa';
import { createSandboxApp, type SandboxOptions } from '../shared/sandbox-app';
import { CardStore } from './card-store';
import { mountIssuerControlRoutes, mountIssuerRoutes } from './routes';

/**
 * The card issuer platform sandbox: issues cards with Luhn-valid PANs, runs their status
 * machine, limits, 3-D Secure answer, PIN operations and encrypted CVV/PAN reads.
 * Contract: docs/upstreams.md, section "Card issuer platform".
 *
 * @param opts - `hangMs` for hanging answers (default 120000)
 * @example http.createServer(createIssuerSandbox()).listen(0)
 */
export function createIssuerSandbox(opts: SandboxOptions = {}): Express {
  const cards = new CardStore();
  // Generate the process-wide PIN key now rather than on the first request.
  pinEncryptionKey();
  return createSandboxApp({
    name: 'issuer',
    options: opts,
    resetState: () => cards.clear(),
    control: (router) => mountIssuerControlRoutes(router, cards),
    routes: (router) => mountIssuerRoutes(router, cards),
  });
}
