import express, { type RequestHandler } from 'express';

/** Largest accepted request body (spec bodies are small; 413 above it). */
export const BODY_LIMIT = '64kb';

/**
 * Parses JSON bodies (`application/json` and `application/*+json`) up to 64 KB, strictly (objects
 * and arrays only). Malformed JSON → 400, too large → 413, via the problem handler.
 */
export function jsonBody(): RequestHandler {
  return express.json({ limit: BODY_LIMIT, strict: true, type: ['application/json', 'application/*+json'] });
}
