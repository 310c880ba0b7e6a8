import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import type { Duplex } from 'node:stream';
import type { VettedTarget } from './target-guard';

/** Why a connection may not carry a request ({@link PinnedAgents}' check), or undefined when it may. */
export type ConnectionCheck = (remote: { address?: string; port?: number }, target: VettedTarget) => string | undefined;

/**
 * A connection the guard refused once connected (its remote end did not pass): the socket was
 * destroyed before anything was sent. A request on it fails with this error: callers report
 * `target_refused`.
 */
export class TargetRefusedError extends Error {
  readonly code = 'ERR_OUTBOUND_TARGET_REFUSED';
  constructor(readonly reason: string) {
    super(`outbound connection refused: ${reason}`);
  }
}

/** Idle kept-alive connections close after this (below the 5 s of Node's and many servers' keep-alive timeout, so the gateway rarely writes on a socket the receiver is closing). */
const IDLE_MS = 4000;
/** The pool keeps the agents of this many most recently used addresses. */
const MAX_AGENTS = 256;
/**
 * A connection attempt is abandoned after this long even when its request was given up sooner (a
 * caller's timeout ends its request, not the attempt): longer than any caller's timeout
 * (`WEBHOOKS_TIMEOUT_MS` is at most 60 s).
 */
const CONNECT_LIMIT_MS = 60_000;

/**
 * Opens a TCP connection to the vetted address only (never a name: nothing is resolved here), and
 * hands it over once its remote end passed `check`; a connection that does not pass is destroyed
 * before any byte is written on it (a TLS handshake included).
 */
function connectPinned(target: VettedTarget, check: ConnectionCheck, options: http.ClientRequestArgs, done: (err: Error | null, socket?: net.Socket) => void): void {
  // The request's options as Node's own agents pass them to net.connect (keep-alive, noDelay, the
  // agent's idle timeout), with the vetted address in place of the URL's host.
  const socket = net.connect({ ...(options as net.TcpNetConnectOpts), host: target.address, port: Number(options.port), family: target.family, lookup: undefined });
  const limit = setTimeout(() => socket.destroy(new Error(`connect timed out after ${CONNECT_LIMIT_MS} ms`)), CONNECT_LIMIT_MS);
  limit.unref();
  const failed = (err: Error) => {
    clearTimeout(limit);
    done(err);
  };
  socket.once('error', failed);
  socket.once('connect', () => {
    clearTimeout(limit);
    socket.off('error', failed);
    const reason = check({ address: socket.remoteAddress, port: socket.remotePort }, target);
    if (reason) {
      socket.destroy();
      done(new TargetRefusedError(reason));
      return;
    }
    done(null, socket);
  });
}

/** An http agent whose connections go to one vetted address, each checked once connected. */
class PinnedHttpAgent extends http.Agent {
  constructor(
    private readonly target: VettedTarget,
    private readonly check: ConnectionCheck,
    options: http.AgentOptions
  ) {
    super(options);
  }

  override createConnection(options: http.ClientRequestArgs, callback?: (err: Error | null, stream: Duplex) => void): Duplex | null | undefined {
    connectPinned(this.target, this.check, options, (err, socket) => callback?.(err, socket as Duplex));
    return undefined;
  }
}

/** The https agent of one vetted address: TLS on the checked TCP connection, the certificate still checked against the URL's host name. */
class PinnedHttpsAgent extends https.Agent {
  constructor(
    private readonly target: VettedTarget,
    private readonly check: ConnectionCheck,
    options: https.AgentOptions
  ) {
    super(options);
  }

  override createConnection(options: https.RequestOptions, callback?: (err: Error | null, stream: Duplex) => void): Duplex | null | undefined {
    connectPinned(this.target, this.check, options, (err, socket) => {
      if (err || !socket) return callback?.(err, socket as Duplex);
      // https.Agent's own createConnection (its TLS session cache, SNI from the URL's host name), on the checked socket.
      callback?.(null, super.createConnection(Object.assign({}, options, { socket })) as Duplex);
    });
    return undefined;
  }
}

/**
 * Keep-alive agents, one per vetted address (protocol, host, address): a pooled connection is only
 * ever reused for the address the guard vetted for this call, never for another the name resolves
 * to later (Node's agent pools by host name: one agent per protocol would hand a request vetted for
 * the new address a socket still open to the old one). Each agent connects to its address only and
 * checks every new connection's remote end with `check` before the request is sent on it (a
 * refusal fails the request with {@link TargetRefusedError}). Webhook deliveries and the partners'
 * decision endpoints take theirs here. Idle connections close after 4 s; the pool keeps the 256
 * most recently used agents.
 */
export class PinnedAgents {
  private readonly agents = new Map<string, http.Agent>();

  constructor(private readonly check: ConnectionCheck) {}

  /** The agent of a vetted target (made at its first use). */
  agentFor(target: VettedTarget): http.Agent {
    const key = `${target.url.protocol}//${target.url.host}@${target.address}`;
    let agent = this.agents.get(key);
    if (agent) {
      this.agents.delete(key);
      this.agents.set(key, agent);
      return agent;
    }
    const options = { keepAlive: true, timeout: IDLE_MS, maxFreeSockets: 64, scheduling: 'lifo' as const };
    agent = target.url.protocol === 'https:' ? new PinnedHttpsAgent(target, this.check, options) : new PinnedHttpAgent(target, this.check, options);
    this.agents.set(key, agent);
    if (this.agents.size > MAX_AGENTS) {
      const [oldestKey, oldest] = this.agents.entries().next().value as [string, http.Agent];
      this.agents.delete(oldestKey);
      oldest.destroy();
    }
    return agent;
  }

  /** Closes every agent's sockets (at shutdown). */
  close(): void {
    for (const agent of this.agents.values()) agent.destroy();
    this.agents.clear();
  }
}
