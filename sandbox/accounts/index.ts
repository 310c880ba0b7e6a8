import type { Express } from 'express';
import { createSandboxApp, recordCap, type SandboxOptions } from '../shared/sandbox-app';
import { AccountStore, mountAccountRoutes } from './routes';

/**
 * The account-creation proxy sandbox: creates the upstream account of an individual and hands
 * back the numeric `clientId` the issuer uses as client code. `lastName` triggers
 * (`SANDBOX-FAIL`, `SANDBOX-TIMEOUT`, ...) force failures. Contract: docs/upstreams.md.
 *
 * @param opts - `hangMs` for hanging answers (default 120000)
 */
export function createAccountsSandbox(opts: SandboxOptions = {}): Express {
  const accounts = new AccountStore(recordCap(opts.maxAccounts, 'SANDBOX_MAX_ACCOUNTS'));
  return createSandboxApp({
    name: 'accounts',
    options: opts,
    resetState: () => accounts.clear(),
    control: (router) => {
      router.get('/accounts', (_req, res) => {
        res.json(accounts.list());
      });
    },
    routes: (router, kit) => mountAccountRoutes(router, accounts, kit),
  });
}
