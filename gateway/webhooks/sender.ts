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
 * Keep-alive agents, one per vetted address (protocol, address, host): a pooled connection is only
 * ever reused for the address the target guard vetted for this attempt, never for another the name
 * resolves to later (Node's agent pools by host name: one agent per protocol would hand a request
 * vetted for the new address a socket still open to the old one). Webhook deliveries and the
 * partners' decision endpoints (gateway/authorizations/partner-endpoint.ts) both take theirs here. Idle connections close after {@link IDLE_MS} (below the 5 s of Node's and
 * many servers' keep-alive timeout, so the gateway rarely writes on a socket the receiver is
 * closing); the map keeps the {@link MAX_AGENTS} most recently used.
 */
const agents = new Map<string, http.Agent>();
const IDLE_MS = 4000;
const MAX_AGENTS = 256;

export function pinnedAgent(target: { url: URL; address: string; family: number }): http.Agent {
  const key = `${target.url.protocol}//${target.url.host}@${target.address}`;
  let agent = agents.get(key);
  if (agent) {
    agents.delete(key);
    agents.set(key, agent);
    return agent;
  }
  const options = { keepAlive: true, timeout: IDLE_MS, maxFreeSockets: 64, scheduling: 'lifo' as const };
  agent = target.url.protocol === 'https:' ? new https.Agent(options) : new http.Agent(options);
  agents.set(key, agent);
  if (agents.size > MAX_AGENTS) {
    const [oldestKey, oldest] = agents.entries().next().value as [string, http.Agent];
    agents.delete(oldestKey);
    oldest.destroy();
  }
  return agent;
}

/** Closes every pinned agent's idle sockets (at shutdown). */
export function destroyPinnedAgents(): void {
  for (const agent of agents.values()) agent.destroy();
  agents.clear();
}

/**
 * One POST of `body` to `url`, connecting only to `address` (the one the target guard vetted; TLS
 * still checks the certificate against the URL's host name), on a kept-alive connection to that
 * address when one is idle. The timeout covers connecting, the headers and the answer's body. A
 * redirect is not followed: it is a failed attempt. A reused connection that the receiver had
 * closed (reset or closed before any answer) is retried once at once on a new connection, within
 * the same timeout: it is not the receiver failing.
 */
export function sendWebhook(target: { url: URL; address: string; family: number }, body: string, headers: Record<string, string>, timeoutMs: number): Promise<SendResult> {
  const started = process.hrtime.bigint();
  const elapsed = () => Number((process.hrtime.bigint() - started) / 1_000_000n);
  const lookup = pinnedLookup(target);
  const client = target.url.protocol === 'https:' ? https : http;
  const agent = pinnedAgent(target);
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
          lookup,
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
