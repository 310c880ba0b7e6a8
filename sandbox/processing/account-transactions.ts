import { GENERATED_STATUSES, generatedTransaction, MERCHANTS, newestFirst, TRANSACTION_TYPES, transactionsOf, type GeneratedStatus, type KnownCard, type Transaction } from './transactions';

/**
 * Transactions held in memoised account histories, all accounts together (38 bytes each in
 * columns, not objects): past it, the least recently read accounts' histories are dropped (and
 * rebuilt when read).
 */
export const HISTORY_CACHE_TRANSACTIONS = 400_000;

/** A page of an account's history and the number of transactions it has in all. */
export interface HistoryPage {
  items: Transaction[];
  total: number;
}

/**
 * One account's merged history, newest first (ties by id), in columns: a transaction is 38
 * bytes here instead of an object, its id string, its date string and its amount (about 600
 * bytes: a soak's 8,000 cards would hold some 70 MB of them). A page is
 * materialised from the columns; `accountId` and `currency` come from the card.
 */
class History {
  length = 0;
  /** `createdAt` in epoch milliseconds. */
  private times = new Float64Array(0);
  private amounts = new Float64Array(0);
  /** The 24 hex digits of the id as three 32-bit words. */
  private ids = new Uint32Array(0);
  /** Index of the type, generated status (GENERATED_STATUSES: 2 bits) and merchant: `type | status << 2 | merchant << 4`. */
  private kinds = new Uint16Array(0);
  /** Key of the card of each transaction. */
  private cardKeys: string[] = [];

  /** A history of `sorted` (newest first). */
  static of(sorted: readonly Transaction[]): History {
    const history = new History();
    history.reserve(sorted.length);
    for (const t of sorted) history.push(t);
    return history;
  }

  /** Merges `added` (one card's transactions, newest first) into the history, in place. */
  insert(added: readonly Transaction[]): void {
    const k = added.length;
    if (k === 0) return;
    this.reserve(this.length + k);
    const incoming = History.of(added);
    // Merge from the back: each entry moves once, no copy of the history is made.
    let i = this.length - 1;
    let j = k - 1;
    for (let w = this.length + k - 1; j >= 0; w--) {
      if (i >= 0 && this.after(i, incoming, j)) this.move(this, i--, w);
      else this.move(incoming, j--, w);
    }
    this.length += k;
  }

  /** Removes the transactions of `cardKey`, in place; returns how many. */
  removeCard(cardKey: string): number {
    let kept = 0;
    for (let i = 0; i < this.length; i++) if (this.cardKeys[i] !== cardKey) this.move(this, i, kept++);
    const removed = this.length - kept;
    this.length = kept;
    this.cardKeys.length = kept;
    return removed;
  }

  /**
   * The transaction at `index`, its lifecycle fields derived as the generator derives them;
   * `cardOf` finds its card (for `accountId` and `currency`).
   */
  at(index: number, cardOf: (cardKey: string) => KnownCard): Transaction {
    const card = cardOf(this.cardKeys[index]);
    const kind = this.kinds[index];
    return generatedTransaction({
      id: hex8(this.ids[index * 3]) + hex8(this.ids[index * 3 + 1]) + hex8(this.ids[index * 3 + 2]),
      cardId: card.cardKey,
      accountId: card.accountId,
      amount: this.amounts[index],
      currency: card.currency,
      type: TRANSACTION_TYPES[kind & 3],
      merchant: MERCHANTS[kind >> 4],
      status: GENERATED_STATUSES[(kind >> 2) & 3],
      createdAt: new Date(this.times[index]).toISOString(),
    });
  }

  private push(t: Transaction): void {
    const n = this.length++;
    this.times[n] = Date.parse(t.createdAt);
    this.amounts[n] = t.amount;
    for (let w = 0; w < 3; w++) this.ids[n * 3 + w] = parseInt(t.id.slice(w * 8, w * 8 + 8), 16);
    this.kinds[n] = TRANSACTION_TYPES.indexOf(t.type) | (GENERATED_STATUSES.indexOf(t.status as GeneratedStatus) << 2) | (MERCHANTS.indexOf(t.merchant) << 4);
    this.cardKeys[n] = t.cardId;
  }

  /** Whether entry `i` comes after entry `j` of `other` in newest-first order (older, or as old with a greater id). */
  private after(i: number, other: History, j: number): boolean {
    if (this.times[i] !== other.times[j]) return this.times[i] < other.times[j];
    for (let w = 0; w < 3; w++) {
      if (this.ids[i * 3 + w] !== other.ids[j * 3 + w]) return this.ids[i * 3 + w] > other.ids[j * 3 + w];
    }
    return false;
  }

  private move(from: History, i: number, to: number): void {
    this.times[to] = from.times[i];
    this.amounts[to] = from.amounts[i];
    this.ids[to * 3] = from.ids[i * 3];
    this.ids[to * 3 + 1] = from.ids[i * 3 + 1];
    this.ids[to * 3 + 2] = from.ids[i * 3 + 2];
    this.kinds[to] = from.kinds[i];
    this.cardKeys[to] = from.cardKeys[i];
  }

  private reserve(size: number): void {
    if (size <= this.times.length) return;
    const capacity = Math.max(size, Math.ceil(this.times.length * 1.5), 16);
    const grow = <A extends Float64Array | Uint32Array | Uint16Array>(old: A, make: (n: number) => A, per = 1): A => {
      const next = make(capacity * per);
      next.set(old.subarray(0, this.length * per));
      return next;
    };
    this.times = grow(this.times, (n) => new Float64Array(n));
    this.amounts = grow(this.amounts, (n) => new Float64Array(n));
    this.ids = grow(this.ids, (n) => new Uint32Array(n), 3);
    this.kinds = grow(this.kinds, (n) => new Uint16Array(n));
  }
}

function hex8(word: number): string {
  return word.toString(16).padStart(8, '0');
}

/**
 * The processing system's cards by account, and each account's merged transaction history
 * (newest first), memoised in compact columns: `GET /transactions?accountId=` materialises the
 * page it answers from them instead of scanning every card and regenerating and sorting every
 * history on each call. A card added to an account is merged into its memoised history, a card
 * removed is filtered out of it, both in place (copying a large account's history on every new
 * card would make garbage in proportion to its size). The answers are exactly those
 * of generating and sorting every history of the account.
 */
export class AccountTransactions {
  /** Account → its cards by key, in registration order. */
  private readonly cardsByAccount = new Map<string, Map<string, KnownCard>>();
  /** Memoised histories, least recently read first. */
  private readonly histories = new Map<string, History>();
  private held = 0;

  constructor(private readonly maxTransactions = HISTORY_CACHE_TRANSACTIONS) {}

  /** Transactions held in memoised histories (at most `maxTransactions`). */
  get heldTransactions(): number {
    return this.held;
  }

  /** Accounts with at least one card. */
  get accounts(): number {
    return this.cardsByAccount.size;
  }

  /** The cards of an account, in registration order. */
  cardsOf(accountId: string): KnownCard[] {
    return [...(this.cardsByAccount.get(accountId)?.values() ?? [])];
  }

  /**
   * Files `card` under its account (a card without one is in no account's history). A card filed
   * already must have the same history (else `remove` it first).
   */
  add(card: KnownCard): void {
    if (card.accountId === null) return;
    let cards = this.cardsByAccount.get(card.accountId);
    if (!cards) this.cardsByAccount.set(card.accountId, (cards = new Map()));
    const known = cards.has(card.cardKey);
    cards.set(card.cardKey, card);
    // A card already filed is a re-registration with the same history: nothing to merge.
    if (known) return;
    const history = this.histories.get(card.accountId);
    if (history) {
      const before = history.length;
      history.insert(transactionsOf(card));
      this.held += history.length - before;
      this.trim();
    }
  }

  /** Takes `card` out of its account. */
  remove(card: KnownCard): void {
    if (card.accountId === null) return;
    const cards = this.cardsByAccount.get(card.accountId);
    if (!cards?.delete(card.cardKey)) return;
    if (cards.size === 0) this.cardsByAccount.delete(card.accountId);
    const history = this.histories.get(card.accountId);
    if (history) {
      this.held -= history.removeCard(card.cardKey);
      if (history.length === 0) this.histories.delete(card.accountId);
    }
  }

  /** `limit` transactions of the account's cards from `offset` on, newest first, and how many there are. */
  page(accountId: string, offset: number, limit: number): HistoryPage {
    const history = this.historyFor(accountId);
    const cards = this.cardsByAccount.get(accountId);
    const items: Transaction[] = [];
    if (history && cards) {
      const cardOf = (cardKey: string): KnownCard => cards.get(cardKey)!;
      for (let i = offset; i < Math.min(history.length, offset + limit); i++) items.push(history.at(i, cardOf));
    }
    return { items, total: history?.length ?? 0 };
  }

  /** Every transaction of the account's cards, newest first. */
  historyOf(accountId: string): Transaction[] {
    return this.page(accountId, 0, Number.MAX_SAFE_INTEGER).items;
  }

  clear(): void {
    this.cardsByAccount.clear();
    this.histories.clear();
    this.held = 0;
  }

  /** The memoised history of the account (most recently read from now on), built when missing. */
  private historyFor(accountId: string): History | undefined {
    const memo = this.histories.get(accountId);
    if (memo) {
      this.histories.delete(accountId);
      this.histories.set(accountId, memo);
      return memo;
    }
    const cards = this.cardsByAccount.get(accountId);
    if (!cards) return undefined;
    const history = History.of([...cards.values()].flatMap(transactionsOf).sort(newestFirst));
    if (history.length > 0 && history.length <= this.maxTransactions) {
      this.histories.set(accountId, history);
      this.held += history.length;
      this.trim();
    }
    return history;
  }

  private trim(): void {
    for (const [accountId, history] of this.histories) {
      if (this.held <= this.maxTransactions) return;
      this.histories.delete(accountId);
      this.held -= history.length;
    }
  }
}
