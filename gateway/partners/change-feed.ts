import { Client } from 'pg';
import type { Logger } from '../logging/logger';

/** PostgreSQL channel on which partner changes are announced to every gateway instance. */
export const PARTNER_CHANGED_CHANNEL = 'partner_changed';

/**
 * Listens to partner changes announced by any instance (`pg_notify('partner_changed', id)`) and
 * calls `onChange(id)`; after a lost connection it reconnects with backoff and calls
 * `onMissed()` (changes may have been missed meanwhile). On a database without LISTEN (the
 * embedded one) it stays off: there the only instance also changes partners, and calls
 * `onChange` in-process.
 */
export function listenForPartnerChanges(
  connectionString: string,
  handlers: { onChange(partnerId: string): void; onMissed(): void },
  log: Logger
): { stop(): Promise<void> } {
  let client: Client | undefined;
  let stopped = false;
  let delayMs = 500;
  let timer: NodeJS.Timeout | undefined;

  const connect = async (reconnecting: boolean) => {
    if (stopped) return;
    const next = new Client({ connectionString, connectionTimeoutMillis: 3000 });
    next.on('notification', (message) => {
      if (message.channel === PARTNER_CHANGED_CHANNEL && message.payload) handlers.onChange(message.payload);
    });
    next.on('error', (err) => {
      log.warn({ err }, 'partner change feed lost its connection');
      next.end().catch(() => undefined);
      schedule();
    });
    try {
      await next.connect();
      await next.query(`LISTEN ${PARTNER_CHANGED_CHANNEL}`);
      client = next;
      delayMs = 500;
      if (reconnecting) handlers.onMissed();
    } catch (err) {
      log.warn({ err }, 'partner change feed not connected; retrying');
      next.end().catch(() => undefined);
      schedule();
    }
  };
  const schedule = () => {
    if (stopped || timer) return;
    timer = setTimeout(() => {
      timer = undefined;
      void connect(true);
    }, delayMs);
    timer.unref();
    delayMs = Math.min(delayMs * 2, 30_000);
  };
  void connect(false);
  return {
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await client?.end().catch(() => undefined);
    },
  };
}
