import type { Queryable } from '../db/database';
import { StatementParams } from '../db/statement-params';
import { newObjectId } from '../ids';
import type { Card, CardStatus } from '../shapes/card';
import type { IndividualAccount } from '../shapes/individual';
import type { Token, TokenCreatedData, TokenUpdatedData, TokenVerificationCodeData } from '../shapes/token';
import type { PartnerTransaction } from '../upstreams/partner-transaction';
import type { TransactionStatus, TransactionStepKind } from '../../contracts/upstreams';

/** The types of partner event, in the order the docs list them (docs/events.md). */
export const PARTNER_EVENT_TYPES = [
  'card.created',
  'card.status_changed',
  'card.updated',
  'individual.created',
  'transaction.created',
  'transaction.updated',
  'token.created',
  'token.updated',
  'token.verification_code',
] as const;
export type PartnerEventType = (typeof PARTNER_EVENT_TYPES)[number];

/** Who changed a card's status: the partner through the API, the issuer on its own, or an operator. */
export type StatusSource = 'partner' | 'issuer' | 'operator';

/** CardStatus (gateway/shapes/card.ts). */
export type CardStatusName = CardStatus;

/** The full card as the API answers it (`toCard`): never a card number or CVV. */
export type EventCard = Card;

/** The individual account as the create answer shapes it (`toAccount`: document numbers masked). */
export type EventIndividual = IndividualAccount;

/** A transaction as `GET /transactions/{id}` answers it. */
export type EventTransaction = PartnerTransaction;

/** A network token as `GET /tokens/{id}` answers it (docs/tokens.md, "The Token"): never the token's or the card's number. */
export type EventToken = Token;

/** The fields of a card whose change is a `card.updated` event. */
export type UpdatedCardField = 'nickname' | 'embossedName' | 'threeDsPhone' | 'limits' | 'spendControls';

/** `data` of each event type. None ever carries a 3DS answer, a PIN or a card number. */
export interface PartnerEventData {
  'card.created': { card: EventCard; reason: 'issued' | 'replaced' | 'reissued'; previousCardKey?: string };
  'card.status_changed': {
    cardKey: string;
    previousStatus: CardStatusName | null;
    status: CardStatusName;
    statusCode: string;
    previousStatusCode: string | null;
    source: StatusSource;
    reason?: string | null;
  };
  'card.updated': { cardKey: string; changed: UpdatedCardField[]; card: EventCard; limits?: { name: string; value: number }[] };
  'individual.created': { individual: EventIndividual };
  'transaction.created': { transaction: EventTransaction };
  'transaction.updated': { transaction: EventTransaction; previousStatus: TransactionStatus | null; change: TransactionStepKind };
  'token.created': TokenCreatedData;
  'token.updated': TokenUpdatedData;
  // The one-time code the partner delivers to the cardholder: replaced by null once expiresAt has
  // passed (the retention pass), and never written to a log line.
  'token.verification_code': TokenVerificationCodeData;
}

/** An event to write. `cardKey` orders it among the card's events; `requestId` names the partner request that caused it. */
export interface NewPartnerEvent<T extends PartnerEventType = PartnerEventType> {
  type: T;
  partnerId: string;
  data: PartnerEventData[T];
  requestId?: string;
  cardKey?: string;
}

/** The envelope partners read (`GET /events`) and, later, receive. */
export interface PartnerEventEnvelope<T extends PartnerEventType = PartnerEventType> {
  id: string;
  type: T;
  createdAt: string;
  partnerId: string;
  data: PartnerEventData[T];
  requestId?: string;
}

/** A new event id: `evt_` and a 24-hex object id (time-prefixed, 64 random bits). */
export function newEventId(now = Date.now()): string {
  return `evt_${newObjectId(now)}`;
}

/** The channel a NOTIFY on which wakes the webhook dispatchers of every instance (sent on commit). */
export const PARTNER_EVENTS_CHANNEL = 'partner_events';

/**
 * Writes a partner event in `tx`, the transaction of the change that causes it: a rollback removes
 * both. With a `cardKey`, a transaction-scoped advisory lock of (partner, card) is taken first, so
 * that two concurrent changes of one card get their sequence numbers in commit order (the second
 * waits for the first to commit). The envelope is stored as its exact JSON bytes.
 *
 * `deliveries` is the number of webhook deliveries queued with it (fanOut), in the same transaction.
 *
 * @example await db.transaction(async (tx) => { await insertCard(tx, …); await emitEvent(tx, { type: 'card.created', … }); });
 */
export async function emitEvent<T extends PartnerEventType>(tx: Queryable, event: NewPartnerEvent<T>): Promise<{ id: string; seq: string; deliveries: number }> {
  const params = new StatementParams();
  const emitted = eventStatement(event, params);
  const rows = await tx.query<{ event_seq: string; deliveries: string }>(`WITH ${emitted.ctes} SELECT ${emitted.columns}`, params.values);
  return { id: emitted.id, seq: rows.rows[0].event_seq, deliveries: Number(rows.rows[0].deliveries) };
}

/** The envelope of a new event (its id drawn, its time now): what is stored, as its exact JSON bytes, and what partners read. */
export function eventEnvelope<T extends PartnerEventType>(event: NewPartnerEvent<T>): PartnerEventEnvelope<T> {
  return {
    id: newEventId(),
    type: event.type,
    createdAt: new Date().toISOString(),
    partnerId: event.partnerId,
    data: event.data,
    ...(event.requestId === undefined ? {} : { requestId: event.requestId }),
  };
}

/**
 * {@link emitEvent}'s statement as CTEs: `ordering`, `ev`, `queued` and `woken`, and `columns` for
 * the statement's `SELECT` (`event_seq`, `deliveries`, `woken`), which must be selected: a CTE no
 * part of the statement reads is not run. The lock is a CTE the insert reads from, so it is held
 * before the sequence number is drawn; the deliveries read the inserted row from the insert's
 * `RETURNING` (a statement does not see its own inserts through the table); `pg_notify` runs only
 * when a delivery was queued (the NOTIFY is sent on commit). The authorization decision writes its
 * `transaction.created` event in its own recording statement (gateway/authorizations/recording-statements.ts).
 */
export function eventStatement<T extends PartnerEventType>(
  event: NewPartnerEvent<T>,
  params: StatementParams,
  options: { prefix?: string; after?: string; envelope?: PartnerEventEnvelope<T> } = {}
): { id: string; ctes: string; columns: string } {
  const envelope = options.envelope ?? eventEnvelope(event);
  // `prefix` names this event's CTEs apart from another's in the same statement; `after`, a CTE of
  // the statement, gates the event (written only when it has a row) and orders it after that CTE.
  const n = (name: string) => `${options.prefix ?? ''}${name}`;
  const gate = options.after === undefined ? '' : `, (SELECT 1 FROM ${options.after} LIMIT 1) AS after_gate`;
  const partnerId = params.add(envelope.partnerId);
  const cardKey = params.add(event.cardKey ?? null);
  const from = '(SELECT 1) AS always';
  const ctes = `${n('ordering')} AS (
    SELECT pg_advisory_xact_lock(hashtextextended('evt:' || ${partnerId}::text || ':' || ${cardKey}::text, 0)) FROM ${from}${gate} WHERE ${cardKey}::text IS NOT NULL
  ), ${n('ev')} AS (
    INSERT INTO partner_events (id, partner_id, type, ordering_key, payload, request_id, created_at)
    SELECT ${params.add(envelope.id)}::text, ${partnerId}::text, ${params.add(envelope.type)}::text, ${cardKey}::text, ${params.add(JSON.stringify(envelope))}::text,
           ${params.add(event.requestId ?? null)}::text, ${params.add(envelope.createdAt)}::timestamptz
      FROM ${from}, (SELECT count(*) FROM ${n('ordering')}) AS locked${gate}
    RETURNING seq, partner_id, type, ordering_key
  ), ${n('queued')} AS (
    INSERT INTO webhook_deliveries (event_seq, endpoint_id, ordering_key, state, resend)
    SELECT ev.seq, e.id, ev.ordering_key, 'pending', false
      FROM ${n('ev')} AS ev JOIN webhook_endpoints e ON e.partner_id = ev.partner_id
     WHERE e.status = 'enabled' AND e.deleted_at IS NULL AND ('*' = ANY (e.events) OR ev.type = ANY (e.events))
    RETURNING 1
  ), ${n('woken')} AS (
    SELECT pg_notify('${PARTNER_EVENTS_CHANNEL}', '') FROM (SELECT 1 WHERE EXISTS (SELECT 1 FROM ${n('queued')})) AS any_queued
  )`;
  return { id: envelope.id, ctes, columns: `(SELECT seq FROM ${n('ev')}) AS ${n('event_seq')}, (SELECT count(*) FROM ${n('queued')}) AS ${n('deliveries')}, (SELECT count(*) FROM ${n('woken')}) AS ${n('woken')}` };
}

/**
 * Queues a delivery of the event `seq` to every enabled endpoint of its partner subscribed to its
 * type, in `tx`. A first delivery keeps the card's order (the dispatcher sends one open delivery
 * per endpoint and card at a time, oldest first); a resend has no order to keep.
 */
export async function fanOut(tx: Queryable, seq: string, options: { resend: boolean }): Promise<number> {
  const result = await tx.query(
    `INSERT INTO webhook_deliveries (event_seq, endpoint_id, ordering_key, state, resend)
     SELECT ev.seq, e.id, CASE WHEN $2 THEN NULL ELSE ev.ordering_key END, 'pending', $2
       FROM partner_events ev
       JOIN webhook_endpoints e ON e.partner_id = ev.partner_id
      WHERE ev.seq = $1 AND e.status = 'enabled' AND e.deleted_at IS NULL
        AND ('*' = ANY (e.events) OR ev.type = ANY (e.events))`,
    [seq, options.resend]
  );
  const count = result.rowCount ?? 0;
  if (count > 0) await tx.query(`SELECT pg_notify('${PARTNER_EVENTS_CHANNEL}', '')`);
  return count;
}
