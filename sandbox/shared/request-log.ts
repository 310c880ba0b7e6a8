import type { IncomingHttpHeaders } from 'node:http';
import { pathMatches } from './faults';

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
/**
 * The most the log holds in all, as serialised JSON: the oldest requests go first. It is what
 * the log costs in memory (one buffer of this size per sandbox); 5000 requests of the size the
 * gateway sends (0.5 to 1 KiB as JSON) fit in it.
 */
export const REQUEST_LOG_MAX_BYTES = 4 * 1024 * 1024;

/** What the log gets per request: the entry, and the body's size as received. */
export type RequestToRecord = RecordedRequest & { bodyBytes: number };

/**
 * The requests one sandbox received (control endpoints excluded), oldest first: at most
 * {@link REQUEST_LOG_CAPACITY} of them and {@link REQUEST_LOG_MAX_BYTES} in all, large bodies
 * truncated. Each request is kept as its JSON text in one byte buffer used as a ring, so the
 * log is one fixed block of memory, not thousands of objects that live for a while and then
 * die (they would leave the sandbox's heap fragmented), and its byte cap is what it
 * really holds. Recording is O(1) (and O(the request's size)); listing parses the entries.
 */
export class RequestLog {
  private buffer: Buffer | undefined;
  /** Byte offset and length of each entry, by slot; `head` is the oldest's slot. */
  private readonly starts: Uint32Array;
  private readonly lengths: Uint32Array;
  private head = 0;
  private count = 0;
  /** Where the next entry is written. */
  private tail = 0;
  private bytes = 0;

  constructor(
    private readonly capacity = REQUEST_LOG_CAPACITY,
    private readonly maxBytes = REQUEST_LOG_MAX_BYTES,
    private readonly maxBodyBytes = REQUEST_LOG_MAX_BODY_BYTES,
  ) {
    if (!(Number.isInteger(capacity) && capacity > 0)) throw new Error(`request log capacity must be a positive integer, got ${capacity}`);
    this.starts = new Uint32Array(capacity);
    this.lengths = new Uint32Array(capacity);
  }

  /** How many requests the log holds, and their size as serialised. */
  get stats(): { entries: number; bytes: number } {
    return { entries: this.count, bytes: this.bytes };
  }

  record({ bodyBytes, ...entry }: RequestToRecord): void {
    if (bodyBytes > this.maxBodyBytes) entry.body = { truncated: true, bytes: bodyBytes };
    let text = JSON.stringify(entry);
    let length = Buffer.byteLength(text);
    if (length > this.maxBytes) {
      // Only with a tiny byte cap: headers and query are bounded by the HTTP parser (16 KiB).
      text = JSON.stringify({ ...entry, query: {}, headers: {}, body: { truncated: true, bytes: bodyBytes } });
      length = Buffer.byteLength(text);
      if (length > this.maxBytes) return;
    }
    this.buffer ??= Buffer.allocUnsafeSlow(this.maxBytes);
    if (this.count === this.capacity) this.dropOldest();
    if (this.tail + length > this.maxBytes) {
      // No room before the end: the entries there go, and writing starts over at 0.
      while (this.count > 0 && this.starts[this.head] >= this.tail) this.dropOldest();
      this.tail = 0;
    }
    // Entries from the write position on that the new one would overwrite go first.
    while (this.count > 0 && this.starts[this.head] >= this.tail && this.starts[this.head] < this.tail + length) this.dropOldest();
    const slot = (this.head + this.count) % this.capacity;
    this.buffer.write(text, this.tail, length, 'utf8');
    this.starts[slot] = this.tail;
    this.lengths[slot] = length;
    this.count += 1;
    this.bytes += length;
    this.tail += length;
  }

  /** Recorded requests, optionally only those with `method` and a path matching `path` (`*` suffix allowed). */
  list(filter: { method?: string; path?: string } = {}): RecordedRequest[] {
    const method = filter.method?.toUpperCase();
    const out: RecordedRequest[] = [];
    for (let i = 0; i < this.count; i++) {
      const slot = (this.head + i) % this.capacity;
      const entry = JSON.parse(this.buffer!.toString('utf8', this.starts[slot], this.starts[slot] + this.lengths[slot])) as RecordedRequest;
      if ((!method || entry.method === method) && (!filter.path || pathMatches(filter.path, entry.path))) out.push(entry);
    }
    return out;
  }

  clear(): void {
    this.head = 0;
    this.count = 0;
    this.tail = 0;
    this.bytes = 0;
  }

  private dropOldest(): void {
    this.bytes -= this.lengths[this.head];
    this.head = (this.head + 1) % this.capacity;
    this.count -= 1;
  }
}
