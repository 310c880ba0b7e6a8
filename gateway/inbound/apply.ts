import { syncCardWithIssuer, type SyncDeps } from '../cards/card-sync';
import type { Queryable } from '../db/database';
import { deleteInBatches, RETENTION_BATCH } from '../db/retention';
import { applyTransaction } from '../transactions/projection';
import { applyToken } from '../tokens/apply';
import type { TokenNotification } from '../tokens/contract-stub';
import type { Transaction } from '../../contracts/upstreams';

/** The upstreams that notify the gateway (docs/upstreams.md, section 9). */
export type NotifyingUpstream = 'issuer' | 'processing';

/** Body of an issuer notification: the card whose status the issuer changed on its own. */
export interface IssuerNotification {
  id: string;
  type: 'card.status_changed';
  occurredAt: string;
  cardKey: string;
  previousStatusCode: string | null;
  statusCode: string;
  reason: string | null;
}

/** Body of a processing notification about a transaction: a transaction the processing system recorded, or a later step of its life, with its state after that step. */
export interface ProcessingNotification {
  id: string;
  type: 'transaction.created' | 'transaction.updated';
  occurredAt: string;
  transaction: Transaction;
}

/** What applying a notification did: the 200 answer's `outcome`. */
export type NotificationOutcome = 'applied' | 'unchanged' | 'unknown_card';

async function seen(db: Queryable, upstream: NotifyingUpstream, id: string): Promise<boolean> {
  const rows = await db.query('SELECT 1 FROM upstream_notifications WHERE upstream = $1 AND id = $2', [upstream, id]);
  return (rows.rowCount ?? 0) > 0;
}

/**
 * Applies an issuer notification: the card is re-read from the issuer through the card sync rather
 * than taken from the body, so that notifications arriving out of order (or a change the gateway
 * itself asked for) leave the record at the issuer's state; the sync writes the status history,
 * the audit entry and the `card.status_changed` event (`source: "issuer"`) in one transaction. The
 * notification is recorded after: a duplicate arriving meanwhile finds the record already equal to
 * the issuer's, so it changes nothing. Returns undefined for a notification already applied.
 */
export async function applyIssuerNotification(deps: SyncDeps, n: IssuerNotification): Promise<NotificationOutcome | undefined> {
  if (await seen(deps.db, 'issuer', n.id)) return undefined;
  const sync = await syncCardWithIssuer(deps, n.cardKey, `notify-${n.id}`, { reason: n.reason, notificationId: n.id });
  const outcome: NotificationOutcome = sync === 'missing' ? 'unknown_card' : sync === 'unchanged' ? 'unchanged' : 'applied';
  const inserted = await deps.db.query(
    `INSERT INTO upstream_notifications (upstream, id, type, outcome, card_key) VALUES ('issuer', $1, $2, $3, $4) ON CONFLICT DO NOTHING`,
    [n.id, n.type, outcome, n.cardKey]
  );
  // Another delivery of the same notification recorded it first: this one is the duplicate.
  return (inserted.rowCount ?? 0) === 0 ? undefined : outcome;
}

/**
 * Applies a processing notification in one transaction: the notification row (its conflict is a
 * duplicate: nothing else is written) and the transaction's state through the projection
 * (`applyTransaction`: the row, the audit entry and the partner's events, none when the state is not
 * newer than the one recorded). Returns undefined for a notification already applied.
 */
export async function applyProcessingNotification(db: SyncDeps['db'], n: ProcessingNotification): Promise<NotificationOutcome | undefined> {
  return db.transaction(async (tx) => {
    const inserted = await tx.query(
      `INSERT INTO upstream_notifications (upstream, id, type, outcome, card_key) VALUES ('processing', $1, $2, 'applied', $3) ON CONFLICT DO NOTHING RETURNING id`,
      [n.id, n.type, n.transaction.cardId]
    );
    if ((inserted.rowCount ?? 0) === 0) return undefined;
    const outcome = await applyTransaction(tx, n.transaction, { via: 'notification', notificationId: n.id });
    if (outcome !== 'applied') await tx.query(`UPDATE upstream_notifications SET outcome = $2 WHERE upstream = 'processing' AND id = $1`, [n.id, outcome]);
    return outcome;
  });
}

/**
 * Applies a token lifecycle notification (docs/upstreams.md 10.5) in one transaction: the
 * notification row (its conflict is a duplicate: nothing else is written) and the token's state
 * through `applyToken` (the row, its history, the audit entry and the partner's `token.created` or
 * `token.updated`, none when the state is not newer than the one held). Returns undefined for a
 * notification already applied.
 */
export async function applyTokenNotification(db: SyncDeps['db'], n: TokenNotification): Promise<NotificationOutcome | undefined> {
  return db.transaction(async (tx) => {
    const inserted = await tx.query(
      `INSERT INTO upstream_notifications (upstream, id, type, outcome, card_key) VALUES ('processing', $1, $2, 'applied', $3) ON CONFLICT DO NOTHING RETURNING id`,
      [n.id, n.type, n.token.cardKey]
    );
    if ((inserted.rowCount ?? 0) === 0) return undefined;
    // The processor's reason of a later change (`device_lost`, `wallet_removed`…) goes into the token's history.
    const reason = n.type === 'token.updated' ? n.reason : undefined;
    const { outcome } = await applyToken(tx, n.token, { via: 'notification', notificationId: n.id, ...(reason === undefined ? {} : { reason }) });
    if (outcome !== 'applied') await tx.query(`UPDATE upstream_notifications SET outcome = $2 WHERE upstream = 'processing' AND id = $1`, [n.id, outcome]);
    return outcome;
  });
}

/**
 * Forgets the notifications received more than `retentionDays` ago (`NOTIFICATIONS_RETENTION_DAYS`,
 * default 7), in batches; returns how many went. The log only has to outlive the upstreams' retry
 * window (docs/upstreams.md, section 9): a repeat arrives when the gateway's 2xx was lost, and the
 * upstream stops retrying after its window (the sandboxes' 24 h). Past it, a repeat would be applied
 * again, and change nothing: the issuer's card is re-read (`unchanged`), and a transaction's state
 * is not newer than the one recorded (its version). Idempotent; safe on several instances.
 */
export async function deleteExpiredNotifications(db: Queryable, retentionDays: number, batch = RETENTION_BATCH): Promise<number> {
  return deleteInBatches(
    db,
    `DELETE FROM upstream_notifications WHERE (upstream, id) IN (
       SELECT upstream, id FROM upstream_notifications WHERE received_at < now() - make_interval(days => $1) ORDER BY received_at LIMIT $2 FOR UPDATE SKIP LOCKED)`,
    [retentionDays],
    batch
  );
}
