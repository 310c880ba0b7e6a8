// Small fetch wrapper for the sandbox tests: JSON in, status + headers + parsed body out.

/** An answer of a sandbox, body parsed as JSON when it is JSON. */
export interface Answer<T> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

/** Options of {@link call}. */
export interface CallOptions {
  method?: string;
  /** Sent as JSON unless it is already a string. */
  body?: unknown;
  headers?: Record<string, string>;
  signal?: AbortSignal;
}

/**
 * Calls `url` and parses the answer; the body type is the caller's claim, as in any HTTP client.
 *
 * @example const { status, body } = await call<{ cardKey: string }>(`${issuer}/cards`, { method: 'POST', body: card });
 */
export async function call<T = Record<string, unknown>>(url: string, options: CallOptions = {}): Promise<Answer<T>> {
  const headers: Record<string, string> = { ...options.headers };
  let body: string | undefined;
  if (options.body !== undefined) {
    body = typeof options.body === 'string' ? options.body : JSON.stringify(options.body);
    headers['content-type'] ??= 'application/json';
  }
  const response = await fetch(url, { method: options.method ?? 'GET', headers, body, signal: options.signal });
  const text = await response.text();
  let parsed: unknown = text;
  if ((response.headers.get('content-type') ?? '').includes('application/json') && text.length > 0) {
    parsed = JSON.parse(text) as unknown;
  }
  return { status: response.status, headers: response.headers, body: parsed as T, text };
}

/** The upstream error envelope. */
export interface ErrorBody {
  errorCode: string;
  message: string;
  details?: Array<{ path: string; message: string }>;
}
