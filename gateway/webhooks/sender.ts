import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';

/** How one delivery attempt ended. */
export interface SendResult {
  status?: number;
  error?: 'timeout' | 'connection' | 'redirect' | 'http_status';
  durationMs: number;
}

/**
 * A `lookup` for node:http(s) that answers only `target.address`, the one the target guard vetted:
 * the connection goes there whatever the name resolves to meanwhile (DNS rebinding); TLS still
 * checks the certificate against the URL's host name.
 */
export function pinnedLookup(target: { address: string; family: number }): LookupFunction {
  return (_host, options, callback) => {
    if (options.all) (callback as unknown as (err: null, addresses: { address: string; family: number }[]) => void)(null, [{ address: target.address, family: target.family }]);
    else callback(null, target.address, target.family);
  };
}

/** What an attempt reads of the receiver's answer at most; the rest is not waited for. */
const MAX_ANSWER_BYTES = 64 * 1024;

/**
 * One POST of `body` to `url`, connecting only to `address` (the one the target guard vetted; TLS
 * still checks the certificate against the URL's host name). The timeout covers connecting, the
 * headers and the answer's body. A redirect is not followed: it is a failed attempt.
 */
export function sendWebhook(target: { url: URL; address: string; family: number }, body: string, headers: Record<string, string>, timeoutMs: number): Promise<SendResult> {
  const started = process.hrtime.bigint();
  const elapsed = () => Number((process.hrtime.bigint() - started) / 1_000_000n);
  const lookup = pinnedLookup(target);
  const client = target.url.protocol === 'https:' ? https : http;
  return new Promise((resolve) => {
    let done = false;
    const finish = (result: Omit<SendResult, 'durationMs'>) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      req.destroy();
      resolve({ ...result, durationMs: elapsed() });
    };
    const req = client.request(
      target.url,
      {
        method: 'POST',
        lookup,
        agent: false,
        headers: { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body), 'User-Agent': 'PartnerGateway-Webhooks/1.0', ...headers },
      },
      (res) => {
        const status = res.statusCode ?? 0;
        let read = 0;
        res.on('data', (chunk: Buffer) => {
          read += chunk.length;
          if (read > MAX_ANSWER_BYTES) finish(outcome(status));
        });
        res.on('end', () => finish(outcome(status)));
        res.on('error', () => finish(outcome(status)));
      }
    );
    const timer = setTimeout(() => finish({ error: 'timeout' }), timeoutMs);
    req.on('error', () => finish({ error: 'connection' }));
    req.end(body);
  });
}

function outcome(status: number): Omit<SendResult, 'durationMs'> {
  if (status >= 200 && status < 300) return { status };
  if (status >= 300 && status < 400) return { status, error: 'redirect' };
  return { status, error: 'http_status' };
}
