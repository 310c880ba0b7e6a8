import type { Queryable } from '../db/database';
import { VELOCITY_WINDOWS, type VelocityWindow } from '../schemas/spend-controls';
import type { WalletProvider } from '../shapes/token';

/**
 * Spend controls (docs/spend-controls.md): what a partner allows its cards to spend, set per card
 * (`PUT /cards/{id}/spend-controls`) and as the partner's default for all its cards
 * (`PUT /spend-controls`), stored in table `spend_controls` (migration 016). The authorization
 * decision checks a purchase against both: {@link checkStaticControls} (pure), then velocity, which
 * holds in PostgreSQL: counted under the card's lock by `authorization_velocity_gate` (migrations
 * 021 and 023: from the card's velocity ledger) in the statement that records the decision. {@link velocityCountsColumn} is the same count
 * without the lock, read with the claim and checked by {@link checkVelocityCounts} before a
 * partner's decision endpoint is asked (a purchase already over a limit is not sent).
 */

/** One velocity rule: at most `maxCount` approved authorizations and/or `maxAmount` authorized over the rolling `window`. */
export interface VelocityRule {
  window: VelocityWindow;
  maxCount?: number;
  maxAmount?: number;
}

/** A spend-controls object as the partner PUTs it and reads it back; `{}` is no control. Amounts are in the card currency. */
export interface SpendControls {
  maxAmountPerTransaction?: number;
  allowedMccs?: string[];
  blockedMccs?: string[];
  allowedCountries?: string[];
  blockedCountries?: string[];
  velocity?: VelocityRule[];
  /** Only these wallets' tokens may be made and used (docs/tokens.md); a purchase with the card itself passes. */
  allowedWalletProviders?: WalletProvider[];
  blockedWalletProviders?: WalletProvider[];
}

/** The two sets of controls a purchase must pass: the partner's default and the card's own. */
export interface ApplicableSpendControls {
  partner: SpendControls;
  card: SpendControls;
}

/** What a purchase is checked on: its amount (card currency), its merchant's category and country, and the wallet of the token it was made with (none: the card itself). */
export interface PurchaseFacts {
  amount: number;
  mcc?: string | null;
  country?: string | null;
  walletProvider?: WalletProvider;
}

export type StaticDeclineReason = 'mcc_blocked' | 'country_blocked' | 'amount_exceeded' | 'wallet_provider_blocked';

/** Why a purchase is declined: the reason code, and the control that refused it (e.g. `card.blockedMccs`, `partner.velocity[0].maxCount`). */
export interface SpendControlDecline<Reason extends string = StaticDeclineReason | 'velocity_exceeded'> {
  declineReason: Reason;
  rule: string;
}

type Scope = keyof ApplicableSpendControls;
const SCOPES: readonly Scope[] = ['partner', 'card'];

/** The object as stored and answered: the fields in a fixed order, only those set. */
export function normalizeSpendControls(controls: SpendControls): SpendControls {
  const out: SpendControls = {};
  if (controls.maxAmountPerTransaction !== undefined) out.maxAmountPerTransaction = controls.maxAmountPerTransaction;
  if (controls.allowedMccs !== undefined) out.allowedMccs = [...controls.allowedMccs];
  if (controls.blockedMccs !== undefined) out.blockedMccs = [...controls.blockedMccs];
  if (controls.allowedCountries !== undefined) out.allowedCountries = [...controls.allowedCountries];
  if (controls.blockedCountries !== undefined) out.blockedCountries = [...controls.blockedCountries];
  if (controls.velocity !== undefined) {
    out.velocity = controls.velocity.map((rule) => ({
      window: rule.window,
      ...(rule.maxCount === undefined ? {} : { maxCount: rule.maxCount }),
      ...(rule.maxAmount === undefined ? {} : { maxAmount: rule.maxAmount }),
    }));
  }
  if (controls.allowedWalletProviders !== undefined) out.allowedWalletProviders = [...controls.allowedWalletProviders];
  if (controls.blockedWalletProviders !== undefined) out.blockedWalletProviders = [...controls.blockedWalletProviders];
  return out;
}

/** The WHERE clause of one scope (indexable: `IS NOT DISTINCT FROM` is not), with its parameters. */
function scopeOf(partnerId: string, cardKey: string | null): { where: string; params: string[] } {
  return cardKey === null ? { where: 'partner_id = $1 AND card_key IS NULL', params: [partnerId] } : { where: 'partner_id = $1 AND card_key = $2', params: [partnerId, cardKey] };
}

/** The controls of one scope: the partner's default (`cardKey` null) or one card's; `{}` when none are set. */
export async function readSpendControls(db: Queryable, partnerId: string, cardKey: string | null): Promise<SpendControls> {
  const { where, params } = scopeOf(partnerId, cardKey);
  const rows = await db.query<{ controls: SpendControls }>(`SELECT controls FROM spend_controls WHERE ${where}`, params);
  return rows.rows[0]?.controls ?? {};
}

/**
 * Replaces the controls of one scope in `tx` (the caller's transaction, which also writes the audit
 * entry and, for a card, the `card.updated` event): `{}` deletes the row. Returns what is stored.
 */
export async function saveSpendControls(tx: Queryable, partnerId: string, cardKey: string | null, controls: SpendControls): Promise<SpendControls> {
  const stored = normalizeSpendControls(controls);
  if (Object.keys(stored).length === 0) {
    const { where, params } = scopeOf(partnerId, cardKey);
    await tx.query(`DELETE FROM spend_controls WHERE ${where}`, params);
    return stored;
  }
  await tx.query(
    `INSERT INTO spend_controls (partner_id, card_key, controls) VALUES ($1, $2, $3::jsonb)
     ON CONFLICT ON CONSTRAINT spend_controls_scope_key DO UPDATE SET controls = EXCLUDED.controls, updated_at = now()`,
    [partnerId, cardKey, JSON.stringify(stored)]
  );
  return stored;
}

/** A `spend_controls` row of a card's partner or of the card itself. */
interface ScopeRow {
  card_key: string | null;
  controls: SpendControls;
}

/**
 * The partner's default and the card's own controls as a scalar subquery of a statement that reads
 * the card (`card`: its alias, with `partner_id` and `card_key`): a jsonb array of `{card_key,
 * controls}` (null when neither is set), for {@link applicableControlsOf}. The authorization
 * decision reads them in its first statement, beside the card and its claim.
 */
export function applicableControlsColumn(card: string): string {
  return `(SELECT jsonb_agg(jsonb_build_object('card_key', s.card_key, 'controls', s.controls)) FROM spend_controls s
            WHERE s.partner_id = ${card}.partner_id AND (s.card_key IS NULL OR s.card_key = ${card}.card_key))`;
}

/** The controls of {@link applicableControlsColumn}'s value (parsed, or its JSON text); `{}` for a scope with none. */
export function applicableControlsOf(rows: readonly ScopeRow[] | string | null): ApplicableSpendControls {
  const list: readonly ScopeRow[] = typeof rows === 'string' ? (JSON.parse(rows) as ScopeRow[]) : (rows ?? []);
  const found: ApplicableSpendControls = { partner: {}, card: {} };
  for (const row of list) found[row.card_key === null ? 'partner' : 'card'] = row.controls;
  return found;
}

/** An amount in ten-thousandths (the projection's numeric(20, 4)), so that comparisons are exact. */
function units(amount: number | string): number {
  return Math.round(Number(amount) * 10_000);
}

/** The first list check a value fails: a blocked list naming it, or an allow list not naming it. */
function listCheck<Blocked extends 'blockedMccs' | 'blockedCountries' | 'blockedWalletProviders', Allowed extends 'allowedMccs' | 'allowedCountries' | 'allowedWalletProviders'>(
  controls: SpendControls,
  blocked: Blocked,
  allowed: Allowed,
  value: string
): Blocked | Allowed | undefined {
  if ((controls[blocked] as readonly string[] | undefined)?.includes(value)) return blocked;
  const allow = controls[allowed] as readonly string[] | undefined;
  if (allow !== undefined && !allow.includes(value)) return allowed;
  return undefined;
}

/**
 * The wallet lists (`blockedWalletProviders`, then `allowedWalletProviders`; the partner's before the
 * card's) for a token of `walletProvider`: a tokenization's step 2 and a token purchase's first
 * static check (docs/tokens.md). `wallet_provider_blocked`, naming the list.
 *
 * @example checkWalletControls({ partner: {}, card: { allowedWalletProviders: ['apple_pay'] } }, 'google_pay')
 *   // → { declineReason: 'wallet_provider_blocked', rule: 'card.allowedWalletProviders' }
 */
export function checkWalletControls(controls: ApplicableSpendControls, walletProvider: WalletProvider): SpendControlDecline<'wallet_provider_blocked'> | undefined {
  for (const scope of SCOPES) {
    const failed = listCheck(controls[scope], 'blockedWalletProviders', 'allowedWalletProviders', walletProvider);
    if (failed) return { declineReason: 'wallet_provider_blocked', rule: `${scope}.${failed}` };
  }
  return undefined;
}

/**
 * Checks a purchase against the controls that need no history, with no I/O: the partner's default
 * and the card's own, both of which it must pass. First failure wins, in this order: for a purchase
 * with a token, its wallet ({@link checkWalletControls}, `wallet_provider_blocked`); the merchant
 * category (`mcc_blocked`), the merchant's country (`country_blocked`), the amount
 * (`amount_exceeded`, above `maxAmountPerTransaction`; equal passes); within each, the partner's
 * controls before the card's, and a block list before an allow list. An allow list admits only what
 * it names: a purchase without an MCC (or country) fails an allow list of MCCs (or countries).
 * `rule` names the control: `partner.blockedMccs`, `card.allowedCountries`, `card.maxAmountPerTransaction`...
 *
 * @example checkStaticControls({ partner: {}, card: { blockedMccs: ['7995'] } }, { amount: 10, mcc: '7995', country: 'DE' })
 *   // → { declineReason: 'mcc_blocked', rule: 'card.blockedMccs' }
 */
export function checkStaticControls(controls: ApplicableSpendControls, purchase: PurchaseFacts): SpendControlDecline<StaticDeclineReason> | undefined {
  if (purchase.walletProvider !== undefined) {
    const wallet = checkWalletControls(controls, purchase.walletProvider);
    if (wallet) return wallet;
  }
  const mcc = purchase.mcc ?? '';
  const country = (purchase.country ?? '').toUpperCase();
  for (const scope of SCOPES) {
    const failed = listCheck(controls[scope], 'blockedMccs', 'allowedMccs', mcc);
    if (failed) return { declineReason: 'mcc_blocked', rule: `${scope}.${failed}` };
  }
  for (const scope of SCOPES) {
    const failed = listCheck(controls[scope], 'blockedCountries', 'allowedCountries', country);
    if (failed) return { declineReason: 'country_blocked', rule: `${scope}.${failed}` };
  }
  for (const scope of SCOPES) {
    const max = controls[scope].maxAmountPerTransaction;
    if (max !== undefined && units(purchase.amount) > units(max)) return { declineReason: 'amount_exceeded', rule: `${scope}.maxAmountPerTransaction` };
  }
  return undefined;
}

/** What the velocity check counts the purchase against. */
export interface VelocityPurchase {
  partnerId: string;
  cardKey: string;
  /** The purchase's amount, in the card currency. */
  amount: number;
  /** The purchase's time: each window is the `window` before it. */
  at: Date;
}

/**
 * The velocity counts as a scalar subquery of a statement that reads the card (`card`: its alias,
 * with `partner_id` and `card_key`) and its controls (`controls`: {@link applicableControlsColumn}'s
 * value): a jsonb object with `c_<window>` (count) and `a_<window>` (sum, as text) for every window,
 * each counted as far back as the longest window the rules name (a longer one counts as that one);
 * zeros, nothing read, when no rule names one.
 *
 * What counts (decided in docs/spend-controls.md): the card's approved authorizations, i.e. rows
 * of `card_transactions` whose history starts with an `authorization` step, of type PURCHASE or
 * WITHDRAWAL, still PENDING or SETTLED, created in the rolling window before `at`, with their
 * current `amount`: a partial reversal gives back the reversed amount, a full reversal (REVERSED)
 * or an expiry (EXPIRED) gives back the count and the amount, a SETTLED one keeps counting its
 * `amount`. Declined authorizations, force-posted clearings and refunds never count. Both scopes
 * count the card's own authorizations: the partner's default is a rule for each card, not a pool
 * across its cards. Counted by `card_velocity_counts` (migration 023) from the card's velocity
 * ledger, a few lookups of its key whatever the card's history (a row's entry is written by a
 * deferred trigger at its commit: docs/spend-controls.md, "Speed"); `authorization_velocity_gate`
 * (migrations 021 and 023) counts the same way under the card's lock.
 * The decision reads it in its claim statement when the partner has a decision endpoint: the
 * pre-check before the partner is asked ({@link checkVelocityCounts}); what holds is still the
 * recording's gate.
 */
export function velocityCountsColumn(controls: string, card: string, at: string): string {
  const windows = Object.keys(VELOCITY_WINDOWS) as VelocityWindow[];
  const seconds = `CASE r.value->>'window' ${windows.map((w) => `WHEN '${w}' THEN ${VELOCITY_WINDOWS[w]}`).join(' ')} END`;
  // Each window as far as the longest the rules name (a longer one counts as the longest, as the
  // scan of the longest window did); no window at all, so no lookup, without a rule.
  const counted = `CASE WHEN w.longest IS NOT NULL THEN ARRAY[${windows.map((w) => `least(${VELOCITY_WINDOWS[w]}, w.longest)`).join(', ')}] END`;
  const fields = windows.flatMap((w, i) => [
    `'c_${w}', coalesce(max(v.n) FILTER (WHERE v.i = ${i + 1}), 0)`,
    `'a_${w}', coalesce(max(v.amount) FILTER (WHERE v.i = ${i + 1}), 0)::text`,
  ]);
  return `(SELECT jsonb_build_object(${fields.join(', ')})
             FROM (SELECT max(${seconds})::integer AS longest FROM jsonb_array_elements(coalesce(${controls}, '[]'::jsonb)) AS sc, jsonb_array_elements(coalesce(sc.value->'controls'->'velocity', '[]'::jsonb)) AS r) AS w
             LEFT JOIN LATERAL card_velocity_counts(${card}.partner_id, ${card}.card_key, ${at}::timestamptz, ${counted}) AS v ON true)`;
}

/** The velocity rules of both scopes, in the order they are checked. */
function velocityRules(controls: ApplicableSpendControls) {
  return SCOPES.flatMap((scope) => (controls[scope].velocity ?? []).map((rule, index) => ({ scope, index, rule })));
}

/** The first rule the counted row (one per window: `c_<window>`, `a_<window>`) fails with this purchase. */
function velocityRefusal(rules: ReturnType<typeof velocityRules>, counted: Record<string, string>, purchase: VelocityPurchase): SpendControlDecline<'velocity_exceeded'> | undefined {
  for (const { scope, index, rule } of rules) {
    const name = `${scope}.velocity[${index}]`;
    if (rule.maxCount !== undefined && Number(counted[`c_${rule.window}`]) + 1 > rule.maxCount) return { declineReason: 'velocity_exceeded', rule: `${name}.maxCount` };
    if (rule.maxAmount !== undefined && units(counted[`a_${rule.window}`]) + units(purchase.amount) > units(rule.maxAmount)) {
      return { declineReason: 'velocity_exceeded', rule: `${name}.maxAmount` };
    }
  }
  return undefined;
}

/** A count of ten-thousandths as a decimal string (`-12345` → `-1.2345`): exact, for a numeric parameter. */
function decimal(tenThousandths: number): string {
  const sign = tenThousandths < 0 ? '-' : '';
  const abs = Math.abs(tenThousandths);
  return `${sign}${Math.floor(abs / 10_000)}.${String(abs % 10_000).padStart(4, '0')}`;
}

/** The velocity gate of one purchase: what the recording statement sends, and how its answer is read. */
export interface VelocityGate {
  /** The distinct windows of the rules, in seconds (empty: no rule, nothing counted). */
  windows: number[];
  /** Per window: the most approved authorizations already counted that still let this purchase pass; null: no count rule. */
  countLimits: (number | null)[];
  /** Per window: the most amount already authorized (a decimal string) that still lets this purchase pass; null: no amount rule. */
  amountLimits: (string | null)[];
  /** The first rule the counts (per window, as the gate answers them) fail, named as {@link checkVelocityCounts} names it. */
  refusal(counts: readonly (string | number)[], amounts: readonly (string | number)[]): SpendControlDecline<'velocity_exceeded'> | undefined;
}

/**
 * The velocity rules of both scopes as the limits of `authorization_velocity_gate` (migration 021),
 * which the decision's recording statement calls first: it takes the card's lock, counts per window
 * what {@link velocityCountsColumn} counts (with a fresh snapshot, so it sees what the lock's previous holder
 * committed) and passes only when every window is within its limits; the statement writes only then.
 * The limits are the rules' own: a `maxCount` passes while the count is at most `maxCount - 1`, a
 * `maxAmount` while the amount counted is at most `maxAmount - amount` (exact, in ten-thousandths);
 * several rules on one window give the lowest. When the gate does not pass, `refusal` names the rule
 * from its counts, in {@link checkVelocityCounts}'s order.
 */
export function velocityGate(controls: ApplicableSpendControls, purchase: VelocityPurchase): VelocityGate {
  const rules = velocityRules(controls);
  const names = [...new Set(rules.map((r) => r.rule.window))];
  const countLimits = names.map(() => null as number | null);
  const amountLimits = names.map(() => null as number | null);
  for (const { rule } of rules) {
    const i = names.indexOf(rule.window);
    if (rule.maxCount !== undefined) countLimits[i] = Math.min(countLimits[i] ?? Infinity, rule.maxCount - 1);
    if (rule.maxAmount !== undefined) amountLimits[i] = Math.min(amountLimits[i] ?? Infinity, units(rule.maxAmount) - units(purchase.amount));
  }
  return {
    windows: names.map((w) => VELOCITY_WINDOWS[w]),
    countLimits,
    amountLimits: amountLimits.map((limit) => (limit === null ? null : decimal(limit))),
    refusal: (counts, amounts) => {
      const counted: Record<string, string> = {};
      names.forEach((w, i) => {
        counted[`c_${w}`] = String(counts[i] ?? 0);
        counted[`a_${w}`] = String(amounts[i] ?? 0);
      });
      return velocityRefusal(rules, counted, purchase);
    },
  };
}

/**
 * Checks the velocity rules of the partner's default and of the card's controls on the counts
 * read ({@link velocityCountsColumn}'s value, parsed or as JSON text; null: none read, no rule):
 * would approving this purchase take the card over a rule's `maxCount` (approved authorizations in
 * the window, this one included) or `maxAmount` (their amounts, this one's included)? First failure
 * wins: the partner's rules before the card's, each in its list order, `maxCount` before
 * `maxAmount`; `rule` names it (`card.velocity[1].maxAmount`). A pre-check only: the counts were
 * read without the card's lock, and what holds is the gate of the recording statement.
 */
export function checkVelocityCounts(controls: ApplicableSpendControls, counted: Record<string, string | number> | string | null, purchase: VelocityPurchase): SpendControlDecline<'velocity_exceeded'> | undefined {
  const rules = velocityRules(controls);
  if (rules.length === 0) return undefined;
  const row = typeof counted === 'string' ? (JSON.parse(counted) as Record<string, string | number>) : (counted ?? {});
  const text: Record<string, string> = {};
  for (const [key, value] of Object.entries(row)) text[key] = String(value);
  return velocityRefusal(rules, text, purchase);
}
