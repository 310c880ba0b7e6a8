import crypto from 'node:crypto';
import type { SandboxNotify } from '../../contracts/upstreams';
import { newNotificationId, type NotificationBody } from '../shared/notifier';
import { Ring } from '../shared/ring';
import { upstreamError } from '../shared/sandbox-error';
import { roundMoney } from '../shared/seeded-random';
import type { HistoryEntry, KnownCard, Merchant, StepKind, Transaction, TransactionStatus, TransactionType } from './transactions';

/** Most recorded (simulated) transactions a card keeps; the oldest goes first. */
export const RECORDED_PER_CARD = 1000;
/** Most recorded (simulated) transactions kept in all, every card together; the oldest goes first. */
export const RECORDED_KEPT = 10_000;
/** Most entries of the change feed (`GET /transactions/changes`): one per transaction, its latest change. */
export const CHANGES_KEPT = 10_000;

/** What becomes of a step's notification: sent now (`deliver`), lost (`drop`), or kept until released (`hold`). */
export type NotifyMode = SandboxNotify;

/**
 * A notification made for a step: its id and the version whose snapshot it carries. Its body is
 * rebuilt from the transaction's history (append-only), never stored.
 */
interface Notice {
  id: string;
  version: number;
}

/** A recorded transaction: what never changes, its history, and its notifications' bookkeeping. */
interface Recorded {
  readonly id: string;
  readonly cardId: string;
  readonly accountId: string | null;
  readonly currency: string;
  readonly type: TransactionType;
  readonly merchant: Merchant;
  readonly createdAt: string;
  readonly declineReason: string | null;
  readonly relatedTransactionId: string | null;
  readonly authorizationId: string | null;
  /** The token the purchase was made with (docs/upstreams.md 10.8), or null. */
  readonly tokenReference: string | null;
  readonly history: HistoryEntry[];
  /** What the refunds of this purchase add up to. */
  refunded: number;
  /** The sent notification (delivered or released) of the highest version: what a resend sends again. */
  sent: Notice | undefined;
  /** Notifications kept until released, oldest first. */
  held: Notice[];
}

/** What a new recorded transaction is made of (its first step included). */
interface NewTransaction {
  id?: string;
  cardId: string;
  accountId: string | null;
  currency: string;
  type: TransactionType;
  merchant: Merchant;
  first: StepKind;
  amount: number;
  declineReason?: string | null;
  relatedTransactionId?: string | null;
  authorizationId?: string | null;
  tokenReference?: string | null;
}

/** The status a step leaves a transaction in (`amount` the held amount after it). */
function statusAfter(kind: StepKind, amount: number): TransactionStatus {
  switch (kind) {
    case 'authorization':
      return 'PENDING';
    case 'reversal':
      return amount === 0 ? 'REVERSED' : 'PENDING';
    case 'clearing':
    case 'refund':
      return 'SETTLED';
    case 'expiry':
      return 'EXPIRED';
    case 'decline':
      return 'DECLINED';
  }
}

/**
 * The transaction as it was right after step `version` (default: now), replayed from its history:
 * the first step sets the amount, a reversal lowers it, a clearing or a refund sets `settledAmount`,
 * the last step sets the status.
 */
function snapshot(r: Recorded, version = r.history.length): Transaction {
  const history = r.history.slice(0, version);
  let amount = 0;
  let settledAmount: number | null = null;
  history.forEach((step, i) => {
    if (i === 0) amount = step.amount;
    else if (step.kind === 'reversal') amount = roundMoney(amount - step.amount);
    if (step.kind === 'clearing' || step.kind === 'refund') settledAmount = step.amount;
  });
  const last = history[history.length - 1];
  return {
    id: r.id,
    cardId: r.cardId,
    accountId: r.accountId,
    amount,
    currency: r.currency,
    type: r.type,
    status: statusAfter(last.kind, amount),
    merchant: { ...r.merchant },
    createdAt: r.createdAt,
    updatedAt: last.at,
    version,
    settledAmount,
    declineReason: r.declineReason,
    relatedTransactionId: r.relatedTransactionId,
    authorizationId: r.authorizationId,
    history: history.map((step) => ({ ...step })),
    tokenReference: r.tokenReference,
  };
}

/** The notification of a step: `transaction.created` for the first, `transaction.updated` (with its `change`) for the others. */
function notificationOf(r: Recorded, notice: Notice): NotificationBody {
  const step = r.history[notice.version - 1];
  return {
    id: notice.id,
    type: notice.version === 1 ? 'transaction.created' : 'transaction.updated',
    occurredAt: step.at,
    ...(notice.version > 1 ? { change: step.kind } : {}),
    transaction: snapshot(r, notice.version),
  };
}

/** A new transaction id: 24 random hex digits. */
export function newTransactionId(): string {
  return crypto.randomBytes(12).toString('hex');
}

/** A new authorization id: `auth_` and 24 random hex digits. */
export function newAuthorizationId(): string {
  return `auth_${crypto.randomBytes(12).toString('hex')}`;
}

const CURSOR = /^([0-9a-f]{16})\.(0|[1-9][0-9]{0,15})$/;

/** Whether `cursor` has the syntax of a change-feed cursor (`<boot>.<seq>`), whichever boot made it. */
export function isChangeCursor(cursor: string): boolean {
  return CURSOR.test(cursor);
}

/**
 * The transactions the processing system records through the control routes, each moving through
 * its lifecycle (docs/upstreams.md, 6.7 to 6.9): at most {@link RECORDED_PER_CARD} per card and
 * {@link RECORDED_KEPT} in all, the oldest (by creation) going first with everything indexed by
 * it (its id, its authorizationId, its change-feed entry, its held notifications). The change feed
 * keeps each transaction's latest change, in the order of those changes.
 */
export class RecordedTransactions {
  /** Per card, newest first. */
  private readonly byCard = new Map<string, Recorded[]>();
  /** All cards together, oldest first: bounds them to `kept`. */
  private readonly order: Ring<Recorded>;
  private readonly byId = new Map<string, Recorded>();
  private readonly byAuthorization = new Map<string, Recorded>();
  /** Transaction id → the sequence number of its latest change, in the order of those changes (re-set on each change). */
  private readonly changed = new Map<string, number>();
  private seq = 0;
  /** Names this boot (or reset) in the cursors: another one's cursor restarts the feed. */
  private boot = crypto.randomBytes(8).toString('hex');

  constructor(
    private readonly perCard = RECORDED_PER_CARD,
    kept = RECORDED_KEPT,
    private readonly changesKept = CHANGES_KEPT,
  ) {
    this.order = new Ring<Recorded>(kept);
  }

  /** How many recorded transactions are kept. */
  get size(): number {
    return this.byId.size;
  }

  /** A recorded transaction in its current state. */
  get(id: string): Transaction | undefined {
    const r = this.byId.get(id);
    return r && snapshot(r);
  }

  /** `limit` of a card's recorded transactions, newest first, from `offset` on, in their current state, and how many there are. */
  pageOfCard(cardKey: string, offset: number, limit: number): { items: Transaction[]; total: number } {
    const list = this.byCard.get(cardKey) ?? [];
    return { items: list.slice(offset, offset + limit).map((r) => snapshot(r)), total: list.length };
  }

  /** `limit` of an account's recorded transactions (every card of it), newest first, from `offset` on, and how many there are. */
  pageOfAccount(accountId: string, offset: number, limit: number): { items: Transaction[]; total: number } {
    const all: Recorded[] = [];
    for (const list of this.byCard.values()) if (list[0]?.accountId === accountId) all.push(...list);
    all.sort((a, b) => (a.createdAt < b.createdAt ? 1 : a.createdAt > b.createdAt ? -1 : 0));
    return { items: all.slice(offset, offset + limit).map((r) => snapshot(r)), total: all.length };
  }

  /**
   * `POST /__sandbox/authorizations`: a PENDING transaction. The same `authorizationId` again on the
   * same card (the processor's retry) is that transaction, nothing recorded (`created` false); on
   * another card 409 `AUTHORIZATION_ID_REUSED`.
   */
  authorize(input: {
    card: KnownCard;
    amount: number;
    currency: string;
    type: 'PURCHASE' | 'WITHDRAWAL';
    merchant: Merchant;
    authorizationId?: string;
    /** The transaction id the gateway was asked about (docs/upstreams.md 6.10); a new one otherwise. */
    id?: string;
    /** The decision was a decline (the gateway's, or the stand-in): a DECLINED transaction with this reason. */
    declineReason?: string;
    /** A purchase made with this token (docs/upstreams.md 10.8). */
    tokenReference?: string;
  }): { transaction: Transaction; created: boolean } {
    const known = input.authorizationId === undefined ? undefined : this.ofAuthorization(input.authorizationId, input.card.cardKey);
    if (known) return { transaction: known, created: false };
    const authorizationId = input.authorizationId ?? newAuthorizationId();
    const { card, declineReason, ...rest } = input;
    const first = declineReason === undefined ? 'authorization' : 'decline';
    const r = this.create({ ...rest, cardId: card.cardKey, accountId: card.accountId, first, authorizationId, declineReason: declineReason ?? null });
    return { transaction: snapshot(r), created: true };
  }

  /** The transaction of `authorizationId` if recorded on `cardId`; 409 `AUTHORIZATION_ID_REUSED` if on another card. */
  ofAuthorization(authorizationId: string, cardId: string): Transaction | undefined {
    const known = this.byAuthorization.get(authorizationId);
    if (known && known.cardId !== cardId) throw upstreamError('AUTHORIZATION_ID_REUSED', `authorizationId ${authorizationId} is another card's authorization`);
    return known && snapshot(known);
  }

  /** A transaction whose first step is a force-post clearing (SETTLED, no authorization) or a decline. */
  createOneStep(input: { card: KnownCard; amount: number; currency: string; merchant: Merchant; first: 'clearing' | 'decline'; declineReason?: string }): Transaction {
    const { card, ...rest } = input;
    const declineReason = input.first === 'decline' ? (input.declineReason ?? 'do_not_honor') : null;
    return snapshot(this.create({ ...rest, cardId: card.cardKey, accountId: card.accountId, type: 'PURCHASE', declineReason }));
  }

  /** Clearing of a PENDING transaction, for `amount` (at most what is authorized; default all of it): SETTLED. */
  clear(id: string, amount?: number): Transaction {
    const r = this.pending(id);
    const held = snapshot(r).amount;
    const cleared = amount ?? held;
    if (cleared > held) throw upstreamError('AMOUNT_EXCEEDS_AUTHORIZED', `Clearing ${cleared} exceeds the ${held} authorized on transaction ${id}`);
    return this.step(r, 'clearing', cleared);
  }

  /** Reversal of (part of) a PENDING transaction's amount, default all that is left: REVERSED at 0, else still PENDING. */
  reverse(id: string, amount?: number): Transaction {
    const r = this.pending(id);
    const held = snapshot(r).amount;
    const reversed = amount ?? held;
    if (reversed > held) throw upstreamError('AMOUNT_EXCEEDS_REMAINING', `Reversal ${reversed} exceeds the ${held} remaining on transaction ${id}`);
    return this.step(r, 'reversal', reversed);
  }

  /** Expiry of a PENDING transaction's authorization: EXPIRED, the amount kept. */
  expire(id: string): Transaction {
    const r = this.pending(id);
    return this.step(r, 'expiry', snapshot(r).amount);
  }

  /**
   * A refund of a SETTLED purchase: a new SETTLED REFUND transaction of the same card, merchant and
   * currency, for `amount` (default what is left: the settled amount less earlier refunds).
   */
  refund(id: string, amount?: number): Transaction {
    const purchase = this.find(id);
    const now = snapshot(purchase);
    if (now.type !== 'PURCHASE' || now.status !== 'SETTLED') {
      throw upstreamError('REFUND_NOT_ALLOWED', `Transaction ${id} is a ${now.status} ${now.type}: only a SETTLED PURCHASE is refunded`);
    }
    const left = roundMoney((now.settledAmount ?? 0) - purchase.refunded);
    const refunded = amount ?? left;
    if (refunded > left || refunded <= 0) throw upstreamError('REFUND_EXCEEDS_SETTLED', `Refund ${refunded} exceeds the ${left} of transaction ${id} not refunded yet`);
    purchase.refunded = roundMoney(purchase.refunded + refunded);
    const { cardId, accountId, currency, merchant, tokenReference } = purchase;
    return snapshot(this.create({ cardId, accountId, currency, type: 'REFUND', merchant, first: 'refund', amount: refunded, relatedTransactionId: purchase.id, tokenReference }));
  }

  /**
   * What becomes of the notification of transaction `id`'s latest step: `deliver` answers its body
   * (the caller sends it) and remembers it for a resend; `hold` keeps it until released; `drop` loses it.
   */
  notice(id: string, mode: NotifyMode): NotificationBody | undefined {
    const r = this.find(id);
    if (mode === 'drop') return undefined;
    const notice: Notice = { id: newNotificationId(), version: r.history.length };
    if (mode === 'hold') {
      r.held.push(notice);
      return undefined;
    }
    this.markSent(r, notice);
    return notificationOf(r, notice);
  }

  /** The held notifications of a transaction, taken out to be sent, in the order asked (each with the snapshot of its own step). */
  release(id: string, order: 'oldest-first' | 'newest-first'): NotificationBody[] {
    const r = this.find(id);
    const notices = r.held.splice(0);
    if (order === 'newest-first') notices.reverse();
    for (const notice of notices) this.markSent(r, notice);
    return notices.map((notice) => notificationOf(r, notice));
  }

  /** The latest sent notification of a transaction again, same id and body; 409 `NOTHING_TO_RESEND` when none was sent. */
  resend(id: string): NotificationBody {
    const r = this.find(id);
    if (!r.sent) throw upstreamError('NOTHING_TO_RESEND', `No notification of transaction ${id} was sent`);
    return notificationOf(r, r.sent);
  }

  /**
   * `limit` transactions changed after `cursor` (a cursor of another boot or reset, a forged one, or
   * none: from the oldest change kept), each once, in the order of its latest change, in its current
   * state; and the cursor to pass next time (the same position when nothing changed).
   */
  changes(cursor: string | undefined, limit: number): { data: Transaction[]; nextCursor: string } {
    let position = 0;
    const m = cursor === undefined ? null : CURSOR.exec(cursor);
    if (m && m[1] === this.boot && Number(m[2]) <= this.seq) position = Number(m[2]);
    const data: Transaction[] = [];
    for (const [id, seq] of this.changed) {
      if (seq <= position) continue;
      if (data.length === limit) break;
      data.push(snapshot(this.byId.get(id)!));
      position = seq;
    }
    return { data, nextCursor: `${this.boot}.${position}` };
  }

  /** Forgets a card's recorded transactions (its eviction). */
  forgetCard(cardKey: string): void {
    for (const r of this.byCard.get(cardKey) ?? []) this.unindex(r);
    this.byCard.delete(cardKey);
  }

  /** Forgets everything; cursors given out before no longer name a position. */
  reset(): void {
    this.byCard.clear();
    this.order.clear();
    this.byId.clear();
    this.byAuthorization.clear();
    this.changed.clear();
    this.seq = 0;
    this.boot = crypto.randomBytes(8).toString('hex');
  }

  private create(input: NewTransaction): Recorded {
    const at = new Date().toISOString();
    const r: Recorded = {
      id: input.id ?? newTransactionId(),
      cardId: input.cardId,
      accountId: input.accountId,
      currency: input.currency,
      type: input.type,
      merchant: input.merchant,
      createdAt: at,
      declineReason: input.declineReason ?? null,
      relatedTransactionId: input.relatedTransactionId ?? null,
      authorizationId: input.authorizationId ?? null,
      tokenReference: input.tokenReference ?? null,
      history: [{ kind: input.first, amount: input.amount, at }],
      refunded: 0,
      sent: undefined,
      held: [],
    };
    const list = this.byCard.get(r.cardId) ?? [];
    list.unshift(r);
    while (list.length > this.perCard) this.unindex(list.pop()!);
    this.byCard.set(r.cardId, list);
    this.byId.set(r.id, r);
    if (r.authorizationId !== null) this.byAuthorization.set(r.authorizationId, r);
    const dropped = this.order.push(r);
    // The oldest of all is the oldest of its card, unless that card dropped it already or was evicted.
    if (dropped && this.byId.get(dropped.id) === dropped) {
      this.unindex(dropped);
      const of = this.byCard.get(dropped.cardId)!;
      of.splice(of.lastIndexOf(dropped), 1);
      if (of.length === 0) this.byCard.delete(dropped.cardId);
    }
    this.changedNow(r);
    return r;
  }

  private step(r: Recorded, kind: StepKind, amount: number): Transaction {
    r.history.push({ kind, amount, at: new Date().toISOString() });
    this.changedNow(r);
    return snapshot(r);
  }

  private changedNow(r: Recorded): void {
    this.changed.delete(r.id);
    this.changed.set(r.id, ++this.seq);
    for (const [oldest] of this.changed) {
      if (this.changed.size <= this.changesKept) break;
      this.changed.delete(oldest);
    }
  }

  private markSent(r: Recorded, notice: Notice): void {
    if (!r.sent || notice.version >= r.sent.version) r.sent = notice;
  }

  private unindex(r: Recorded): void {
    if (this.byId.get(r.id) === r) this.byId.delete(r.id);
    if (r.authorizationId !== null && this.byAuthorization.get(r.authorizationId) === r) this.byAuthorization.delete(r.authorizationId);
    this.changed.delete(r.id);
  }

  private find(id: string): Recorded {
    const r = this.byId.get(id);
    if (!r) throw upstreamError('TRANSACTION_NOT_FOUND', `No recorded transaction ${id}`);
    return r;
  }

  private pending(id: string): Recorded {
    const r = this.find(id);
    const now = snapshot(r);
    if (now.status !== 'PENDING') throw upstreamError('TRANSACTION_NOT_PENDING', `Transaction ${id} is ${now.status}, not PENDING`);
    return r;
  }
}
