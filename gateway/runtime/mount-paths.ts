import { createRequire } from 'node:module';

import type { PathToRegexp } from '../route-model';

export type { PathToRegexp };

/**
 * The path-to-regexp of the express that express-gateway mounts every apiEndpoint path with, so
 * that the policy audit matches a route path exactly as the pipelines do. Resolved from
 * express-gateway's own pipeline module: its express may not be ours.
 */
export const mountPathToRegexp = createRequire(createRequire(require.resolve('express-gateway/lib/gateway/pipelines.js')).resolve('express'))('path-to-regexp') as PathToRegexp;
