import type { IncomingHttpHeaders } from 'node:http';
import { pathMatches } from './faults';

/** One request as received by a sandbox, listed by `GET /__sandbox/requests`. */
export interface RecordedRequest {
  method: string;
  path: string;
  query: Record<string, string | string[]>;
  /** The parsed JSON body; the raw text when it was not JSON; `null` when there was none. */
  body: unknown;
  requestId: string | null;
  headers: IncomingHttpHeaders;
  /** ISO-8601 time of arrival. */
  at: string;
}

/** The newest requests kept; older ones are dropped so a long-running sandbox stays small. */
export const REQUEST_LOG_CAPACITY = 5000;

/** The requests one sandbox received (control endpoints excluded), oldest first. */
export class RequestLog {
  private entries: RecordedRequest[] = [];

  record(entry: RecordedRequest): void {
    this.entries.push(entry);
    if (this.entries.length > REQUEST_LOG_CAPACITY) this.entries.shift();
  }

  /** Recorded requests, optionally only those with `method` and a path matching `path` (`*` suffix allowed). */
  list(filter: { method?: string; path?: string } = {}): RecordedRequest[] {
    const method = filter.method?.toUpperCase();
    return this.entries.filter(
      (e) => (!method || e.method === method) && (!filter.path || pathMatches(filter.path, e.path)),
    );
  }

  clear(): void {
    this.entries = [];
  }
}
