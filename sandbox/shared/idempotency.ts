import crypto from 'node:crypto';
import { configure } from 'safe-stable-stringify';
import type { RequestHandler, Response } from 'express';
import { upstreamError } from './sandbox-error';

/** How long the sandbox remembers an `Idempotency-Key` (docs/upstreams.md, "Operation ids"). */
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;
/** At most this many keys are remembered; the oldest is forgotten first. */
export const IDEMPOTENCY_MAX_KEYS = 10_000;

const KEY = /^[\x21-\x7e]{1,255}$/;

/** JSON with object keys sorted (safe-stable-stringify), so that the same body always hashes the same. */
const canonical = configure({ deterministic: true });

/** Fingerprint of a request: method, path and body (key order ignored). */
export function requestFingerprint(method: string, path: string, body: unknown): string {
  return crypto.createHash('sha256').update(canonical({ method, path, body })!).digest('hex');
}

interface Entry {
  fingerprint: string;
  at: number;
  /** The first answer (2xx or 4xx); absent while the first request runs. */
  answer?: { status: number; body: unknown };
}

/**
 * The keys an upstream remembers, bounded: each for {@link IDEMPOTENCY_TTL_MS}, and at most
 * {@link IDEMPOTENCY_MAX_KEYS} of them (a Map keeps insertion order: the oldest go first).
 */
export class IdempotencyBook {
  private readonly entries = new Map<string, Entry>();

  constructor(
    private readonly ttlMs = IDEMPOTENCY_TTL_MS,
    private readonly maxKeys = IDEMPOTENCY_MAX_KEYS
  ) {}

  get size(): number {
    return this.entries.size;
  }

  get(key: string, now = Date.now()): Entry | undefined {
    const entry = this.entries.get(key);
    if (entry && now - entry.at > this.ttlMs) {
      this.entries.delete(key);
      return undefined;
    }
    return entry;
  }

  add(key: string, entry: Entry): void {
    this.entries.set(key, entry);
    for (const [oldest, first] of this.entries) {
      if (this.entries.size <= this.maxKeys && Date.now() - first.at <= this.ttlMs) break;
      this.entries.delete(oldest);
    }
  }

  forget(key: string): void {
    this.entries.delete(key);
  }

  clear(): void {
    this.entries.clear();
  }
}

/**
 * Deduplicates the POSTs that carry an `Idempotency-Key` header, as card issuers do with their
 * client tokens: the first request runs and its answer (2xx or 4xx) is remembered; the same key
 * with the same method, path and body answers that first status and body again
 * (`Idempotent-Replayed: true`), without running; the same key with another request is 409
 * `IDEMPOTENCY_KEY_REUSED`; while the first still runs, 409 `IDEMPOTENCY_IN_PROGRESS`. A 5xx
 * answer, or a request that ends unanswered, is forgotten (a retry runs). Without the header
 * nothing changes.
 */
export function deduplicateByIdempotencyKey(book: IdempotencyBook): RequestHandler {
  return function idempotencyKey(req, res, next) {
    if (req.method !== 'POST') return next();
    const key = req.get('idempotency-key');
    if (key === undefined) return next();
    if (!KEY.test(key)) {
      throw upstreamError('VALIDATION_ERROR', 'Invalid request: Idempotency-Key must be 1 to 255 visible ASCII characters', [
        { path: 'Idempotency-Key', message: 'must be 1 to 255 visible ASCII characters' },
      ]);
    }
    const fingerprint = requestFingerprint(req.method, req.path, req.body);
    const known = book.get(key);
    if (known) {
      if (known.fingerprint !== fingerprint) throw upstreamError('IDEMPOTENCY_KEY_REUSED', `Idempotency-Key ${key} was used with another request`);
      if (!known.answer) throw upstreamError('IDEMPOTENCY_IN_PROGRESS', `A request with Idempotency-Key ${key} is still running`);
      res.set('Idempotent-Replayed', 'true');
      res.status(known.answer.status).json(known.answer.body);
      return;
    }
    const entry: Entry = { fingerprint, at: Date.now() };
    book.add(key, entry);
    const json = res.json.bind(res) as Response['json'];
    res.json = function rememberAnswer(body?: unknown) {
      if (res.statusCode < 500) entry.answer = { status: res.statusCode, body: structuredClone(body) };
      else book.forget(key);
      return json(body);
    } as Response['json'];
    res.on('close', () => {
      if (!entry.answer && book.get(key) === entry) book.forget(key);
    });
    next();
  };
}
