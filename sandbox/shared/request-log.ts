import type { IncomingHttpHeaders } from 'node:http';
import { pathMatches } from './faults';
import { Ring } from './ring';

/** One request as received by a sandbox, listed by `GET /__sandbox/requests`. */
export interface RecordedRequest {
  method: string;
  path: string;
  query: Record<string, string | string[]>;
  /**
   * The parsed JSON body; the raw text when it was not JSON; `null` when there was none;
   * `{ truncated: true, bytes }` when it was larger than {@link REQUEST_LOG_MAX_BODY_BYTES}.
   */
  body: unknown;
  requestId: string | null;
  headers: IncomingHttpHeaders;
  /** ISO-8601 time of arrival. */
  at: string;
}

/** The newest requests kept; older ones are dropped so a long-running sandbox stays small. */
export const REQUEST_LOG_CAPACITY = 5000;
/** A body larger than this is recorded as `{ truncated: true, bytes }` only. */
export const REQUEST_LOG_MAX_BODY_BYTES = 16 * 1024;
/** The most the log holds in all (bodies, headers, paths, as received): the oldest go first. */
export const REQUEST_LOG_MAX_BYTES = 32 * 1024 * 1024;

/** What the log gets per request: the entry, and the body's size as received. */
export type RequestToRecord = RecordedRequest & { bodyBytes: number };

interface Held {
  entry: RecordedRequest;
  bytes: number;
}

/** Rough size of an entry as received (`bodyBytes`: of the body kept): bounds the log without serialising it. */
function sizeOf(entry: RecordedRequest, bodyBytes: number): number {
  let bytes = entry.method.length + entry.path.length + 128 + bodyBytes;
  for (const [name, value] of Object.entries(entry.headers)) {
    bytes += name.length + (Array.isArray(value) ? value.join('').length : (value?.length ?? 0));
  }
  for (const [name, value] of Object.entries(entry.query)) {
    bytes += name.length + (Array.isArray(value) ? value.join('').length : value.length);
  }
  return bytes;
}

/**
 * The requests one sandbox received (control endpoints excluded), oldest first: at most
 * {@link REQUEST_LOG_CAPACITY} of them and {@link REQUEST_LOG_MAX_BYTES} in all, large bodies
 * truncated. Recording is O(1).
 */
export class RequestLog {
  private readonly entries: Ring<Held>;
  private bytes = 0;

  constructor(
    capacity = REQUEST_LOG_CAPACITY,
    private readonly maxBytes = REQUEST_LOG_MAX_BYTES,
    private readonly maxBodyBytes = REQUEST_LOG_MAX_BODY_BYTES,
  ) {
    this.entries = new Ring(capacity);
  }

  /** How many requests the log holds, and their size as counted against its byte cap. */
  get stats(): { entries: number; bytes: number } {
    return { entries: this.entries.size, bytes: this.bytes };
  }

  record({ bodyBytes, ...entry }: RequestToRecord): void {
    if (bodyBytes > this.maxBodyBytes) entry.body = { truncated: true, bytes: bodyBytes };
    const bytes = sizeOf(entry, bodyBytes > this.maxBodyBytes ? 0 : bodyBytes);
    const dropped = this.entries.push({ entry, bytes });
    this.bytes += bytes - (dropped?.bytes ?? 0);
    while (this.bytes > this.maxBytes && this.entries.size > 1) this.bytes -= this.entries.shift()!.bytes;
  }

  /** Recorded requests, optionally only those with `method` and a path matching `path` (`*` suffix allowed). */
  list(filter: { method?: string; path?: string } = {}): RecordedRequest[] {
    const method = filter.method?.toUpperCase();
    return this.entries
      .toArray()
      .map((held) => held.entry)
      .filter((e) => (!method || e.method === method) && (!filter.path || pathMatches(filter.path, e.path)));
  }

  clear(): void {
    this.entries.clear();
    this.bytes = 0;
  }
}
