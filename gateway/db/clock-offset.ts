import type { Queryable } from './database';

/** The database's clock against this process's, as one round trip measured it. */
export interface ClockOffset {
  /** The database's clock less this process's, in ms (positive: the database is ahead). */
  offsetMs: number;
  /** Half the round trip, in ms: the true offset lies within `offsetMs` ± this. */
  uncertaintyMs: number;
}

/**
 * Measures the offset of the database's clock (`clock_timestamp()`) from this process's
 * (`Date.now()`): one statement, its answer taken as read at the round trip's midpoint
 * (Cristian's algorithm).
 *
 * @example const { offsetMs, uncertaintyMs } = await measureClockOffset(db);
 */
export async function measureClockOffset(db: Queryable, now: () => number = Date.now): Promise<ClockOffset> {
  const sent = now();
  const row = (await db.query<{ at: string }>('SELECT (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS at')).rows[0];
  const received = now();
  return { offsetMs: Number(row.at) - (sent + received) / 2, uncertaintyMs: (received - sent) / 2 };
}

/** Whether a measured offset shows the clocks further apart than `boundMs` whatever the round trip hid. */
export function beyondBound(offset: ClockOffset, boundMs: number): boolean {
  return Math.abs(offset.offsetMs) - offset.uncertaintyMs > boundMs;
}
