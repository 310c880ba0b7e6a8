import type { RequestHandler } from 'express';
import { healthCheck } from './health-check';
import { me } from './me';

/**
 * The local handlers a pipeline can end in (`local-handler` policy, `handler: <name>`). Each
 * factory runs once when the pipeline is built.
 */
export const LOCAL_HANDLERS = {
  'health-check': healthCheck,
  me,
} satisfies Record<string, () => RequestHandler>;

export type LocalHandlerName = keyof typeof LOCAL_HANDLERS;
