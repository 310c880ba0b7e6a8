import { WEBHOOK_DELIVERY, type Outbound, type PostResult, type VettedTarget } from '../outbound';

/** How one delivery attempt ended. */
export interface SendResult {
  status?: number;
  /** target_refused: the connection's remote end did not pass the guard once connected (nothing was sent). */
  error?: 'timeout' | 'connection' | 'redirect' | 'http_status' | 'target_refused';
  durationMs: number;
}

/** One delivery attempt: the event, its endpoint's live secrets (newest first). */
export interface WebhookMessage {
  eventId: string;
  type: string;
  /** The event as stored: the raw body, signed as sent. */
  payload: string;
  secrets: readonly string[];
}

/**
 * One signed POST of the event to the vetted target, through the gateway's outbound transport
 * (gateway/outbound: pinned to the address the guard vetted, checked once connected, TLS checked
 * against the URL's host name, kept-alive connections, a stale one retried once on a new
 * connection). The timeout covers connecting, the headers and the answer's body, of which up to
 * 64 KiB is read. A connection the guard refuses once connected is `target_refused` (nothing was
 * sent). A redirect is not followed: it is a failed attempt. `webhook-id` is the event's id, the
 * same on every attempt.
 */
export async function sendWebhook(outbound: Pick<Outbound, 'send'>, target: VettedTarget, message: WebhookMessage, timeoutMs: number): Promise<SendResult> {
  const result = await outbound.send(target, {
    rules: WEBHOOK_DELIVERY,
    id: message.eventId,
    body: message.payload,
    secrets: message.secrets,
    headers: { 'Partner-Gateway-Event-Id': message.eventId, 'Partner-Gateway-Event-Type': message.type },
    timeoutMs,
  });
  return { ...attemptOutcome(result), durationMs: result.durationMs };
}

/** What an attempt's result means: the status decides (an answer over the cap, or cut after its head, still counts by its status). */
function attemptOutcome(result: PostResult): Omit<SendResult, 'durationMs'> {
  if (result.kind === 'failed' && (result.error !== 'connection' || result.status === undefined)) return { error: result.error };
  const status = result.status!;
  if (status >= 200 && status < 300) return { status };
  if (status >= 300 && status < 400) return { status, error: 'redirect' };
  return { status, error: 'http_status' };
}
