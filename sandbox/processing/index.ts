import type { Express } from 'express';
import { createSandboxApp, type SandboxOptions } from '../shared/sandbox-app';
import { mountProcessingControlRoutes, mountProcessingRoutes, ProcessingState } from './routes';

/**
 * The card processing system sandbox: deterministic transaction histories for cards it has
 * been told about (card_created webhook), the fee table, delivery methods per country and
 * card status updates. Contract: docs/upstreams.md, section "Card processing system".
 *
 * @param opts - `hangMs` for hanging answers (default 120000)
 */
export function createProcessingSandbox(opts: SandboxOptions = {}): Express {
  const state = new ProcessingState();
  return createSandboxApp({
    name: 'processing',
    options: opts,
    resetState: () => state.clear(),
    control: (router) => mountProcessingControlRoutes(router, state),
    routes: (router) => mountProcessingRoutes(router, state),
  });
}
