import crypto from 'node:crypto';
import type { Queryable } from '../../../../gateway/db/database';
import { GatewayError } from '../../../../gateway/errors';
import { newTokenId } from '../../../../gateway/ids';
import type { TokenStatus, TokenSuspendedBy, WalletProvider } from '../../../../gateway/shapes/token';
import type { UpstreamToken } from '../../../../gateway/tokens/contract-stub';
import type { TokenAction, TokenProcessor } from '../../../../gateway/tokens/operations';

/**
 * Fixtures of the token tests: tokens written as the tokenization's recording writes them, and a
 * stand-in of the processor's token service (docs/upstreams.md 10.6 and 10.7: its transitions, its
 * versions, its operation-id book and its refusals) behind the `TokenProcessor` interface that
 * gateway/tokens/operations.ts calls. The stand-in replaces only the upstream, never the database;
 * the processing sandbox's own routes are tested over HTTP by test/sandbox/tokens.test.ts and the
 * whole path end to end by test/e2e/token-cascade.test.ts.
 */

export interface TokenFixture {
  id: string;
  reference: string;
  cardKey: string;
}

/** Inserts a token of `cardKey` (its partner's) in `status`, and gives the processor stand-in the same token. */
export async function insertToken(
  db: Queryable,
  processor: ProcessorStandIn | undefined,
  card: { cardKey: string; partnerId: string },
  status: TokenStatus,
  options: { suspendedBy?: TokenSuspendedBy; hold?: boolean; walletProvider?: WalletProvider } = {}
): Promise<TokenFixture> {
  const id = newTokenId();
  const reference = `tref_${crypto.randomBytes(12).toString('hex')}`;
  const walletProvider = options.walletProvider ?? 'apple_pay';
  const at = new Date().toISOString();
  await db.query(
    `INSERT INTO tokens (id, partner_id, card_key, processor_ref, tokenization_id, wallet_provider, token_requestor_id, last4, token_exp_date, device, status,
                         suspended_by, card_state_hold, history, version)
     VALUES ($1, $2, $3, $4, $5, $6, '50110030273', '4821', '11/2029', '{"type":"phone"}'::jsonb, $7, $8, $9, $10::jsonb, 1)`,
    [id, card.partnerId, card.cardKey, reference, `tkz_${reference}`, walletProvider, status, options.suspendedBy ?? null, options.hold ?? false, JSON.stringify([{ status, at, by: 'network' }])]
  );
  processor?.tokens.set(reference, {
    tokenReference: reference,
    cardKey: card.cardKey,
    tokenizationId: `tkz_${reference}`,
    walletProvider,
    tokenRequestorId: '50110030273',
    last4: '4821',
    tokenExpDate: '11/2029',
    device: { type: 'phone' },
    status,
    version: 1,
    createdAt: at,
    updatedAt: at,
  });
  return { id, reference, cardKey: card.cardKey };
}

/** One call the stand-in received. */
export interface ProcessorCall {
  kind: 'operation' | 'move' | 'get';
  reference?: string;
  cardKey?: string;
  action?: TokenAction;
  body?: unknown;
  operationId?: string;
}

const TRANSITIONS: Record<TokenAction, readonly TokenStatus[]> = {
  suspend: ['active', 'suspended'],
  resume: ['suspended', 'active'],
  deactivate: ['requested', 'pending_verification', 'active', 'suspended', 'deactivated'],
};

const TARGET: Record<TokenAction, TokenStatus> = { suspend: 'suspended', resume: 'active', deactivate: 'deactivated' };

function upstreamError(status: 404 | 409, upstreamCode: string): GatewayError {
  return new GatewayError(status === 404 ? 'not_found' : 'conflict', `The card processing system refused the request (${upstreamCode})`, { extensions: { upstream: 'processing', upstreamCode } });
}

/**
 * The processor's token service as 10.6 says it behaves: `suspend` from active (or suspended),
 * `resume` from suspended (or active), `deactivate` from anything but declined; a change one
 * `version` more, an unchanged state the same; an operation id answers its first result again.
 * `failNext` makes the next call throw what it is given (a timeout, a refusal).
 */
export class ProcessorStandIn implements TokenProcessor {
  readonly tokens = new Map<string, UpstreamToken>();
  readonly calls: ProcessorCall[] = [];
  private readonly answered = new Map<string, unknown>();
  failNext: Error | undefined;

  private fail(): void {
    const err = this.failNext;
    this.failNext = undefined;
    if (err) throw err;
  }

  async tokenOperation(_ctx: unknown, reference: string, action: TokenAction, body: { reason?: string; requestedBy: 'partner' | 'card_state' }, operationId: string): Promise<UpstreamToken> {
    this.calls.push({ kind: 'operation', reference, action, body, operationId });
    this.fail();
    const replay = this.answered.get(operationId);
    if (replay) return structuredClone(replay as UpstreamToken);
    const token = this.tokens.get(reference);
    if (!token) throw upstreamError(404, 'TOKEN_NOT_FOUND');
    if (!TRANSITIONS[action].includes(token.status)) throw upstreamError(409, 'TOKEN_TRANSITION_INVALID');
    if (token.status !== TARGET[action]) {
      token.status = TARGET[action];
      token.version += 1;
      token.updatedAt = new Date().toISOString();
    }
    this.answered.set(operationId, structuredClone(token));
    return structuredClone(token);
  }

  async moveTokens(_ctx: unknown, cardKey: string, body: { toCardKey: string; reason: 'replaced' | 'reissued' }, operationId: string): Promise<{ moved: UpstreamToken[] }> {
    this.calls.push({ kind: 'move', cardKey, body, operationId });
    this.fail();
    const replay = this.answered.get(operationId);
    if (replay) return structuredClone(replay as { moved: UpstreamToken[] });
    const moved: UpstreamToken[] = [];
    for (const token of this.tokens.values()) {
      if (token.cardKey === cardKey && (token.status === 'active' || token.status === 'suspended')) {
        token.cardKey = body.toCardKey;
        token.version += 1;
        moved.push(structuredClone(token));
      }
    }
    this.answered.set(operationId, { moved });
    return { moved };
  }

  async getToken(_ctx: unknown, reference: string): Promise<UpstreamToken> {
    this.calls.push({ kind: 'get', reference });
    this.fail();
    const token = this.tokens.get(reference);
    if (!token) throw upstreamError(404, 'TOKEN_NOT_FOUND');
    return structuredClone(token);
  }

  /** A change the network made on its own (the sandbox's network-status). */
  set(reference: string, status: TokenStatus): void {
    const token = this.tokens.get(reference)!;
    token.status = status;
    token.version += 1;
  }
}

/** A token's row as the tests read it. */
export interface TokenState {
  status: TokenStatus;
  suspended_by: TokenSuspendedBy | null;
  card_state_hold: boolean;
  card_key: string;
  version: number;
  history: { status: string; by: string; reason?: string }[];
}

export async function tokenState(db: Queryable, id: string): Promise<TokenState> {
  return (await db.query<TokenState>('SELECT status, suspended_by, card_state_hold, card_key, version, history FROM tokens WHERE id = $1', [id])).rows[0];
}

/** The token operations queued for a card change's request, in queue order. */
export async function queued(db: Queryable, requestId: string): Promise<{ id: string; kind: string; payload: any }[]> {
  return (await db.query<{ id: string; kind: string; payload: any }>("SELECT id, kind, payload FROM outbox_events WHERE request_id = $1 AND kind LIKE 'processing.token_%' ORDER BY id", [requestId])).rows;
}
