import type { Queryable } from '../db/database';
import { GatewayError } from '../errors';
import { isMaskedCardNumber } from '../upstreams/card-data';
import { offsetOf, pageOfIndividualHistory, type CountedPage, type PageRequest } from '../db/paging';
import { newObjectId } from '../ids';
import type { Card } from '../shapes/card';
import type { CardStatus } from './card-status';

export type { Card } from '../shapes/card';

/** The first nine fields of 2.3 (list of an individual's cards). */
export type CardListItem = Pick<Card, 'cardKey' | 'cardMask' | 'type' | 'status' | 'statusCode' | 'currency' | 'ownerType' | 'ownerId' | 'createdAt'>;

/** A card row to insert, as the issuer returned it plus its ownership chain. */
export interface NewCard {
  cardKey: string;
  partnerId: string;
  individualId?: string;
  tenantId?: string;
  cardMask: string;
  type: 'virtual' | 'physical';
  status: CardStatus;
  statusCode: string;
  currency: string;
  productCode: string;
  holderClientCode: string | null;
  expDate: string;
  embossedName: string | null;
  createdAt: string;
}

export interface CardRow {
  card_key: string;
  partner_id: string;
  owner_type: 'individual' | 'b2b';
  owner_id: string;
  card_mask: string;
  type: 'virtual' | 'physical';
  status: CardStatus;
  status_code: string;
  currency: string;
  product_code: string;
  holder_client_code: string | null;
  exp_date: string;
  embossed_name: string | null;
  nickname: string | null;
  three_ds_phone: string | null;
  created_at: Date;
}

export const CARD_COLUMNS =
  'card_key, partner_id, owner_type, owner_id, card_mask, type, status, status_code, currency, product_code, holder_client_code, exp_date, embossed_name, nickname, three_ds_phone, created_at';

/** Maps a card row to the full card object. Only listed fields: a PAN or CVV can never slip through. */
export function toCard(row: CardRow): Card {
  return {
    cardKey: row.card_key,
    cardMask: row.card_mask,
    type: row.type,
    status: row.status,
    statusCode: row.status_code,
    currency: row.currency,
    ownerType: row.owner_type,
    ownerId: row.owner_id,
    createdAt: row.created_at.toISOString(),
    productCode: row.product_code,
    holderClientCode: row.holder_client_code,
    expDate: row.exp_date,
    embossedName: row.embossed_name,
    nickname: row.nickname,
    threeDsPhone: row.three_ds_phone,
  };
}

/** The stored card of `cardKey` (held by `partnerId` when given), or undefined when our database has none. */
export async function findCard(db: Queryable, cardKey: string, partnerId?: string): Promise<Card | undefined> {
  const rows =
    partnerId === undefined
      ? await db.query<CardRow>(`SELECT ${CARD_COLUMNS} FROM cards WHERE card_key = $1`, [cardKey])
      : await db.query<CardRow>(`SELECT ${CARD_COLUMNS} FROM cards WHERE card_key = $1 AND partner_id = $2`, [cardKey, partnerId]);
  return rows.rows.length === 0 ? undefined : toCard(rows.rows[0]);
}

/** The first nine fields of a card (spec 2.3, list of an individual's cards). */
export function toCardListItem(card: Card): CardListItem {
  const { cardKey, cardMask, type, status, statusCode, currency, ownerType, ownerId, createdAt } = card;
  return { cardKey, cardMask, type, status, statusCode, currency, ownerType, ownerId, createdAt };
}

/**
 * The issuer's `cardMask`, checked before it is stored: it must have the masked shape (at most the
 * first 6 and the last 4 digits visible; docs/cards.md). Anything else, a full PAN above all, is
 * 502 `upstream_error` and nothing is stored.
 */
export function maskedCardNumber(cardMask: unknown): string {
  if (typeof cardMask !== 'string' || !isMaskedCardNumber(cardMask)) {
    throw new GatewayError('upstream_error', 'The card issuer platform answered card data where none is allowed', { extensions: { upstream: 'issuer' } });
  }
  return cardMask;
}

/** Inserts an issued card (its `cardMask` checked by {@link maskedCardNumber}); returns it as the full card object. */
export async function insertCard(db: Queryable, card: NewCard): Promise<Card> {
  maskedCardNumber(card.cardMask);
  const ownerType = card.individualId ? 'individual' : 'b2b';
  const rows = await db.query<CardRow>(
    `INSERT INTO cards (card_key, partner_id, owner_type, owner_id, individual_id, tenant_id, card_mask, type, status, status_code,
                        currency, product_code, holder_client_code, exp_date, embossed_name, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)
     RETURNING ${CARD_COLUMNS}`,
    [
      card.cardKey,
      card.partnerId,
      ownerType,
      card.individualId ?? card.tenantId,
      card.individualId ?? null,
      card.tenantId ?? null,
      card.cardMask,
      card.type,
      card.status,
      card.statusCode,
      card.currency,
      card.productCode,
      card.holderClientCode,
      card.expDate,
      card.embossedName,
      card.createdAt,
    ]
  );
  return toCard(rows.rows[0]);
}

/**
 * A page of the ACTIVE cards of an individual, newest first (ties by card key), and whether a later
 * page holds more: `limit + 1` rows read from cards_individual_active_idx (migration 027), so the
 * call reads no more than its page whatever the individual's cards.
 */
export async function listActiveCardsOfIndividual(db: Queryable, individualId: string, page: PageRequest): Promise<{ cards: Card[]; hasMore: boolean }> {
  const rows = await db.query<CardRow>(
    `SELECT ${CARD_COLUMNS} FROM cards WHERE individual_id = $1 AND status = 'ACTIVE' ORDER BY created_at DESC, card_key LIMIT $2 OFFSET $3`,
    [individualId, page.limit + 1, offsetOf(page)]
  );
  const hasMore = rows.rows.length > page.limit;
  return { cards: (hasMore ? rows.rows.slice(0, page.limit) : rows.rows).map(toCard), hasMore };
}

/** Whether a card belongs to an individual. */
export async function cardBelongsToIndividual(db: Queryable, cardKey: string, individualId: string): Promise<boolean> {
  const rows = await db.query('SELECT 1 FROM cards WHERE card_key = $1 AND individual_id = $2', [cardKey, individualId]);
  return rows.rowCount === 1;
}

/** A status change to record (card creation is the first one, with no old status). */
export interface StatusChange {
  cardKey: string;
  partnerId: string;
  individualId?: string;
  oldStatus: CardStatus | null;
  newStatus: CardStatus;
  oldStatusCode: string | null;
  newStatusCode: string;
  operation: string;
  reason?: string | null;
  requestId: string;
}

/** A status-history entry as partners read it. */
export interface StatusHistoryItem {
  _id: string;
  cardKey: string;
  operation: string;
  oldStatus: string | null;
  newStatus: string;
  oldStatusCode: string | null;
  newStatusCode: string;
  reason: string | null;
  createdAt: string;
}

/** Records a card status change; call it in the transaction of the change. */
export async function recordStatusChange(db: Queryable, change: StatusChange): Promise<void> {
  await db.query(
    `INSERT INTO card_status_history (public_id, card_key, partner_id, individual_id, old_status, new_status, old_status_code, new_status_code, operation, reason, request_id)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
    [
      newObjectId(),
      change.cardKey,
      change.partnerId,
      change.individualId ?? null,
      change.oldStatus,
      change.newStatus,
      change.oldStatusCode,
      change.newStatusCode,
      change.operation,
      change.reason ?? null,
      change.requestId,
    ]
  );
}

/** A page of the status history of an individual's cards, newest first, with its total (exact up to HISTORY_COUNT_CAP) and whether more follow. */
export async function listStatusHistoryOfIndividual(db: Queryable, individualId: string, page: PageRequest): Promise<Omit<CountedPage<unknown>, 'rows'> & { items: StatusHistoryItem[] }> {
  const { rows, ...counted } = await pageOfIndividualHistory<{
    public_id: string;
    card_key: string;
    operation: string;
    old_status: string | null;
    new_status: string;
    old_status_code: string | null;
    new_status_code: string;
    reason: string | null;
    created_at: Date;
  }>(db, 'card_status_history', 'public_id, card_key, operation, old_status, new_status, old_status_code, new_status_code, reason, created_at', individualId, page);
  return {
    ...counted,
    items: rows.map((r) => ({
      _id: r.public_id,
      cardKey: r.card_key,
      operation: r.operation,
      oldStatus: r.old_status,
      newStatus: r.new_status,
      oldStatusCode: r.old_status_code,
      newStatusCode: r.new_status_code,
      reason: r.reason,
      createdAt: r.created_at.toISOString(),
    })),
  };
}
