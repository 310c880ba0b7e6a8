import type http from 'node:http';
import { PinnedAgents } from './pinned-agents';
import { checkTarget, refusedConnection, type GuardRules, type TargetCheck, type VettedTarget } from './target-guard';

export { OwnListeners } from './own-listeners';
export { TargetRefusedError } from './pinned-agents';
export { checkTarget, refusedAddress, refusedConnection, systemResolver, type GuardRules, type Resolver, type TargetCheck, type VettedTarget } from './target-guard';

/**
 * Everything that calls a partner's URL goes through this (docs/webhooks.md, "Allowed URLs";
 * docs/authorization-endpoint.md): one guard, checked when the URL is registered or changed and
 * again before each call, and one transport whose connections go only to the address the guard
 * vetted and are checked again once connected. One per gateway (createGatewayServices), shared by
 * the webhooks and the decision endpoints.
 */
export interface Outbound {
  /** Whether a partner-supplied URL may be called now, and the address to connect to when it may. */
  check(url: string): Promise<TargetCheck>;
  /** The keep-alive agent of a vetted target: connects only to its address, and refuses a connection whose remote end the guard refuses. */
  agent(target: VettedTarget): http.Agent;
  /** Closes the agents' sockets (at shutdown). */
  close(): void;
}

/**
 * Builds the guard and transport of one gateway.
 *
 * @example
 * const outbound = createOutbound({ allowPrivate: settings.sandboxMode || settings.webhooksAllowPrivate, ownListeners });
 * const target = await outbound.check(url);
 * if (target.ok) http.request(target.url, { agent: outbound.agent(target), method: 'POST' });
 */
export function createOutbound(rules: GuardRules): Outbound {
  const agents = new PinnedAgents((remote, target) => refusedConnection(remote, target, rules));
  return {
    check: (url) => checkTarget(url, rules),
    agent: (target) => agents.agentFor(target),
    close: () => agents.close(),
  };
}
