import http from 'node:http';
import https from 'node:https';
import { TargetRefusedError, type VettedTarget } from '../outbound';

/** How one delivery attempt ended. */
export interface SendResult {
  status?: number;
  /** target_refused: the connection's remote end did not pass the guard once connected (nothing was sent). */
  error?: 'timeout' | 'connection' | 'redirect' | 'http_status' | 'target_refused';
  durationMs: number;
}

/** What an attempt reads of the receiver's answer at most; the rest is not waited for. */
const MAX_ANSWER_BYTES = 64 * 1024;

/**
 * One POST of `body` to `url`, on `agent` (the outbound transport's agent of the vetted target,
 * gateway/outbound: it connects only to the address the guard vetted and checks each new
 * connection's remote end before the request is sent; TLS still checks the certificate against the
 * URL's host name), on a kept-alive connection to that address when one is idle. The timeout covers
 * connecting, the headers and the answer's body. A connection the guard refuses once connected is
 * `target_refused` (nothing was sent). A redirect is not followed: it is a failed attempt. A reused connection that the receiver had
 * closed (reset or closed before any answer) is retried once at once on a new connection, within
 * the same timeout: it is not the receiver failing.
 */
export function sendWebhook(target: VettedTarget, agent: http.Agent, body: string, headers: Record<string, string>, timeoutMs: number): Promise<SendResult> {
  const started = process.hrtime.bigint();
  const elapsed = () => Number((process.hrtime.bigint() - started) / 1_000_000n);
  const client = target.url.protocol === 'https:' ? https : http;
  return new Promise((resolve) => {
    let done = false;
    let req: http.ClientRequest;
    const finish = (result: Omit<SendResult, 'durationMs'>, keepSocket = false) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      if (!keepSocket) req.destroy();
      resolve({ ...result, durationMs: elapsed() });
    };
    const attempt = (retried: boolean) => {
      req = client.request(
        target.url,
        {
          method: 'POST',
          agent,
          headers: { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body), 'User-Agent': 'PartnerGateway-Webhooks/1.0', ...headers },
        },
        (res) => {
          const status = res.statusCode ?? 0;
          let read = 0;
          res.on('data', (chunk: Buffer) => {
            read += chunk.length;
            if (read > MAX_ANSWER_BYTES) finish(outcome(status));
          });
          // Read to its end: the connection goes back to the pool.
          res.on('end', () => finish(outcome(status), true));
          res.on('error', () => finish(outcome(status)));
        }
      );
      const sent = req;
      sent.on('error', (err: NodeJS.ErrnoException) => {
        if (done || sent !== req) return;
        if (err instanceof TargetRefusedError) {
          finish({ error: 'target_refused' });
          return;
        }
        if (!retried && sent.reusedSocket && (err.code === 'ECONNRESET' || err.code === 'EPIPE' || err.message === 'socket hang up')) {
          attempt(true);
          return;
        }
        finish({ error: 'connection' });
      });
      sent.end(body);
    };
    const timer = setTimeout(() => finish({ error: 'timeout' }), timeoutMs);
    attempt(false);
  });
}

function outcome(status: number): Omit<SendResult, 'durationMs'> {
  if (status >= 200 && status < 300) return { status };
  if (status >= 300 && status < 400) return { status, error: 'redirect' };
  return { status, error: 'http_status' };
}
