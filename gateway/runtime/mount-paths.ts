import { createRequire } from 'node:module';

/** path-to-regexp 0.1's signature, as express 4 calls it for a mounted route. */
export type PathToRegexp = (path: string | RegExp, keys: unknown[], options: { sensitive: boolean; strict: boolean; end: boolean }) => RegExp;

/**
 * The path-to-regexp of the express that express-gateway mounts every apiEndpoint path with, so
 * that the policy audit matches a route path exactly as the pipelines do. Resolved from
 * express-gateway's own pipeline module: its express may not be ours.
 */
export const mountPathToRegexp = createRequire(createRequire(require.resolve('express-gateway/lib/gateway/pipelines.js')).resolve('express'))('path-to-regexp') as PathToRegexp;
