import http from 'node:http';
import https from 'node:https';

/** Bound on concurrent sockets to one upstream, shared by every proxy route to it. */
export const PROXY_MAX_SOCKETS = 64;

/**
 * Idle keep-alive sockets are closed after this many ms: below the usual 5 s keep-alive timeout of
 * Node servers, so the gateway rarely reuses a socket the upstream is closing at the same moment.
 */
export const PROXY_IDLE_SOCKET_MS = 4000;

const agents = new Map<string, http.Agent>();

/**
 * The keep-alive agent of an upstream, one per origin for the whole process: all proxy steps to
 * the issuer share one pool of at most {@link PROXY_MAX_SOCKETS} sockets.
 *
 * @example const agent = proxyAgentFor('http://127.0.0.1:4101');
 */
export function proxyAgentFor(baseUrl: string): http.Agent {
  const url = new URL(baseUrl);
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new TypeError(`upstream URL must be http(s), got ${url.protocol}`);
  const key = url.origin;
  let agent = agents.get(key);
  if (!agent) {
    const options: http.AgentOptions = { keepAlive: true, maxSockets: PROXY_MAX_SOCKETS, timeout: PROXY_IDLE_SOCKET_MS, scheduling: 'lifo' };
    agent = url.protocol === 'https:' ? new https.Agent(options) : new http.Agent(options);
    agents.set(key, agent);
  }
  return agent;
}

/** Destroys every proxy agent's sockets and forgets the agents (shutdown, tests). */
export function destroyProxyAgents(): void {
  for (const agent of agents.values()) agent.destroy();
  agents.clear();
}
