import type { Queryable } from '../db/database';
import type { UpstreamToken } from './contract-stub';
import type { Token, TokenDevice, TokenHistoryEntry, TokenStatus, TokenSuspendedBy, WalletProvider } from '../shapes/token';

/**
 * The gateway's network tokens (table `tokens`, migration 028; docs/tokens.md): the processor's
 * state as the gateway last applied it (status, version) and the gateway's own facts (the card the
 * token stands for now, who holds it suspended). Written by ./apply.ts (the processor's states),
 * ./record.ts (a tokenization's decision), ./verification.ts and the cascade; read here.
 */

/**
 * An operation the gateway sent the processor and has not applied the answer of (migration 029):
 * the processor's notification of the change it made is applied as this operation when it arrives
 * first (./apply.ts).
 */
export interface PendingTokenOperation {
  action: 'suspend' | 'resume' | 'deactivate';
  /** The status the operation leads to. */
  to: TokenStatus;
  by: 'partner' | 'card_state';
  requestId: string;
  reason?: string;
  /** Epoch ms it was sent: a mark older than {@link PENDING_OPERATION_MS} is no longer read. */
  at: number;
}

/** How long a pending operation's mark is honoured: past the longest upstream call and its retries. */
export const PENDING_OPERATION_MS = 10 * 60_000;

/** A row of `tokens` as the reads below select it ({@link TOKEN_COLUMNS}). */
export interface TokenRow {
  id: string;
  partner_id: string;
  card_key: string;
  individual_id: string | null;
  tenant_id: string | null;
  processor_ref: string;
  tokenization_id: string | null;
  wallet_provider: WalletProvider;
  token_requestor_id: string;
  last4: string;
  token_exp_date: string;
  device: TokenDevice | string;
  status: TokenStatus;
  suspended_by: TokenSuspendedBy | null;
  card_state_hold: boolean;
  history: TokenHistoryEntry[] | string;
  version: number;
  processor_check_due: boolean;
  operation_pending: PendingTokenOperation | string | null;
  created_at: Date;
  updated_at: Date;
}

/** The columns of {@link TokenRow}: never `verification` (the code's hash stays in ./verification.ts). */
export const TOKEN_COLUMNS =
  'id, partner_id, card_key, individual_id, tenant_id, processor_ref, tokenization_id, wallet_provider, token_requestor_id, last4, token_exp_date, device, status, suspended_by, card_state_hold, history, version, processor_check_due, operation_pending, created_at, updated_at';

/** A jsonb column as pg answers it: parsed already, or its text (PGlite, some drivers). */
/**
 * Who and what a token's audit entry is about: the token's partner and cardholder, on the card it
 * stands for (a token has no audit target of its own; `details.tokenId` names it).
 */
export function tokenAuditScope(row: Pick<TokenRow, 'partner_id' | 'individual_id' | 'tenant_id' | 'card_key'>) {
  return {
    partnerId: row.partner_id,
    individualId: row.individual_id ?? undefined,
    tenantId: row.tenant_id ?? undefined,
    targetType: 'card' as const,
    targetId: row.card_key,
  };
}

export function fromJson<T>(value: T | string): T {
  return typeof value === 'string' ? (JSON.parse(value) as T) : value;
}

/**
 * Who holds a suspended token suspended, as partners read it: `partner` or `card_state` only while
 * `suspended` (the row's `suspended_by`, which ./apply.ts writes from the partner's operation or the
 * card's hold); absent when the network suspended it on its own, and for every other status.
 */
export function suspendedByOf(row: Pick<TokenRow, 'status' | 'suspended_by'>): TokenSuspendedBy | undefined {
  return row.status === 'suspended' && row.suspended_by !== null ? row.suspended_by : undefined;
}

/** A row as partners read it (docs/tokens.md, "The Token"): never the processor's reference. */
export function toToken(row: TokenRow): Token {
  const suspendedBy = suspendedByOf(row);
  return {
    _id: row.id,
    cardKey: row.card_key,
    walletProvider: row.wallet_provider,
    tokenRequestorId: row.token_requestor_id,
    last4: row.last4,
    tokenExpDate: row.token_exp_date,
    device: fromJson<TokenDevice>(row.device),
    status: row.status,
    ...(suspendedBy === undefined ? {} : { suspendedBy }),
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
    history: fromJson<TokenHistoryEntry[]>(row.history),
  };
}

/** The token `id` (of `partnerId` when given; the ownership check answers 403 before a route reads it), or undefined. */
export async function findToken(db: Queryable, id: string, partnerId?: string): Promise<Token | undefined> {
  const rows =
    partnerId === undefined
      ? await db.query<TokenRow>(`SELECT ${TOKEN_COLUMNS} FROM tokens WHERE id = $1`, [id])
      : await db.query<TokenRow>(`SELECT ${TOKEN_COLUMNS} FROM tokens WHERE id = $1 AND partner_id = $2`, [id, partnerId]);
  return rows.rows[0] && toToken(rows.rows[0]);
}

/** Every token of the card (of `partnerId`), newest first (ties by id): `GET /cards/{id}/tokens` (a card has a handful: no paging). */
export async function cardTokens(db: Queryable, partnerId: string, cardKey: string): Promise<Token[]> {
  const rows = await db.query<TokenRow>(
    `SELECT ${TOKEN_COLUMNS} FROM tokens WHERE partner_id = $1 AND card_key = $2 ORDER BY created_at DESC, id DESC`,
    [partnerId, cardKey]
  );
  return rows.rows.map(toToken);
}

/** The row of the processor's token `reference` (its `tokenReference`), or undefined; `forUpdate` locks it in the caller's transaction. */
export async function tokenByReference(db: Queryable, reference: string, options: { forUpdate?: boolean } = {}): Promise<TokenRow | undefined> {
  const rows = await db.query<TokenRow>(`SELECT ${TOKEN_COLUMNS} FROM tokens WHERE processor_ref = $1${options.forUpdate ? ' FOR UPDATE' : ''}`, [reference]);
  return rows.rows[0];
}

/** The row of the token `id`, or undefined; `forUpdate` locks it in the caller's transaction. */
export async function tokenRow(db: Queryable, id: string, options: { forUpdate?: boolean } = {}): Promise<TokenRow | undefined> {
  const rows = await db.query<TokenRow>(`SELECT ${TOKEN_COLUMNS} FROM tokens WHERE id = $1${options.forUpdate ? ' FOR UPDATE' : ''}`, [id]);
  return rows.rows[0];
}

/**
 * The row as the processor's token it was applied from (10.1): what the gateway's own changes (a
 * verification's outcome) pass to `applyToken`, with the status changed, at the version held.
 */
export function upstreamOf(row: TokenRow): UpstreamToken {
  return {
    tokenReference: row.processor_ref,
    cardKey: row.card_key,
    tokenizationId: row.tokenization_id,
    walletProvider: row.wallet_provider,
    tokenRequestorId: row.token_requestor_id,
    last4: row.last4,
    tokenExpDate: row.token_exp_date,
    device: fromJson<TokenDevice>(row.device),
    status: row.status,
    version: row.version,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}
