import type { Transaction, TransactionStatus, TransactionStep, TransactionStepKind, TransactionType } from '../../contracts/upstreams';

/** The statuses of a transaction (docs/transactions.md, "Lifecycle"). */
export const TRANSACTION_STATUSES: readonly TransactionStatus[] = ['PENDING', 'SETTLED', 'DECLINED', 'REVERSED', 'EXPIRED'];
/** The types of a transaction. */
export const TRANSACTION_TYPES: readonly TransactionType[] = ['PURCHASE', 'WITHDRAWAL', 'REFUND'];
/** The kinds of step in a transaction's `history`. */
export const TRANSACTION_STEP_KINDS: readonly TransactionStepKind[] = ['authorization', 'clearing', 'reversal', 'expiry', 'refund', 'decline'];

/**
 * Why a transaction was declined, with its meaning (docs/transactions.md, "Decline reasons"). The
 * first eight come from the card processing system; the rest name the gateway's own authorization
 * decisions (spend controls and the partner's decision endpoint). A code the processor sends that
 * is not listed reaches partners as `do_not_honor`.
 */
export const DECLINE_REASONS = {
  insufficient_funds: 'The account behind the card does not cover the amount',
  card_inactive: 'The card is not active (not yet activated, closed, or restricted)',
  card_locked: 'The card is locked (by the partner, temporarily, or as lost, stolen or fraud)',
  card_expired: 'The card is past its expiry date, or the expiry date given is wrong',
  limit_exceeded: "One of the card's limits (daily, monthly, single transaction) would be exceeded",
  suspected_fraud: "The processor's fraud screening refused it",
  do_not_honor: 'Declined without a more specific reason (the network code 05)',
  stand_in: "The decision did not come before the network's deadline: the processor applied its stand-in decline",
  mcc_blocked: "The merchant's category is blocked by the card's spend controls",
  country_blocked: "The merchant's country is blocked by the card's spend controls",
  amount_exceeded: "The amount is above the spend controls' maximum per transaction",
  velocity_exceeded: "The spend controls' count or amount per window would be exceeded",
  partner_declined: "The partner's decision endpoint declined it",
  partner_timeout: "The partner's decision endpoint did not answer in time, and its default decision is decline",
  partner_error: "The partner's decision endpoint failed, and its default decision is decline",
  token_inactive: 'The network token it was made with is not usable (deactivated, declined, not yet active, or suspended by the partner or the network)',
  wallet_provider_blocked: "The wallet of the token it was made with is blocked by the card's spend controls",
} as const;
export type DeclineReason = keyof typeof DECLINE_REASONS;
export const DECLINE_REASON_CODES = Object.keys(DECLINE_REASONS) as DeclineReason[];

/** A decline reason as partners see it: a listed code, else `do_not_honor`; null for a transaction that was not declined. */
export function declineReasonOf(status: TransactionStatus, reason: string | null | undefined): DeclineReason | null {
  if (status !== 'DECLINED') return null;
  return reason !== undefined && reason !== null && Object.prototype.hasOwnProperty.call(DECLINE_REASONS, reason) ? (reason as DeclineReason) : 'do_not_honor';
}

/** A transaction as partners see it: the list items, `GET /transactions/{id}`, the events and the simulations' answers. */
export interface PartnerTransaction {
  _id: string;
  cardKey: string;
  /** The individual the card belongs to; null for a B2B card. */
  individualId: string | null;
  amount: number;
  currency: string;
  type: string;
  status: string;
  merchant: { name: string; mcc: string; city: string; country: string };
  createdAt: string;
  updatedAt: string;
  /** The cleared amount, once SETTLED; null before. */
  settledAmount: number | null;
  declineReason: DeclineReason | null;
  /** On a REFUND: the purchase it refunds. */
  relatedTransactionId: string | null;
  history: TransactionStep[];
  /** How the gateway decided the authorization (docs/authorizations.md); null when it was not asked. */
  authorization: { decidedBy: string; rule?: string; partnerLatencyMs?: number } | null;
  /** Only for a transaction made with a network token (docs/tokens.md): the token's `_id` and its wallet. */
  tokenId?: string;
  walletProvider?: string;
}

/** A processor transaction with every lifecycle field present. */
export type FullTransaction = Required<Transaction>;

/**
 * Reads a processor transaction with its lifecycle fields, deriving those a processor left out (an
 * older processor, or a notification of today's shape) from its status: a one-step history dated
 * `createdAt` (PENDING an authorization, SETTLED a force-post clearing or a refund, DECLINED a
 * decline, REVERSED a reversal, EXPIRED an expiry), version 1.
 */
export function normalizeTransaction(t: Transaction): FullTransaction {
  const history = t.history && t.history.length > 0 ? t.history : [{ kind: impliedStep(t), amount: t.amount, at: t.createdAt }];
  return {
    ...t,
    history,
    version: t.version ?? history.length,
    updatedAt: t.updatedAt ?? history[history.length - 1].at,
    settledAmount: t.settledAmount ?? (t.status === 'SETTLED' ? t.amount : null),
    declineReason: t.declineReason ?? null,
    relatedTransactionId: t.relatedTransactionId ?? null,
    authorizationId: t.authorizationId ?? null,
    tokenReference: t.tokenReference ?? null,
  };
}

function impliedStep(t: Transaction): TransactionStepKind {
  switch (t.status) {
    case 'PENDING':
      return 'authorization';
    case 'DECLINED':
      return 'decline';
    case 'REVERSED':
      return 'reversal';
    case 'EXPIRED':
      return 'expiry';
    default:
      return t.type === 'REFUND' ? 'refund' : 'clearing';
  }
}

/**
 * The status a transaction has after the steps of `history` (the first `steps` of them): what a
 * `transaction.updated` event's `previousStatus` is when the gateway learns of several steps at once.
 */
export function statusAfter(history: readonly TransactionStep[], steps = history.length): TransactionStatus | null {
  let status: TransactionStatus | null = null;
  let held = 0;
  for (const step of history.slice(0, steps)) {
    switch (step.kind) {
      case 'authorization':
        held = step.amount;
        status = 'PENDING';
        break;
      case 'reversal':
        held -= step.amount;
        status = held > 0.00001 ? 'PENDING' : 'REVERSED';
        break;
      case 'clearing':
      case 'refund':
        status = 'SETTLED';
        break;
      case 'expiry':
        status = 'EXPIRED';
        break;
      case 'decline':
        status = 'DECLINED';
        break;
    }
  }
  return status;
}

/**
 * The partner's view of a processor transaction: only the documented fields (an upstream's extra
 * fields, its authorization id, never reach the partner). The list, the detail, the events and the
 * simulations' answers all use it, so they cannot differ.
 */
export function toPartnerTransaction(
  t: Transaction,
  individualId: string | null,
  authorization: PartnerTransaction['authorization'] = null,
  token?: { id: string; walletProvider: string } | null
): PartnerTransaction {
  const full = normalizeTransaction(t);
  return {
    _id: full.id,
    cardKey: full.cardId,
    individualId,
    amount: full.amount,
    currency: full.currency,
    type: full.type,
    status: full.status,
    merchant: { name: full.merchant.name, mcc: full.merchant.mcc, city: full.merchant.city, country: full.merchant.country },
    createdAt: full.createdAt,
    updatedAt: full.updatedAt,
    settledAmount: full.settledAmount,
    declineReason: declineReasonOf(full.status, full.declineReason),
    relatedTransactionId: full.relatedTransactionId,
    history: full.history.map((s) => ({ kind: s.kind, amount: s.amount, at: s.at })),
    authorization: authorization && {
      decidedBy: authorization.decidedBy,
      ...(authorization.rule === undefined ? {} : { rule: authorization.rule }),
      ...(authorization.partnerLatencyMs === undefined ? {} : { partnerLatencyMs: authorization.partnerLatencyMs }),
    },
    ...(token ? { tokenId: token.id, walletProvider: token.walletProvider } : {}),
  };
}
