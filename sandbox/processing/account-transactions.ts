import { newestFirst, transactionsOf, type KnownCard, type Transaction } from './transactions';

/**
 * Transactions held in memoised account histories, all accounts together (about 200 bytes
 * each): past it, the least recently read accounts' histories are dropped (and rebuilt when read).
 */
export const HISTORY_CACHE_TRANSACTIONS = 400_000;

/**
 * Inserts each of `added` into the newest-first `history` at its place, in place. A history is
 * changed in place, never copied: copying a large account's history on every new card made
 * garbage in proportion to the account's size (issue 14's soak: CPU and RSS grew with it).
 */
function insertNewestFirst(history: Transaction[], added: Transaction[]): void {
  for (const transaction of added) {
    let low = 0;
    let high = history.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (newestFirst(history[middle], transaction) <= 0) low = middle + 1;
      else high = middle;
    }
    history.splice(low, 0, transaction);
  }
}

/** Removes the transactions of `cardKey` from `history`, in place; returns how many. */
function removeCard(history: Transaction[], cardKey: string): number {
  let kept = 0;
  for (let i = 0; i < history.length; i++) if (history[i].cardId !== cardKey) history[kept++] = history[i];
  const removed = history.length - kept;
  history.length = kept;
  return removed;
}

/**
 * The processing system's cards by account, and each account's merged transaction history
 * (newest first), memoised: `GET /transactions?accountId=` reads a slice of it instead of
 * scanning every card and regenerating and sorting every history on each call. A card added to
 * an account is merged into its memoised history, a card removed is filtered out of it; the
 * answers are exactly those of generating and sorting every history of the account.
 */
export class AccountTransactions {
  /** Account → its cards by key, in registration order. */
  private readonly cardsByAccount = new Map<string, Map<string, KnownCard>>();
  /** Memoised histories, least recently read first. */
  private readonly histories = new Map<string, Transaction[]>();
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
      const own = transactionsOf(card);
      insertNewestFirst(history, own);
      this.held += own.length;
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
      this.held -= removeCard(history, card.cardKey);
      if (history.length === 0) this.histories.delete(card.accountId);
    }
  }

  /** Every transaction of the account's cards, newest first. Do not modify the list. */
  historyOf(accountId: string): readonly Transaction[] {
    const memo = this.histories.get(accountId);
    if (memo) {
      // Most recently read last.
      this.histories.delete(accountId);
      this.histories.set(accountId, memo);
      return memo;
    }
    const history = this.cardsOf(accountId).flatMap(transactionsOf).sort(newestFirst);
    if (history.length > 0 && history.length <= this.maxTransactions) {
      this.histories.set(accountId, history);
      this.held += history.length;
      this.trim();
    }
    return history;
  }

  clear(): void {
    this.cardsByAccount.clear();
    this.histories.clear();
    this.held = 0;
  }

  private trim(): void {
    for (const [accountId, history] of this.histories) {
      if (this.held <= this.maxTransactions) return;
      this.histories.delete(accountId);
      this.held -= history.length;
    }
  }
}
