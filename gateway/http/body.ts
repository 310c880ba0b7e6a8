import express, { type RequestHandler } from 'express';
import { GatewayError } from '../errors';

/** Largest accepted request body (spec bodies are small; 413 above it). */
export const BODY_LIMIT = '64kb';

/**
 * Deepest nesting of arrays and objects accepted in a JSON body (the deepest spec body, a limits
 * patch, has 2 levels; an admin config body about 10). Deeper → 400 `body_too_deep`.
 */
export const MAX_BODY_DEPTH = 32;

/**
 * The nesting depth of a parsed JSON value (a scalar is 0, `[]` and `{}` are 1), counted without
 * recursion and stopping as soon as it exceeds `limit`, so any depth costs no stack.
 *
 * @example jsonDepth([[1], { a: {} }]) // 3
 */
export function jsonDepth(value: unknown, limit = Number.POSITIVE_INFINITY): number {
  let deepest = 0;
  const stack: Array<{ value: unknown; depth: number }> = [{ value, depth: 0 }];
  while (stack.length > 0) {
    const item = stack.pop()!;
    if (item.value === null || typeof item.value !== 'object') continue;
    const depth = item.depth + 1;
    if (depth > deepest) deepest = depth;
    if (deepest > limit) return deepest;
    const children = Array.isArray(item.value) ? item.value : Object.values(item.value as Record<string, unknown>);
    for (const child of children) {
      if (child !== null && typeof child === 'object') stack.push({ value: child, depth });
    }
  }
  return deepest;
}

/**
 * Parses JSON bodies (`application/json` and `application/*+json`) up to 64 KB, strictly (objects
 * and arrays only). Malformed JSON → 400, too large → 413, nested deeper than
 * {@link MAX_BODY_DEPTH} → 400 `body_too_deep`, via the problem handler. The depth is checked right
 * after parsing, before any policy or handler walks the body (validation, hashing, cloning).
 */
export function jsonBody(): RequestHandler {
  const parse = express.json({ limit: BODY_LIMIT, strict: true, type: ['application/json', 'application/*+json'] });
  return function parseJsonBody(req, res, next) {
    parse(req, res, (err?: unknown) => {
      if (err !== undefined) return next(err);
      if (req.body !== null && typeof req.body === 'object' && jsonDepth(req.body, MAX_BODY_DEPTH) > MAX_BODY_DEPTH) {
        // The parsed body is dropped: nothing downstream may walk it.
        req.body = undefined;
        return next(new GatewayError('body_too_deep', `The request body nests arrays and objects deeper than ${MAX_BODY_DEPTH} levels`));
      }
      next();
    });
  };
}
