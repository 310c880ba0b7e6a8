import crypto from 'node:crypto';
import type {
  NetworkStatusSimulation,
  ProcessorTokenHistoryEntry,
  SandboxNotify,
  SandboxToken,
  SimulatedTokenizationResult,
  Token,
  TokenChange,
  TokenChanges,
  TokenDevice,
  TokenMoveRequest,
  TokenOperation,
  TokenOperationRequest,
  TokenStatus,
  WalletProvider,
} from '../../contracts/upstreams';
import { newNotificationId, type NotificationBody } from '../shared/notifier';
import { upstreamError } from '../shared/sandbox-error';
import { seededRandom } from '../shared/seeded-random';

/** Most tokens one card keeps (`GET /tokens?cardKey=` answers them all); the oldest goes first. */
export const TOKENS_PER_CARD = 100;
/** Most tokens a sandbox keeps, per card it may know (`SANDBOX_MAX_CARDS` × 10). */
export const TOKENS_PER_KNOWN_CARD = 10;
/** Most entries of the token change feed (`GET /tokens/changes`): one per token, its latest change. */
export const TOKEN_CHANGES_KEPT = 10_000;

/**
 * The network's id of each wallet (docs/tokens.md, "Decisions"): shaped like Mastercard MDES token
 * requestor ids (the sandbox's BIN is Mastercard), not the networks' registered values.
 */
export const SANDBOX_TOKEN_REQUESTOR_IDS: Readonly<Record<WalletProvider, string>> = {
  apple_pay: '50110030273',
  google_pay: '50120834693',
  samsung_pay: '50139059239',
  merchant: '50100000001',
};

/** The device a tokenization names when the control route names none (docs/upstreams.md 10.9). */
export function defaultDevice(walletProvider: WalletProvider): TokenDevice {
  return walletProvider === 'merchant' ? { type: 'other' } : { type: 'phone', name: 'Sandbox device', ipCountry: 'DE' };
}

/** A new token reference: `tref_` and 24 random hex digits. */
export function newTokenReference(): string {
  return `tref_${crypto.randomBytes(12).toString('hex')}`;
}

/** A new tokenization id: `tkz_` and 24 random hex digits. */
export function newTokenizationId(): string {
  return `tkz_${crypto.randomBytes(12).toString('hex')}`;
}

/** A new verification attempt id: `tvr_` and 24 random hex digits. */
export function newVerificationId(): string {
  return `tvr_${crypto.randomBytes(12).toString('hex')}`;
}

/**
 * The token number's last four digits, drawn from the reference (the same reference always gives
 * the same ones), and the token's expiry: `MM/YYYY` of `now` three years ahead.
 */
export function tokenFacts(tokenReference: string, now = new Date()): { last4: string; tokenExpDate: string } {
  const random = seededRandom(`token:${tokenReference}`);
  let last4 = '';
  for (let i = 0; i < 4; i += 1) last4 += String(random.int(0, 9));
  const month = String(now.getUTCMonth() + 1).padStart(2, '0');
  return { last4, tokenExpDate: `${month}/${now.getUTCFullYear() + 3}` };
}

/** What the gateway answered a tokenization (or `stand_in`: no usable answer). */
export type TokenDecision = SimulatedTokenizationResult['decision'];

/** What a token is made of at its tokenization (its first state included). */
export type NewToken = Omit<Token, 'version' | 'createdAt' | 'updatedAt'> & {
  /** Who set the first state: the gateway's decision, the network's verdict (no gateway decided), or the processor's stand-in. */
  requestedBy: 'gateway' | 'network' | 'stand_in';
  /** The decline's code, kept in the processor's history. */
  reason?: string;
  /** The decision that made it (answered again to a repeat of its tokenization). */
  decision: TokenDecision;
};

/** A token as the processing system keeps it. */
interface Stored {
  token: Token;
  /** The card the tokenization was for (a move changes `token.cardKey`, not this). */
  readonly tokenizedCardKey: string;
  readonly decision: TokenDecision;
  readonly history: ProcessorTokenHistoryEntry[];
  readonly operationIds: string[];
  /** The latest sent notification (delivered or released): what a resend sends again, same id and body. */
  sent: NotificationBody | undefined;
  /** Notifications kept until released, oldest first. */
  held: NotificationBody[];
}

/** Which operation goes from which status to which (docs/upstreams.md 10.6); the target itself is answered unchanged. */
const OPERATION_TARGET: Readonly<Record<TokenOperation, { to: TokenStatus; from: readonly TokenStatus[]; change: TokenChange }>> = {
  suspend: { to: 'suspended', from: ['active'], change: 'suspended' },
  resume: { to: 'active', from: ['suspended'], change: 'resumed' },
  deactivate: { to: 'deactivated', from: ['requested', 'pending_verification', 'active', 'suspended'], change: 'deactivated' },
};

/** What a change of the network or the wallet may do (`POST /__sandbox/tokens/{ref}/network-status`). */
const NETWORK_FROM: Readonly<Record<NetworkStatusSimulation['status'], readonly TokenStatus[]>> = {
  active: ['requested', 'pending_verification', 'suspended'],
  suspended: ['active'],
  deactivated: ['requested', 'pending_verification', 'active', 'suspended'],
};

const CURSOR = /^([0-9a-f]{16})\.([0-9]+)$/;

/**
 * The processing system's tokens (docs/upstreams.md section 10): by reference, by card (newest
 * first, at most {@link TOKENS_PER_CARD}) and by tokenization id, at most `kept` in all (the oldest
 * goes first), each with its processor-side history, the operation ids it applied, and its
 * notifications' bookkeeping; and the change feed (`GET /tokens/changes`), which keeps each token's
 * latest change, in the order of those changes, as the transaction feed does (6.8).
 */
export class TokenStore {
  private readonly byReference = new Map<string, Stored>();
  /** Per card, newest first. */
  private readonly byCard = new Map<string, Stored[]>();
  private readonly byTokenization = new Map<string, Stored>();
  /** Token reference → the sequence number of its latest change, in the order of those changes. */
  private readonly changed = new Map<string, number>();
  private seq = 0;
  /** Names this boot (or reset) in the cursors: another one's cursor restarts the feed. */
  private boot = crypto.randomBytes(8).toString('hex');

  constructor(
    private readonly kept: number,
    private readonly perCard = TOKENS_PER_CARD,
    private readonly changesKept = TOKEN_CHANGES_KEPT,
  ) {}

  /** How many tokens are kept. */
  get size(): number {
    return this.byReference.size;
  }

  /** A token in its current state. */
  get(tokenReference: string): Token | undefined {
    const s = this.byReference.get(tokenReference);
    return s && { ...s.token, device: { ...s.token.device } };
  }

  /** A token in its current state; 404 `TOKEN_NOT_FOUND` when unknown. */
  find(tokenReference: string): Token {
    this.stored(tokenReference);
    return this.get(tokenReference)!;
  }

  /** Every token of a card (its current card), newest first. */
  ofCard(cardKey: string): Token[] {
    return (this.byCard.get(cardKey) ?? []).map((s) => this.get(s.token.tokenReference)!);
  }

  /** Every token (or a card's), with its processor-side history and the operation ids it applied: `GET /__sandbox/tokens`. */
  list(cardKey?: string): SandboxToken[] {
    const all = cardKey === undefined ? [...this.byReference.values()].reverse() : (this.byCard.get(cardKey) ?? []);
    return all.map((s) => ({ ...this.get(s.token.tokenReference)!, history: s.history.map((h) => ({ ...h })), operationIds: [...s.operationIds] }));
  }

  /**
   * The token a tokenization id made, when it was for `cardKey`; 409 `TOKENIZATION_ID_REUSED` when it
   * was for another card. Undefined when the id made no token yet.
   */
  ofTokenization(tokenizationId: string, cardKey: string): SimulatedTokenizationResult | undefined {
    const s = this.byTokenization.get(tokenizationId);
    if (s && s.tokenizedCardKey !== cardKey) throw upstreamError('TOKENIZATION_ID_REUSED', `tokenizationId ${tokenizationId} is another card's tokenization`);
    return s && { token: this.get(s.token.tokenReference)!, decision: { ...s.decision } };
  }

  /** Makes a token in its first state (version 1) and its `token.created` notification as `mode` says (undefined unless `deliver`). */
  create(input: NewToken, mode: SandboxNotify): { token: Token; notification: NotificationBody | undefined } {
    const at = new Date().toISOString();
    const token: Token = {
      tokenReference: input.tokenReference,
      cardKey: input.cardKey,
      tokenizationId: input.tokenizationId,
      walletProvider: input.walletProvider,
      tokenRequestorId: input.tokenRequestorId,
      last4: input.last4,
      tokenExpDate: input.tokenExpDate,
      device: { ...input.device },
      status: input.status,
      version: 1,
      createdAt: at,
      updatedAt: at,
    };
    const s: Stored = {
      token,
      tokenizedCardKey: input.cardKey,
      decision: input.decision,
      history: [{ status: input.status, at, requestedBy: input.requestedBy, ...(input.reason !== undefined ? { reason: input.reason } : {}) }],
      operationIds: [],
      sent: undefined,
      held: [],
    };
    this.byReference.set(token.tokenReference, s);
    if (token.tokenizationId !== null) this.byTokenization.set(token.tokenizationId, s);
    const list = this.byCard.get(token.cardKey) ?? [];
    list.unshift(s);
    this.byCard.set(token.cardKey, list);
    while (list.length > this.perCard) this.forget(list[list.length - 1]);
    // The oldest of all goes first (a Map keeps insertion order).
    for (const [, oldest] of this.byReference) {
      if (this.byReference.size <= this.kept) break;
      this.forget(oldest);
    }
    this.changedNow(s);
    const notification = this.notice(s, { id: newNotificationId(), type: 'token.created', occurredAt: at, token: this.get(token.tokenReference)! }, mode);
    return { token: this.get(token.tokenReference)!, notification };
  }

  /**
   * A token operation (docs/upstreams.md 10.6): the token in its new state and the change's
   * notification, or `changed` false and no notification when it already was in the target status
   * (same version). 409 `TOKEN_TRANSITION_INVALID` from a status the operation does not leave.
   * `operationId` (the `Idempotency-Key`) is kept with the token.
   */
  operate(tokenReference: string, operation: TokenOperation, body: TokenOperationRequest, operationId: string | undefined): { token: Token; changed: boolean; notification: NotificationBody | undefined } {
    const s = this.stored(tokenReference);
    const rule = OPERATION_TARGET[operation];
    const unchanged = s.token.status === rule.to;
    if (!unchanged && !rule.from.includes(s.token.status)) {
      throw upstreamError('TOKEN_TRANSITION_INVALID', `Token ${tokenReference} is ${s.token.status}: it cannot be ${operation === 'deactivate' ? 'deactivated' : `${operation}ed`}`);
    }
    if (operationId !== undefined) s.operationIds.push(operationId);
    if (unchanged) return { token: this.get(tokenReference)!, changed: false, notification: undefined };
    const notification = this.change(s, { status: rule.to, change: rule.change, reason: 'operation', requestedBy: body.requestedBy, historyReason: body.reason }, 'deliver');
    return { token: this.get(tokenReference)!, changed: true, notification };
  }

  /**
   * Moves every `active` and `suspended` token of `cardKey` to `body.toCardKey` (docs/upstreams.md
   * 10.6), one version more each, with a `card_updated` notification each.
   */
  move(cardKey: string, body: TokenMoveRequest, operationId: string | undefined): { moved: Token[]; notifications: NotificationBody[] } {
    const from = this.byCard.get(cardKey) ?? [];
    const moving = from.filter((s) => s.token.status === 'active' || s.token.status === 'suspended');
    const notifications: NotificationBody[] = [];
    if (moving.length === 0) return { moved: [], notifications };
    const staying = from.filter((s) => !moving.includes(s));
    if (staying.length > 0) this.byCard.set(cardKey, staying);
    else this.byCard.delete(cardKey);
    const to = this.byCard.get(body.toCardKey) ?? [];
    // Oldest first onto the new card's list, so that it stays newest first by creation.
    for (const s of [...moving].reverse()) {
      s.token.cardKey = body.toCardKey;
      if (operationId !== undefined) s.operationIds.push(operationId);
      to.unshift(s);
      const notification = this.change(s, { status: s.token.status, change: 'card_updated', reason: 'operation', historyReason: body.reason, cardKey: body.toCardKey }, 'deliver');
      if (notification) notifications.push(notification);
    }
    to.sort((a, b) => b.token.createdAt.localeCompare(a.token.createdAt));
    this.byCard.set(body.toCardKey, to);
    while (to.length > this.perCard) this.forget(to[to.length - 1]);
    return { moved: moving.filter((s) => this.byReference.get(s.token.tokenReference) === s).map((s) => this.get(s.token.tokenReference)!), notifications };
  }

  /** The cardholder's code checked by the gateway (10.4): `active` when right, `declined` after the last attempt. */
  verified(tokenReference: string, outcome: 'active' | 'declined', reason: string | undefined): NotificationBody | undefined {
    const s = this.stored(tokenReference);
    return this.change(s, { status: outcome, change: outcome === 'active' ? 'activated' : 'declined', reason: outcome === 'active' ? 'verified' : (reason ?? 'verification_failed'), requestedBy: 'gateway' }, 'deliver');
  }

  /**
   * A change the network or the wallet made on its own (10.9 `network-status`); 409
   * `TOKEN_TRANSITION_INVALID` from a status it cannot leave that way, or to the one it has.
   */
  network(tokenReference: string, input: NetworkStatusSimulation): { token: Token; notification: NotificationBody | undefined } {
    const s = this.stored(tokenReference);
    if (!NETWORK_FROM[input.status].includes(s.token.status)) {
      throw upstreamError('TOKEN_TRANSITION_INVALID', `Token ${tokenReference} is ${s.token.status}: the network cannot make it ${input.status}`);
    }
    const change: TokenChange = input.status === 'suspended' ? 'suspended' : input.status === 'deactivated' ? 'deactivated' : s.token.status === 'suspended' ? 'resumed' : 'activated';
    const notification = this.change(s, { status: input.status, change, reason: input.reason, requestedBy: 'network', historyReason: input.reason }, input.notify ?? 'deliver');
    return { token: this.get(tokenReference)!, notification };
  }

  /** The held notifications of a token, taken out to be sent, in the order asked. */
  release(tokenReference: string, order: 'oldest-first' | 'newest-first'): NotificationBody[] {
    const s = this.stored(tokenReference);
    const bodies = s.held.splice(0);
    if (order === 'newest-first') bodies.reverse();
    for (const body of bodies) this.markSent(s, body);
    return bodies;
  }

  /** The latest sent notification of a token again, same id and body; 409 `NOTHING_TO_RESEND` when none was sent. */
  resend(tokenReference: string): NotificationBody {
    const s = this.stored(tokenReference);
    if (!s.sent) throw upstreamError('NOTHING_TO_RESEND', `No notification of token ${tokenReference} was sent`);
    return s.sent;
  }

  /**
   * `limit` tokens changed after `cursor` (a cursor of another boot or reset, or none: from the
   * oldest change kept), each once, in the order of its latest change, in its current state; and the
   * cursor to pass next time (the same position when nothing changed).
   */
  changes(cursor: string | undefined, limit: number): TokenChanges {
    let position = 0;
    const m = cursor === undefined ? null : CURSOR.exec(cursor);
    if (m && m[1] === this.boot && Number(m[2]) <= this.seq) position = Number(m[2]);
    const data: Token[] = [];
    for (const [reference, seq] of this.changed) {
      if (seq <= position) continue;
      if (data.length === limit) break;
      data.push(this.get(reference)!);
      position = seq;
    }
    return { data, nextCursor: `${this.boot}.${position}` };
  }

  /** Forgets a card's tokens (the card's eviction). */
  forgetCard(cardKey: string): void {
    for (const s of [...(this.byCard.get(cardKey) ?? [])]) this.forget(s);
    this.byCard.delete(cardKey);
  }

  /** Forgets everything; cursors given out before no longer name a position. */
  reset(): void {
    this.byReference.clear();
    this.byCard.clear();
    this.byTokenization.clear();
    this.changed.clear();
    this.seq = 0;
    this.boot = crypto.randomBytes(8).toString('hex');
  }

  private stored(tokenReference: string): Stored {
    const s = this.byReference.get(tokenReference);
    if (!s) throw upstreamError('TOKEN_NOT_FOUND', `No token ${tokenReference}`);
    return s;
  }

  /** One change of a token: one version more, its history entry, the feed, and its `token.updated` notification as `mode` says. */
  private change(
    s: Stored,
    c: { status: TokenStatus; change: TokenChange; reason?: string; requestedBy?: ProcessorTokenHistoryEntry['requestedBy']; historyReason?: string; cardKey?: string },
    mode: SandboxNotify,
  ): NotificationBody | undefined {
    const at = new Date().toISOString();
    s.token = { ...s.token, status: c.status, version: s.token.version + 1, updatedAt: at };
    const entry: ProcessorTokenHistoryEntry = { status: c.status, at };
    if (c.requestedBy !== undefined) entry.requestedBy = c.requestedBy;
    if (c.historyReason !== undefined) entry.reason = c.historyReason;
    if (c.cardKey !== undefined) entry.cardKey = c.cardKey;
    s.history.push(entry);
    this.changedNow(s);
    const body: NotificationBody = { id: newNotificationId(), type: 'token.updated', occurredAt: at, change: c.change, ...(c.reason !== undefined ? { reason: c.reason } : {}), token: this.get(s.token.tokenReference)! };
    return this.notice(s, body, mode);
  }

  /** What becomes of a notification: answered to be sent now (`deliver`), kept until released (`hold`), or lost (`drop`). */
  private notice(s: Stored, body: NotificationBody, mode: SandboxNotify): NotificationBody | undefined {
    if (mode === 'drop') return undefined;
    if (mode === 'hold') {
      s.held.push(body);
      return undefined;
    }
    this.markSent(s, body);
    return body;
  }

  private markSent(s: Stored, body: NotificationBody): void {
    const version = (body.token as Token).version;
    if (!s.sent || version >= (s.sent.token as Token).version) s.sent = body;
  }

  private changedNow(s: Stored): void {
    const reference = s.token.tokenReference;
    this.changed.delete(reference);
    this.changed.set(reference, ++this.seq);
    for (const [oldest] of this.changed) {
      if (this.changed.size <= this.changesKept) break;
      this.changed.delete(oldest);
    }
  }

  private forget(s: Stored): void {
    const reference = s.token.tokenReference;
    if (this.byReference.get(reference) !== s) return;
    this.byReference.delete(reference);
    if (s.token.tokenizationId !== null && this.byTokenization.get(s.token.tokenizationId) === s) this.byTokenization.delete(s.token.tokenizationId);
    this.changed.delete(reference);
    const list = this.byCard.get(s.token.cardKey);
    if (list) {
      const at = list.indexOf(s);
      if (at >= 0) list.splice(at, 1);
      if (list.length === 0) this.byCard.delete(s.token.cardKey);
    }
  }
}
