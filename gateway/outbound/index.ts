import { signedHeaders } from './signature';
import { checkTarget, refusedConnection, type GuardRules, type TargetCheck, type VettedTarget } from './target-guard';
import { PinnedTransport, type AnswerRules, type PostResult, type TransportOptions } from './transport';

export { OwnListeners } from './own-listeners';
export { TargetRefusedError, type AnswerRules, type PostResult, type TransportOptions } from './transport';
export { checkTarget, refusedAddress, refusedConnection, systemResolver, type GuardRules, type Resolver, type TargetCheck, type VettedTarget } from './target-guard';

/** How webhook deliveries read the receiver's answer: its status counts; up to 64 KiB of its body is read, so the connection can be reused. */
export const WEBHOOK_DELIVERY: AnswerRules = { maxAnswerBytes: 64 * 1024, readBody: 'always', userAgent: 'PartnerGateway-Webhooks/1.0' };
/** How decision requests read the partner's answer: a 2xx's body up to 4 KiB (the decision); any other status ends at once. */
export const AUTHORIZATION_DECISION: AnswerRules = { maxAnswerBytes: 4 * 1024, readBody: 'success', userAgent: 'PartnerGateway-Authorizations/1.0' };

/** One signed message to a partner's URL. */
export interface SignedPost {
  /** How its answer is read (its cap): {@link WEBHOOK_DELIVERY}, {@link AUTHORIZATION_DECISION}. */
  rules: AnswerRules;
  /** The message's id (`webhook-id`): the same on every retry of the message. */
  id: string;
  /** The raw JSON body, signed as sent. */
  body: string;
  /** The endpoint's live secrets, newest first: one signature each in both signature headers. */
  secrets: readonly string[];
  /** More headers (`Partner-Gateway-Event-Id`, `Partner-Gateway-Event-Type`). */
  headers?: Record<string, string>;
  /** The whole call's timeout: connecting, the answer's head and body, the one stale-connection retry. */
  timeoutMs: number;
}

/**
 * Everything that calls a partner's URL goes through this (docs/webhooks.md, "Allowed URLs";
 * docs/authorization-endpoint.md): one guard, checked when the URL is registered or changed and
 * again before each call, and one transport whose connections go only to the address the guard
 * vetted and are checked again once connected; every message is signed with the endpoint's live
 * secrets (`Partner-Gateway-Signature` and Standard Webhooks). One per gateway
 * (createGatewayServices), shared by the webhooks and the decision endpoints.
 */
export interface Outbound {
  /** Whether a partner-supplied URL may be called now, and the address to connect to when it may. */
  check(url: string): Promise<TargetCheck>;
  /** One signed POST to a vetted target ({@link PinnedTransport.post}); never throws for the receiver's behaviour. */
  send(target: VettedTarget, message: SignedPost): Promise<PostResult>;
  /** Closes the transport's connections (at shutdown). */
  close(): void;
}

/**
 * Builds the guard and transport of one gateway (`transport.ca`: a CA trusted beside the system's,
 * for tests).
 *
 * @example
 * const outbound = createOutbound({ allowPrivate: settings.sandboxMode || settings.webhooksAllowPrivate, ownListeners });
 * const target = await outbound.check(url);
 * if (target.ok) await outbound.send(target, { rules: WEBHOOK_DELIVERY, id: event.id, body, secrets, timeoutMs: 10_000 });
 */
export function createOutbound(rules: GuardRules, transport: TransportOptions = {}): Outbound {
  const pinned = new PinnedTransport((remote, target) => refusedConnection(remote, target, rules), transport);
  return {
    check: (url) => checkTarget(url, rules),
    send: (target, message) => {
      // Signed now: a retry of the message (a later attempt) carries the same id and a fresh timestamp.
      const signed = signedHeaders(message.secrets, message.id, Math.floor(Date.now() / 1000), message.body);
      return pinned.post(target, message.body, { ...message.headers, ...signed }, message.rules, message.timeoutMs);
    },
    close: () => pinned.close(),
  };
}

/**
 * `outbound.check(url)`, given up after `timeoutMs` (`'timeout'`): a caller with a deadline counts the
 * guard's DNS lookup in it.
 */
export async function checkWithin(outbound: Pick<Outbound, 'check'>, url: string, timeoutMs: number): Promise<TargetCheck | 'timeout'> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      outbound.check(url),
      new Promise<'timeout'>((resolve) => {
        timer = setTimeout(() => resolve('timeout'), timeoutMs);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}
