import { setTimeout as sleep } from 'node:timers/promises';
import { CLAIM_COMMIT_COLUMN, newClaimToken } from '../authorizations/claim';
import { ANSWER_MARGIN_MS, DecisionTooLate, type Clock } from '../authorizations/deadline';
import { endpointTargetColumn, endpointTargetOf, type AuthorizationEndpointTarget } from '../authorizations/endpoint-store';
import { applicableControlsColumn, applicableControlsOf, type ApplicableSpendControls } from '../authorizations/spend-controls';
import { CARD_COLUMNS, toCard, type Card, type CardRow } from '../cards/card-store';
import type { Database } from '../db/database';
import { GatewayError } from '../errors';
import { newTokenId } from '../ids';
import type { TokenizationRequest } from './contract-stub';
import type { TokenizationCard, TokenizationDecision } from './decision';

/**
 * The claim of a tokenization id (docs/plans/issue-35.md, "Exactly once"): the authorization
 * claim's protocol (gateway/authorizations/claim.ts) on `tokenization_decisions`, reused, not its
 * statements. Tokenizations are rare (a card is added to a wallet once), so they always take the
 * protocol's plain path: claim first (one autocommitted statement that also reads everything the
 * decision needs), then record (./record.ts). A repeat, on this instance or another, waits for the
 * holder's decision and answers it; a claim whose lease ran out is taken over with a new claim
 * token, which fences the old holder's late recording out; the token id the first claim drew is
 * kept (the partner's endpoint may have been told it).
 */

/** How often a repeat looks at the first request's decision. */
const WAIT_STEP_MS = 10;

/** A claim this request holds, with what the decision reads beside it (in the claim's statement). */
export interface TokenizationClaim {
  /** The claim token that fences this holder's recording. */
  token: string;
  /** The `_id` the token gets, whatever the decision (drawn by the first claim). */
  tokenId: string;
  card: TokenizationCard | undefined;
  tokenizeBeforeActivation: boolean;
  controls: ApplicableSpendControls;
  /** The card's partner's decision endpoint (any status, any request types), with its live secrets (sealed); undefined: none. */
  endpoint: AuthorizationEndpointTarget | undefined;
  /** The card as events carry it (the endpoint's request, the token's events); undefined for an unknown card. */
  eventCard: Card | undefined;
}

/** The card's columns as events carry them ({@link CARD_COLUMNS}), as one jsonb value. */
const EVENT_CARD_JSON = `jsonb_build_object(${CARD_COLUMNS.split(',')
  .map((column) => `'${column.trim()}', c.${column.trim()}`)
  .join(', ')})`;

type EventCardJson = (Omit<CardRow, 'created_at'> & { created_at: string }) | string;

/** The reads of every claim statement, after its claim CTE (`claim`, `RETURNING token_id`); `$cardParam` the card key. */
function claimStatement(claimSql: string, cardParam: number): string {
  return `WITH claim AS (${claimSql})
    SELECT (SELECT token_id FROM claim) AS claimed_token_id, ${CLAIM_COMMIT_COLUMN},
           c.partner_id, c.individual_id, c.tenant_id, c.status, c.status_code, p.tokenize_before_activation,
           ${applicableControlsColumn('c')} AS controls,
           ${endpointTargetColumn('c')} AS endpoint,
           CASE WHEN c.card_key IS NOT NULL THEN ${EVENT_CARD_JSON} END AS event_card
      FROM (SELECT 1) AS one LEFT JOIN cards c ON c.card_key = $${cardParam} LEFT JOIN partners p ON p.id = c.partner_id`;
}

interface ClaimRow {
  claimed_token_id: string | null;
  partner_id: string | null;
  individual_id: string | null;
  tenant_id: string | null;
  status: string | null;
  status_code: string | null;
  tokenize_before_activation: boolean | null;
  controls: Parameters<typeof applicableControlsOf>[0];
  endpoint: unknown;
  event_card: EventCardJson | null;
}

function claimOf(row: ClaimRow, cardKey: string, token: string): TokenizationClaim {
  const card: TokenizationCard | undefined =
    row.partner_id === null
      ? undefined
      : { cardKey, partnerId: row.partner_id, individualId: row.individual_id, tenantId: row.tenant_id, status: row.status!, statusCode: row.status_code! };
  let eventCard: Card | undefined;
  if (row.event_card !== null) {
    const cardRow = typeof row.event_card === 'string' ? (JSON.parse(row.event_card) as Exclude<EventCardJson, string>) : row.event_card;
    eventCard = toCard({ ...cardRow, created_at: new Date(cardRow.created_at) } as CardRow);
  }
  return {
    token,
    tokenId: row.claimed_token_id!,
    card,
    tokenizeBeforeActivation: row.tokenize_before_activation === true,
    controls: applicableControlsOf(row.controls),
    endpoint: endpointTargetOf(row.endpoint),
    eventCard,
  };
}

/**
 * Claims the tokenization id for this request, or returns the decision another request recorded for
 * it (`decided`, with the token id it was recorded with). The lease lasts until the processor's
 * deadline (`answerBy` and the margin), an instant counted on the database's clock. A repeat naming
 * another card than a decided claim is refused (400: a tokenization id is one card's); while that
 * claim is still deciding, {@link DecisionTooLate} (503) at once, since the claim may not be durable
 * yet. {@link DecisionTooLate} when `answerBy` comes first. Never inside a transaction (the claim's
 * commit is relaxed for its own statement only: gateway/authorizations/claim.ts, `CLAIM_COMMIT_COLUMN`).
 */
export async function claimTokenization(
  db: Database,
  request: Pick<TokenizationRequest, 'id' | 'cardId'>,
  answerBy: number,
  now: Clock
): Promise<TokenizationClaim | { decided: TokenizationDecision; tokenId: string }> {
  const token = newClaimToken();
  const leaseUntil = new Date(answerBy + ANSWER_MARGIN_MS).toISOString();
  const first = (
    await db.named<ClaimRow>(
      'tokenization-claim',
      claimStatement(
        `INSERT INTO tokenization_decisions (tokenization_id, token_id, card_key, state, claim_token, lease_until)
         VALUES ($1, $2, $3, 'deciding', $4, $5::timestamptz) ON CONFLICT (tokenization_id) DO NOTHING RETURNING token_id`,
        3
      ),
      [request.id, newTokenId(), request.cardId, token, leaseUntil]
    )
  ).rows[0]!;
  if (first.claimed_token_id !== null) return claimOf(first, request.cardId, token);
  for (;;) {
    const row = (
      await db.query<{ state: string; card_key: string; token_id: string; decision: TokenizationDecision | string | null; expired: boolean }>(
        'SELECT state, card_key, token_id, decision, lease_until < now() AS expired FROM tokenization_decisions WHERE tokenization_id = $1',
        [request.id]
      )
    ).rows[0];
    if (row && row.card_key !== request.cardId) {
      // As for authorizations: 400 only once the other card's decision is recorded (durable); before, 503.
      if (row.state !== 'decided') throw new DecisionTooLate();
      throw new GatewayError('validation_failed', "The tokenization id is another card's", { invalidParams: [{ name: 'tokenization.id', reason: "is already another card's tokenization" }] });
    }
    if (row?.state === 'decided' && row.decision) {
      return { decided: typeof row.decision === 'string' ? (JSON.parse(row.decision) as TokenizationDecision) : row.decision, tokenId: row.token_id };
    }
    if (row?.state === 'deciding' && row.expired) {
      const taken = (
        await db.named<ClaimRow>(
          'tokenization-takeover',
          claimStatement(
            `UPDATE tokenization_decisions SET claim_token = $2, lease_until = $3::timestamptz
              WHERE tokenization_id = $1 AND state = 'deciding' AND lease_until < now() RETURNING token_id`,
            4
          ),
          [request.id, token, leaseUntil, request.cardId]
        )
      ).rows[0]!;
      if (taken.claimed_token_id !== null) return claimOf(taken, request.cardId, token);
    }
    if (now() + WAIT_STEP_MS >= answerBy) throw new DecisionTooLate();
    // A row deleted meanwhile (a claim deleted by hand, retention of a long-decided id): claim it afresh.
    if (!row) return claimTokenization(db, request, answerBy, now);
    await sleep(WAIT_STEP_MS);
  }
}
