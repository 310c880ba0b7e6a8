import http from 'node:http';
import https from 'node:https';

/** Bound on concurrent sockets to one upstream origin, shared by every caller of that origin. */
export const MAX_SOCKETS_PER_ORIGIN = 64;

/**
 * Idle keep-alive sockets are closed after this many ms: below the usual 5 s keep-alive timeout of
 * Node servers, so the gateway rarely reuses a socket the upstream is closing at the same moment.
 */
export const IDLE_SOCKET_MS = 4000;

/**
 * A keep-alive agent for one upstream origin: at most `maxSockets` sockets, idle ones closed after
 * {@link IDLE_SOCKET_MS}, the most recently used socket reused first (`lifo`: the others can idle
 * out).
 */
export function createUpstreamAgent(baseUrl: string, maxSockets = MAX_SOCKETS_PER_ORIGIN): http.Agent {
  const url = new URL(baseUrl);
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new TypeError(`upstream URL must be http(s), got ${url.protocol}`);
  const options: http.AgentOptions = { keepAlive: true, maxSockets, timeout: IDLE_SOCKET_MS, scheduling: 'lifo' };
  return url.protocol === 'https:' ? new https.Agent(options) : new http.Agent(options);
}

/**
 * The keep-alive pools of one set of upstream clients: one agent per origin, so two upstreams
 * served by one origin (a path prefix each) share one bounded pool, and every caller (typed client
 * methods and the `upstream-proxy` policy alike) goes through the same sockets.
 *
 * @example
 * const pools = new UpstreamPools();
 * pools.agentFor('http://issuer:4101') === pools.agentFor('http://issuer:4101/api/'); // true
 */
export class UpstreamPools {
  private readonly agents = new Map<string, http.Agent>();

  constructor(private readonly maxSockets = MAX_SOCKETS_PER_ORIGIN) {}

  /** The agent of `baseUrl`'s origin, created on first use. */
  agentFor(baseUrl: string): http.Agent {
    const origin = new URL(baseUrl).origin;
    let agent = this.agents.get(origin);
    if (!agent) {
      agent = createUpstreamAgent(baseUrl, this.maxSockets);
      this.agents.set(origin, agent);
    }
    return agent;
  }

  /** Destroys every agent's sockets (shutdown); later calls through a closed client fail without connecting. */
  destroy(): void {
    for (const agent of this.agents.values()) agent.destroy();
    this.agents.clear();
  }
}
