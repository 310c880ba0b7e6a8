import { Client } from '../db/pg';
import { OWNERSHIP_CHANGED_CHANNEL } from '../ownership';
import { PARTNER_EVENTS_CHANNEL } from '../outbox/partner-events';
import type { Logger } from '../logging/logger';

/** PostgreSQL channel on which partner changes are announced to every gateway instance. */
export const PARTNER_CHANGED_CHANNEL = 'partner_changed';

/** Delays between reconnection attempts: short, so that the feed is back about a second after PostgreSQL. */
export const FEED_RECONNECT_MIN_MS = 250;
export const FEED_RECONNECT_MAX_MS = 1000;
/**
 * The listening connection is checked this often (`SELECT 1`); a check without an answer within the
 * same time counts as a lost connection, so that a link that dies silently is noticed too.
 */
export const FEED_HEARTBEAT_MS = 1000;

/** What the feed reports. */
export interface ChangeFeedHandlers {
  /** A partner changed (announced by any instance). */
  onChange(partnerId: string): void;
  /**
   * The owner of a resource changed (`<kind>:<id>` on {@link OWNERSHIP_CHANGED_CHANNEL}: a card
   * replaced or re-issued, announced by any instance in the transaction of the change).
   */
  onOwnershipChange?(kind: string, id: string): void;
  /** A partner event queued webhook deliveries (emitEvent's NOTIFY on commit, any instance's): the dispatcher looks at once. */
  onPartnerEvents?(): void;
  /** The feed listens (again): changes may have been missed before, forget what depends on them. */
  onConnected(): void;
  /** The feed lost its connection (or has none yet): changes of other instances go unseen until onConnected. */
  onDisconnected(): void;
}

/**
 * Listens to partner changes announced by any instance (`pg_notify('partner_changed', id)`) and
 * calls `onChange(id)`. It starts disconnected; `onConnected` is called after each successful
 * LISTEN (the first one included) and `onDisconnected` when the connection is lost, after which it
 * reconnects every {@link FEED_RECONNECT_MIN_MS} to {@link FEED_RECONNECT_MAX_MS} ms. On a database
 * without LISTEN (the embedded one) it is not started: there the only instance also changes
 * partners, and calls `onChange` in-process.
 */
export function listenForPartnerChanges(
  connectionString: string,
  handlers: ChangeFeedHandlers,
  log: Logger,
  options: { heartbeatMs?: number; reconnectMinMs?: number; reconnectMaxMs?: number } = {}
): { stop(): Promise<void>; connected(): boolean } {
  const heartbeatMs = options.heartbeatMs ?? FEED_HEARTBEAT_MS;
  const minDelay = options.reconnectMinMs ?? FEED_RECONNECT_MIN_MS;
  const maxDelay = options.reconnectMaxMs ?? FEED_RECONNECT_MAX_MS;
  let client: Client | undefined;
  let stopped = false;
  let delayMs = minDelay;
  let timer: NodeJS.Timeout | undefined;
  let heartbeat: NodeJS.Timeout | undefined;

  handlers.onDisconnected();

  const lost = (which: Client, err: unknown, message: string) => {
    if (client !== which) return; // an older connection already replaced
    client = undefined;
    if (heartbeat) clearInterval(heartbeat);
    heartbeat = undefined;
    handlers.onDisconnected();
    if (!stopped) log.warn({ err }, message);
    which.end().catch(() => undefined);
    schedule();
  };

  const connect = async () => {
    if (stopped) return;
    const next = new Client({ connectionString, connectionTimeoutMillis: 3000, keepAlive: true });
    next.on('notification', (message) => {
      if (message.channel === PARTNER_CHANGED_CHANNEL && message.payload) handlers.onChange(message.payload);
      if (message.channel === PARTNER_EVENTS_CHANNEL) handlers.onPartnerEvents?.();
      if (message.channel === OWNERSHIP_CHANGED_CHANNEL && message.payload && handlers.onOwnershipChange) {
        const at = message.payload.indexOf(':');
        if (at > 0) handlers.onOwnershipChange(message.payload.slice(0, at), message.payload.slice(at + 1));
      }
    });
    next.on('error', (err) => lost(next, err, 'partner change feed lost its connection'));
    next.on('end', () => lost(next, undefined, 'partner change feed connection ended'));
    try {
      await next.connect();
      await next.query(`LISTEN ${PARTNER_CHANGED_CHANNEL}`);
      if (handlers.onOwnershipChange) await next.query(`LISTEN ${OWNERSHIP_CHANGED_CHANNEL}`);
      if (handlers.onPartnerEvents) await next.query(`LISTEN ${PARTNER_EVENTS_CHANNEL}`);
    } catch (err) {
      log.warn({ err }, 'partner change feed not connected; retrying');
      next.end().catch(() => undefined);
      schedule();
      return;
    }
    if (stopped) {
      await next.end().catch(() => undefined);
      return;
    }
    client = next;
    delayMs = minDelay;
    handlers.onConnected();
    log.info({ channel: PARTNER_CHANGED_CHANNEL }, 'partner change feed listening');
    heartbeat = setInterval(() => {
      let answered = false;
      const deadline = setTimeout(() => {
        if (!answered) lost(next, new Error(`no answer to the heartbeat within ${heartbeatMs} ms`), 'partner change feed lost its connection');
      }, heartbeatMs);
      deadline.unref();
      next.query('SELECT 1').then(
        () => {
          answered = true;
          clearTimeout(deadline);
        },
        (err: unknown) => {
          answered = true;
          clearTimeout(deadline);
          lost(next, err, 'partner change feed lost its connection');
        }
      );
    }, heartbeatMs);
    heartbeat.unref();
  };
  const schedule = () => {
    if (stopped || timer) return;
    timer = setTimeout(() => {
      timer = undefined;
      void connect();
    }, delayMs);
    timer.unref();
    delayMs = Math.min(delayMs * 2, maxDelay);
  };
  void connect();
  return {
    connected: () => client !== undefined,
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      if (heartbeat) clearInterval(heartbeat);
      const current = client;
      client = undefined;
      await current?.end().catch(() => undefined);
    },
  };
}
