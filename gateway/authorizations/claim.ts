import crypto from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { CARD_COLUMNS, toCard, type Card, type CardRow } from '../cards/card-store';
import type { Database } from '../db/database';
import { GatewayError } from '../errors';
import { hintOf, type EndpointHints } from './card-hints';
import { ANSWER_MARGIN_MS, DecisionTooLate, type Clock } from './deadline';
import type { AuthorizationDecision, AuthorizationRequest, DecisionCard, DecisionToken } from './decision';
import { mark, type DecisionTrace } from './decision-trace';
import { endpointTargetColumn, endpointTargetOf, type AuthorizationEndpointTarget } from './endpoint-store';
import { applicableControlsColumn, applicableControlsOf, velocityCountsColumn, type ApplicableSpendControls } from './spend-controls';

/**
 * The claim protocol of an authorization id (docs/authorizations.md, "Exactly once"), with its
 * statements: the first request claims the id (a `deciding` row whose lease ends at an instant,
 * the processor's deadline) in the statement that reads the card, its controls and its partner's
 * decision endpoint; a repeat, here or on another instance, waits for the holder's decision and
 * answers it; a claim whose lease ran out is taken over with a new token, which fences the old
 * holder's late recording out. Without a decision endpoint no claim is taken first: the recording
 * inserts the row decided (./recording-statements.ts).
 */

/**
 * What the claim statement read of the card's partner's decision endpoint, when it has one (in any
 * status): the endpoint with its live secret rows (sealed), and the card as events carry it (no
 * card number, CVV or PIN).
 */
export interface EndpointRead {
  target: AuthorizationEndpointTarget;
  card: Card;
}

/** How often a repeat waits for the first request's decision. */
const WAIT_STEP_MS = 10;

/** A claim this request holds, with what the decision reads beside it (in the claim's statement). */
export interface Claimed {
  /** Undefined: not claimed (the partner has no decision endpoint, and the claim was not asked for). */
  token: string | undefined;
  /** Undefined: no card of this gateway has the key. */
  card: DecisionCard | undefined;
  controls: ApplicableSpendControls;
  /** The card's partner has a decision endpoint (enabled or not). */
  hasEndpoint: boolean;
  /** With a claim and an endpoint: the endpoint, the card as events carry it and the velocity counts; undefined otherwise. */
  endpoint: (EndpointRead & { velocity: unknown }) | undefined;
}

/** The card's columns as events carry them ({@link CARD_COLUMNS}), as one jsonb value. */
const EVENT_CARD_JSON = `jsonb_build_object(${CARD_COLUMNS.split(',')
  .map((column) => `'${column.trim()}', c.${column.trim()}`)
  .join(', ')})`;

type EventCardJson = (Omit<CardRow, 'created_at'> & { created_at: string }) | string;

/** What {@link EVENT_CARD_JSON}, {@link endpointTargetColumn} and {@link velocityCountsColumn} read, as the decision takes them; undefined without an endpoint. */
function endpointReadOf(endpoint: unknown, eventCard: EventCardJson | null, velocity: unknown): Claimed['endpoint'] {
  const target = endpointTargetOf(endpoint);
  if (!target || eventCard === null) return undefined;
  const cardRow = typeof eventCard === 'string' ? (JSON.parse(eventCard) as Exclude<EventCardJson, string>) : eventCard;
  return { target, card: toCard({ ...cardRow, created_at: new Date(cardRow.created_at) } as CardRow), velocity };
}

/**
 * The claim's commit does not wait for its WAL flush (docs/authorizations.md, "Exactly once"): a
 * column of every claim statement, so that it holds for that statement's own transaction only (the
 * setting is local to it, and the connection's next transaction commits synchronously again). The
 * claim is visible to other sessions at its commit either way; it is durable once the decision's
 * recording, which commits synchronously after it, is, since flushing the WAL to the recording's
 * commit flushes everything before it. Lost only when PostgreSQL crashes between the two, which
 * leaves the id as a crash before the claim would: nothing recorded, the holder's recording fenced
 * out (its token gone), a repeat decides afresh. Half the flushes of a decision with an endpoint
 * (docs/performance.md, "Authorization decisions").
 */
export const CLAIM_COMMIT_COLUMN = "set_config('synchronous_commit', 'off', true) AS claim_commit";

/** Each claim statement's text by its name, built on its first use (a name stands for one text: PostgreSQL prepares it under that name). */
const claimTexts = new Map<string, string>();

/**
 * Runs a claim (`claimSql`: an INSERT or UPDATE of `authorization_decisions` … `RETURNING 1`) and,
 * in the same statement, reads the card (`$cardParam`), its spend controls and whether its partner
 * has a decision endpoint: one round trip. When the card's {@link EndpointHints hint} says its
 * partner has one, the statement (`<name>-endpoint`) also reads the endpoint with its live secrets
 * (sealed), the card as events carry it and the card's velocity counts at the purchase's time:
 * everything the decision reads before asking the partner, in the same round trip. Without the
 * hint those reads stay out of the statement (their tables out of its plan: about 40 µs of the
 * backend's CPU per decision), and a claim that finds an endpoint reads them in one more
 * statement. `claimed`: whether the claim changed a row. `name`: the statement's (its text is
 * fixed), so that PostgreSQL parses it once per connection.
 *
 * Never run it inside an explicit transaction (BEGIN … COMMIT, `db.transaction`): the statement's
 * {@link CLAIM_COMMIT_COLUMN} sets `synchronous_commit = off` for the transaction it runs in, which
 * is the statement's own only when it autocommits; inside a transaction it would turn off the
 * synchronous commit of everything that transaction writes (docs/authorizations.md, "Exactly once").
 */
async function claimAndRead(
  db: Database,
  hints: EndpointHints | undefined,
  claimSql: string,
  params: unknown[],
  cardParam: number,
  at: string,
  token: string,
  name: string,
  trace?: DecisionTrace,
  tokenReference?: string
): Promise<Claimed & { claimed: boolean; seen: boolean }> {
  if (tokenReference !== undefined) return claimAndReadThroughToken(db, claimSql, params, cardParam, at, token, name, tokenReference, trace);
  const cardKey = params[cardParam - 1] as string;
  const withEndpoint = hints?.get(cardKey)?.hasEndpoint === true;
  const statementName = withEndpoint ? `${name}-endpoint` : name;
  let text = claimTexts.get(statementName);
  if (text === undefined) {
    const head = `WITH claim AS (${claimSql})
       SELECT (SELECT count(*) FROM claim) AS claimed, ${CLAIM_COMMIT_COLUMN}, c.partner_id, c.individual_id, c.tenant_id, c.status,
              EXISTS (SELECT 1 FROM authorization_decisions d WHERE d.authorization_id = $1) AS seen,`;
    text = withEndpoint
      ? `${head} ctl.controls, ep.endpoint, ep.endpoint IS NOT NULL AS has_endpoint,
              CASE WHEN ep.endpoint IS NOT NULL THEN ${EVENT_CARD_JSON} END AS event_card,
              CASE WHEN ep.endpoint IS NOT NULL THEN ${velocityCountsColumn('ctl.controls', 'c', `$${params.length + 1}`)} END AS velocity
         FROM (SELECT 1) AS one LEFT JOIN cards c ON c.card_key = $${cardParam}
              LEFT JOIN LATERAL (SELECT ${applicableControlsColumn('c')} AS controls) AS ctl ON true
              LEFT JOIN LATERAL (SELECT ${endpointTargetColumn('c')} AS endpoint) AS ep ON true`
      : `${head} ${applicableControlsColumn('c')} AS controls,
              EXISTS (SELECT 1 FROM authorization_endpoints e WHERE e.partner_id = c.partner_id) AS has_endpoint
         FROM (SELECT 1) AS one LEFT JOIN cards c ON c.card_key = $${cardParam}`;
    claimTexts.set(statementName, text);
  }
  if (trace && trace.claimSent === undefined) mark(trace, 'claimSent');
  const row = (
    await db.named<{
      claimed: string;
      partner_id: string | null;
      individual_id: string | null;
      tenant_id: string | null;
      status: string | null;
      controls: Parameters<typeof applicableControlsOf>[0];
      has_endpoint: boolean | null;
      endpoint?: unknown;
      event_card?: EventCardJson | null;
      velocity?: unknown;
      seen: boolean;
    }>(
      statementName,
      text,
      withEndpoint ? [...params, at] : params
    )
  ).rows[0];
  mark(trace, 'claimDone');
  const card: DecisionCard | undefined =
    row.partner_id === null ? undefined : { cardKey, partnerId: row.partner_id, individualId: row.individual_id, tenantId: row.tenant_id, status: row.status! };
  const hasEndpoint = row.has_endpoint === true;
  const controls = applicableControlsOf(row.controls);
  if (card && hints) hints.set(cardKey, hintOf(card, hasEndpoint, hasEndpoint ? undefined : JSON.stringify(controls)));
  const claimed = Number(row.claimed) > 0;
  let endpoint: Claimed['endpoint'];
  if (withEndpoint) endpoint = endpointReadOf(row.endpoint, row.event_card ?? null, row.velocity);
  else if (hasEndpoint && claimed && card) endpoint = await readEndpoint(db, cardKey, row.controls, at);
  return { claimed, token, card, controls, hasEndpoint, endpoint, seen: row.seen };
}

/**
 * {@link claimAndRead} for a purchase made with a network token (docs/authorizations.md, "Decision
 * order"; docs/upstreams.md 10.8): the statement `<name>-token` finds the card **through the token**
 * (`tokens.card_key`, the card the gateway holds for it now, which a replacement moved at once; the
 * request's `cardId` when the gateway holds no token of the reference) and reads, besides the
 * claim, the card (with its status code), the partner's `tokenize_before_activation`, the token's
 * status, holder and wallet, the controls, and always the endpoint's reads (no per-card hints:
 * they are keyed by the processor's card, which may not be the token's). The card purchases'
 * statements are not touched (their texts are golden-tested).
 */
async function claimAndReadThroughToken(
  db: Database,
  claimSql: string,
  params: unknown[],
  cardParam: number,
  at: string,
  token: string,
  name: string,
  tokenReference: string,
  trace?: DecisionTrace
): Promise<Claimed & { claimed: boolean; seen: boolean }> {
  const statementName = `${name}-token`;
  const tokenParam = params.length + 1;
  const atParam = params.length + 2;
  let text = claimTexts.get(statementName);
  if (text === undefined) {
    text = `WITH claim AS (${claimSql})
       SELECT (SELECT count(*) FROM claim) AS claimed, ${CLAIM_COMMIT_COLUMN}, c.card_key, c.partner_id, c.individual_id, c.tenant_id, c.status, c.status_code,
              p.tokenize_before_activation, tk.id AS token_id, tk.status AS token_status, tk.suspended_by AS token_suspended_by, tk.wallet_provider AS token_wallet,
              EXISTS (SELECT 1 FROM authorization_decisions d WHERE d.authorization_id = $1) AS seen,
              ctl.controls, ep.endpoint, ep.endpoint IS NOT NULL AS has_endpoint,
              CASE WHEN ep.endpoint IS NOT NULL THEN ${EVENT_CARD_JSON} END AS event_card,
              CASE WHEN ep.endpoint IS NOT NULL THEN ${velocityCountsColumn('ctl.controls', 'c', `$${atParam}`)} END AS velocity
         FROM (SELECT 1) AS one LEFT JOIN tokens tk ON tk.processor_ref = $${tokenParam}::text
              LEFT JOIN cards c ON c.card_key = coalesce(tk.card_key, $${cardParam}::text)
              LEFT JOIN partners p ON p.id = c.partner_id
              LEFT JOIN LATERAL (SELECT ${applicableControlsColumn('c')} AS controls) AS ctl ON true
              LEFT JOIN LATERAL (SELECT ${endpointTargetColumn('c')} AS endpoint) AS ep ON true`;
    claimTexts.set(statementName, text);
  }
  if (trace && trace.claimSent === undefined) mark(trace, 'claimSent');
  const row = (
    await db.named<{
      claimed: string;
      card_key: string | null;
      partner_id: string | null;
      individual_id: string | null;
      tenant_id: string | null;
      status: string | null;
      status_code: string | null;
      tokenize_before_activation: boolean | null;
      token_id: string | null;
      token_status: DecisionToken['status'] | null;
      token_suspended_by: DecisionToken['suspendedBy'];
      token_wallet: DecisionToken['walletProvider'] | null;
      controls: Parameters<typeof applicableControlsOf>[0];
      has_endpoint: boolean | null;
      endpoint?: unknown;
      event_card?: EventCardJson | null;
      velocity?: unknown;
      seen: boolean;
    }>(statementName, text, [...params, tokenReference, at])
  ).rows[0];
  mark(trace, 'claimDone');
  const decisionToken: DecisionToken | null =
    row.token_id === null ? null : { id: row.token_id, status: row.token_status!, suspendedBy: row.token_suspended_by, walletProvider: row.token_wallet! };
  const card: DecisionCard | undefined =
    row.partner_id === null
      ? undefined
      : {
          cardKey: row.card_key!,
          partnerId: row.partner_id,
          individualId: row.individual_id,
          tenantId: row.tenant_id,
          status: row.status!,
          statusCode: row.status_code!,
          tokenizeBeforeActivation: row.tokenize_before_activation === true,
          token: decisionToken,
        };
  const hasEndpoint = row.has_endpoint === true;
  const controls = applicableControlsOf(row.controls);
  const claimed = Number(row.claimed) > 0;
  const endpoint = hasEndpoint ? endpointReadOf(row.endpoint, row.event_card ?? null, row.velocity) : undefined;
  return { claimed, token, card, controls, hasEndpoint, endpoint, seen: row.seen };
}

/**
 * The reads of {@link claimAndRead}'s `-endpoint` statement after a claim without them (the card's
 * hint was missing or stale): the endpoint, the card as events carry it, and the velocity counts
 * of the windows of `controls`, the controls the claim read.
 */
async function readEndpoint(db: Database, cardKey: string, controls: unknown, at: string): Promise<Claimed['endpoint']> {
  const row = (
    await db.named<{ endpoint: unknown; event_card: EventCardJson; velocity: unknown }>(
      'authorization-endpoint-read',
      `SELECT ${endpointTargetColumn('c')} AS endpoint, ${EVENT_CARD_JSON} AS event_card, ${velocityCountsColumn('$2::jsonb', 'c', '$3')} AS velocity
         FROM cards c WHERE c.card_key = $1`,
      [cardKey, controls === null || controls === undefined ? null : typeof controls === 'string' ? controls : JSON.stringify(controls), at]
    )
  ).rows[0];
  return row ? endpointReadOf(row.endpoint, row.event_card, row.velocity) : undefined;
}

/**
 * Claims the authorization id for this request and returns the claim's token, or returns the
 * decision another request recorded for it. A claim whose lease ran out (its holder died, or missed
 * its deadline without recording) is taken over by whichever repeat sees it first, with a new token
 * (the old holder's late recording then finds its token gone and rolls back). The lease is counted
 * on the database's clock. A repeat naming another card than a decided claim is refused: an
 * authorization id is one card's; while that claim is still deciding, {@link DecisionTooLate} (503) at
 * once, since the claim may not be durable yet. {@link DecisionTooLate} when `answerBy` comes first.
 */
export async function claimOrWait(
  db: Database,
  hints: EndpointHints | undefined,
  request: AuthorizationRequest,
  answerBy: number,
  always: boolean,
  now: Clock,
  trace?: DecisionTrace
): Promise<Claimed | AuthorizationDecision> {
  const token = newClaimToken();
  // The lease lasts until the processor's deadline (this request's answer is due, with the margin),
  // an instant: a claim that reaches the database late (a link that held it) is no longer than that.
  const leaseUntil = new Date(answerBy + ANSWER_MARGIN_MS).toISOString();
  // Unless `always`, claimed only when the card's partner has a decision endpoint (the statement's
  // own snapshot): otherwise the reads alone, and the caller records the decision with its claim.
  const first = await claimAndRead(
    db,
    hints,
    `INSERT INTO authorization_decisions (authorization_id, transaction_id, card_key, state, claim_token, lease_until)
     SELECT $1, $2, $3, 'deciding', $4, $5::timestamptz
      WHERE $6::boolean OR EXISTS (SELECT 1 FROM cards c JOIN authorization_endpoints e ON e.partner_id = c.partner_id WHERE c.card_key = $3)
     ON CONFLICT (authorization_id) DO NOTHING RETURNING 1`,
    [request.id, request.transactionId, request.cardId, token, leaseUntil, always],
    3,
    request.at,
    token,
    'authorization-claim',
    trace,
    request.token?.reference
  );
  if (first.claimed) return first;
  // No claim was tried: the claim goes with the recording (a concurrent repeat finds it there). A
  // repeat of an id that has its decision row (committed) reads it below instead of recording again.
  if (!always && !first.hasEndpoint && !first.seen) return { card: first.card, controls: first.controls, hasEndpoint: false, endpoint: undefined, token: undefined };
  for (;;) {
    const row = (
      await db.query<{ state: string; card_key: string; decision: AuthorizationDecision | string | null; expired: boolean }>(
        'SELECT state, card_key, decision, lease_until < now() AS expired FROM authorization_decisions WHERE authorization_id = $1',
        [request.id]
      )
    ).rows[0];
    if (row && row.card_key !== request.cardId) {
      // Refused (400) only once the other card's decision is recorded (a synchronous commit: durable).
      // A claim still deciding may not be durable yet (its commit does not wait for its flush): lost in
      // a crash, the id could still be decided for this card. Until then 503, as when no decision can
      // be had (the processor's stand-in; its retry gets the 400 or a decision).
      if (row.state !== 'decided') throw new DecisionTooLate();
      throw new GatewayError('validation_failed', 'The authorization id is another card\'s', { invalidParams: [{ name: 'authorization.id', reason: 'is already another card\'s authorization' }] });
    }
    if (row?.state === 'decided' && row.decision) return typeof row.decision === 'string' ? (JSON.parse(row.decision) as AuthorizationDecision) : row.decision;
    if (row?.state === 'deciding' && row.expired) {
      const taken = await claimAndRead(
        db,
        hints,
        `UPDATE authorization_decisions SET claim_token = $2, transaction_id = $3, lease_until = $4::timestamptz
          WHERE authorization_id = $1 AND state = 'deciding' AND lease_until < now() RETURNING 1`,
        [request.id, token, request.transactionId, leaseUntil, request.cardId],
        5,
        request.at,
        token,
        'authorization-takeover',
        undefined,
        request.token?.reference
      );
      if (taken.claimed) return taken;
    }
    if (now() + WAIT_STEP_MS >= answerBy) throw new DecisionTooLate();
    await sleep(WAIT_STEP_MS);
  }
}

/** A claim's token: what fences its holder's recording (a takeover draws a new one). */
export function newClaimToken(): string {
  return crypto.randomBytes(12).toString('hex');
}
