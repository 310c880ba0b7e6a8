/**
 * The tokenization phase of `npm run bench` (docs/performance.md, "Tokenization decisions"; issue 35):
 *
 * 1. the processor's signed tokenization request (`POST <notifications listener>/upstream-notifications/processing/tokenizations`,
 *    docs/upstreams.md 10.3, signed as the authorization request) at a fixed 100 per second, open loop
 *    (bench/authorizations.ts's client), each with a new tokenization id on a pool of ACTIVE cards,
 *    the network's verdict `approve`: first with no partner endpoint enrolled for tokenizations (the
 *    card's state, the wallet controls, the network's verdict: the client's latency is the gateway's
 *    own time), then with the loopback endpoint (bench/decision-endpoint.ts, in its own process,
 *    answering `{"decision":"approve"}`) enrolled with `requestTypes: ["tokenization.request"]`:
 *    the gateway's own time is the client's latency less the partner's latency the gateway recorded
 *    with the decision (`tokenization_decisions.decision.partnerLatencyMs`), and, the stricter
 *    reading, less the endpoint's own handling time only;
 * 2. the cascade: cards with 10 active tokens each, made as a network makes them (the processing
 *    sandbox's `POST /__sandbox/tokenizations`, 10.9, which asks the gateway for each decision, so the
 *    processor knows every token the cascade then suspends), then, card by card,
 *    `POST /cards/{id}/lock` and the time from the lock's answer until all 10 tokens read `suspended`
 *    in the gateway's record (the partner's view: `GET /cards/{id}/tokens` shows that row's status,
 *    checked for every card at the end). The lock's answer never waits for the tokens
 *    (gateway/tokens/cascade.ts): the card change's transaction holds the tokens for the card's
 *    state and queues one `suspend` per token in the outbox; after the commit the outbox sends them
 *    to the processor one after another, and each token reads `suspended` once the processor's
 *    answer to its operation is applied (gateway/tokens/operations.ts). So the figure is the
 *    outbox's sending, the processor's 10 answers, and their recordings.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import { Client } from 'pg';
import { upstreamSignature } from '../sandbox/shared/notifier';
import { SANDBOX_TOKEN_REQUESTOR_IDS } from '../sandbox/processing/tokens';
import type { WalletProvider } from '../gateway/shapes/token';
import { endpointFigures, openLoop, startDecisionEndpoint, type DecisionPhaseInput } from './authorizations';
import { cpuTimeMs } from './processes';
import { json, percentile, QUERY_COUNT_EVERY_MS, round2 } from './stats';

const PATH = '/upstream-notifications/processing/tokenizations';
/** The fixed rate of the latency measurements (the target is stated at it). */
export const TOKENIZATION_RATE = 100;
/** Tokens per card of the cascade, and the time the target allows them to read `suspended`. */
export const CASCADE_TOKENS_PER_CARD = 10;
export const CASCADE_TARGET_MS = 1000;
/** The longest the bench waits for a card's tokens to read `suspended` before it counts the card as not done. */
const CASCADE_GIVE_UP_MS = 30_000;
const WALLETS: readonly WalletProvider[] = ['apple_pay', 'google_pay', 'samsung_pay', 'merchant'];

/** The decision phase's input (`requests` per latency round: default 1,000, the smoke 20), and the cascade's. */
export interface TokenizationPhaseInput extends DecisionPhaseInput {
  /** The processing sandbox (its control routes, 10.9). */
  processing: string;
  /** The card's expiry date, as the lock's body names it. */
  expDate: string;
  log: (message: string) => void;
}

export interface TokenizationLatency {
  samples: number;
  rate: number;
  /** The client's latency (the processor's view), ms. */
  p50Ms: number;
  p95Ms: number;
  p99Ms: number;
  maxMs: number;
  /** Answers other than 200 `{"decision":"approve"}`, and requests with no answer. */
  errors: number;
  /** Gateway CPU per decision at this rate (µs). */
  cpuUsPerDecision: number;
  /** Statements the gateway sent per decision (bench/count-queries; its background work included). */
  queriesPerDecision: number;
}

export interface TokenizationResult {
  /** The machine's 1-minute load average at the phase's start and end (a shared machine: docs/performance.md). */
  loadAverage: { start: number; end: number };
  cards: number;
  /** No endpoint enrolled for tokenizations: the client's latency is the gateway's own time. */
  withoutEndpoint: TokenizationLatency;
  withEndpoint: TokenizationLatency & {
    /** What the gateway recorded as the partner's latency (`partnerLatencyMs`, whole ms). */
    partnerLatencyP50Ms: number;
    partnerLatencyP99Ms: number;
    endpointHandlingP50Ms: number;
    endpointHandlingP99Ms: number;
    endpointCalls: number;
    /** The gateway's own time: the client's latency less the partner's latency recorded with the decision, decision by decision. */
    ownP50Ms: number;
    ownP95Ms: number;
    ownP99Ms: number;
    /** The client's latency less the endpoint's own handling only (the partner call's HTTP exchange counted as the gateway's). */
    beyondEndpointP50Ms: number;
    beyondEndpointP95Ms: number;
    beyondEndpointP99Ms: number;
  };
  /** Recorded decisions by stage: `decision` (and `declineReason`) and `decidedBy`. */
  mix: Record<string, Record<string, number>>;
  cascade: {
    cards: number;
    tokensPerCard: number;
    /** From the lock's answer until every token of the card reads `suspended`, ms. */
    p50Ms: number;
    p95Ms: number;
    p99Ms: number;
    maxMs: number;
    /** The lock's own answer time at the client, ms. */
    lockP50Ms: number;
    lockP99Ms: number;
    /** Cards whose tokens did not all read `suspended` within the bench's wait (30 s). */
    notSuspended: number;
    /** Cards whose `GET /cards/{id}/tokens` showed all 10 `suspended` with `suspendedBy: card_state` at the end. */
    partnerViewSuspended: number;
  };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const sorted = (values: number[]) => [...values].sort((a, b) => a - b);

export async function tokenizationPhase(input: TokenizationPhaseInput): Promise<TokenizationResult> {
  const { gateway, notifyBase, secret, log } = input;
  const rate = TOKENIZATION_RATE;
  const loadAtStart = os.loadavg()[0]!;
  const pg = new Client({ connectionString: input.dbUrl });
  await pg.connect();
  const endpoint = await startDecisionEndpoint();
  // The processor asks the gateway about the cascade's tokenizations (10.9): its notify target is the
  // gateway's listener for this phase (the bench's sandbox starts with none; removed at the end).
  await json(`${input.processing}/__sandbox/notify-target`, { method: 'PUT', body: JSON.stringify({ url: notifyBase, secret }) });
  try {
    // An endpoint an earlier phase left (the authorization phase's) decides no tokenization of this
    // phase's first round: none is enrolled until the second.
    await fetch(`${input.partnerApi}/authorization-endpoint`, { method: 'DELETE', headers: await input.auth() }).then((r) => r.arrayBuffer());

    const poolSize = input.smoke ? 2 : 32;
    const cascadeCards = input.smoke ? 5 : 100;
    log(`tokenizations: ${poolSize} cards for the decisions, ${cascadeCards} for the cascade...`);
    const pool: string[] = [];
    for (let i = 0; i < poolSize; i++) pool.push(await input.newCard());
    const cascade: string[] = [];
    for (let i = 0; i < cascadeCards; i++) cascade.push(await input.newCard());

    const run = crypto.randomBytes(4).toString('hex');
    let seq = 0;
    const tokenExpDate = `11/${new Date().getUTCFullYear() + 3}`;
    /** The next request body: a new tokenization id and token reference, the pool's cards and the wallets in turn. */
    const nextBody = (stage: string): { id: string; raw: string } => {
      const i = seq++;
      const id = `tkz_${run}_${stage}_${i}`;
      const walletProvider = WALLETS[i % WALLETS.length]!;
      const at = new Date().toISOString();
      const raw = JSON.stringify({
        id,
        type: 'tokenization.request',
        occurredAt: at,
        tokenization: {
          id,
          tokenReference: `tref_${crypto.randomBytes(12).toString('hex')}`,
          cardId: pool[i % pool.length],
          walletProvider,
          tokenRequestorId: SANDBOX_TOKEN_REQUESTOR_IDS[walletProvider],
          last4: String(1000 + (i % 9000)),
          tokenExpDate,
          device: walletProvider === 'merchant' ? { type: 'other' } : { type: 'phone', name: 'Bench phone', ipCountry: 'DE' },
          networkVerdict: { decision: 'approve', riskScore: 1, reasons: [] },
          at,
        },
      });
      return { id, raw };
    };

    /** The gateway's statement count, once bench/count-queries has written it (every QUERY_COUNT_EVERY_MS). */
    const queries = async (): Promise<number> => {
      await sleep(QUERY_COUNT_EVERY_MS + 50);
      return Number(fs.readFileSync(input.queryCountFile, 'utf8')) || 0;
    };
    /** The latency of each decision answered 200, by tokenization id. */
    const latencyById = new Map<string, number>();
    /** `count` tokenization requests at `at` per second, open loop: latency at the client, ms. */
    const fixedRate = async (stage: string, count: number, at = rate): Promise<TokenizationLatency> => {
      const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
      const url = new URL(`${notifyBase}${PATH}`);
      const latencies: number[] = [];
      let errors = 0;
      const send = (): Promise<void> =>
        new Promise((resolve) => {
          const { id, raw } = nextBody(stage);
          const headers = { 'content-type': 'application/json', 'upstream-notification-id': id, 'upstream-signature': upstreamSignature(secret, raw) };
          const started = performance.now();
          const req = http.request({ host: url.hostname, port: url.port, path: url.pathname, method: 'POST', agent, headers }, (res) => {
            const chunks: Buffer[] = [];
            res.on('data', (chunk: Buffer) => chunks.push(chunk));
            res.on('end', () => {
              const took = performance.now() - started;
              let approved = false;
              try {
                approved = res.statusCode === 200 && (JSON.parse(Buffer.concat(chunks).toString()) as { decision?: string }).decision === 'approve';
              } catch {
                approved = false;
              }
              if (approved) {
                latencies.push(took);
                latencyById.set(id, took);
              } else errors += 1;
              resolve();
            });
          });
          req.on('error', () => {
            errors += 1;
            resolve();
          });
          req.end(raw);
        });
      const queriesBefore = await queries();
      const cpuBefore = cpuTimeMs(gateway.child.pid!);
      await openLoop(count, at, send);
      const cpuMs = cpuTimeMs(gateway.child.pid!) - cpuBefore;
      const sent = (await queries()) - queriesBefore;
      agent.destroy();
      const s = sorted(latencies);
      return {
        samples: s.length,
        rate: at,
        p50Ms: round2(percentile(s, 50)),
        p95Ms: round2(percentile(s, 95)),
        p99Ms: round2(percentile(s, 99)),
        maxMs: round2(s[s.length - 1] ?? 0),
        errors,
        cpuUsPerDecision: Math.round((cpuMs * 1000) / Math.max(1, count)),
        queriesPerDecision: round2(sent / Math.max(1, count)),
      };
    };

    const samples = input.smoke ? Math.min(input.requests ?? 20, 20) : Math.min(input.requests ?? 1000, 3000);
    // Not measured: the route's first requests compile its code paths (the smoke skips it).
    const warmup = input.smoke ? 0 : 500;
    if (warmup > 0) {
      log(`tokenizations: warm-up (${warmup} decisions)...`);
      await fixedRate('warmup', warmup, 250);
    }
    log(`tokenizations: ${samples} decisions at ${rate}/s, no endpoint...`);
    const withoutEndpoint = await fixedRate('network', samples);

    log(`tokenizations: loopback decision endpoint, ${samples} decisions at ${rate}/s...`);
    await json(`${input.partnerApi}/authorization-endpoint`, {
      method: 'POST',
      headers: await input.auth(),
      body: JSON.stringify({ url: endpoint.url, timeoutMs: 1000, requestTypes: ['tokenization.request'] }),
    });
    // The endpoint's path warmed as the first round's was, and the sockets to the endpoint opened.
    if (warmup > 0) await fixedRate('warmupendpoint', warmup, 250);
    const callsBefore = await endpoint.calls();
    const endpointRound = await fixedRate('endpoint', samples);
    const calls = await endpoint.handlingFrom(callsBefore);
    const handling = sorted(calls.handling);
    const recorded = (
      await pg.query<{ id: string; ms: number }>(
        "SELECT tokenization_id AS id, (decision->>'partnerLatencyMs')::float8 AS ms FROM tokenization_decisions WHERE tokenization_id LIKE $1 AND decision ? 'partnerLatencyMs'",
        [`tkz\\_${run}\\_endpoint\\_%`]
      )
    ).rows;
    const partnerLatencies = sorted(recorded.map((r) => r.ms));
    const own = sorted(
      recorded.flatMap((r) => {
        const took = latencyById.get(r.id);
        return took === undefined ? [] : [Math.max(0, took - r.ms)];
      })
    );
    const beyondEndpoint = sorted(
      calls.ids.flatMap((id, i) => {
        const took = latencyById.get(id);
        return took === undefined ? [] : [Math.max(0, took - calls.handling[i]!)];
      })
    );
    await fetch(`${input.partnerApi}/authorization-endpoint`, { method: 'DELETE', headers: await input.auth() }).then((r) => r.arrayBuffer());

    const rows = (
      await pg.query<{ stage: string; outcome: string; decided_by: string; n: number }>(
        `SELECT split_part(tokenization_id, '_', 3) AS stage, decision->>'decision' || coalesce(':' || (decision->>'declineReason'), '') AS outcome,
                decision->>'decidedBy' AS decided_by, count(*)::int AS n
           FROM tokenization_decisions WHERE tokenization_id LIKE $1 GROUP BY 1, 2, 3 ORDER BY 1, 2, 3`,
        [`tkz\\_${run}\\_%`]
      )
    ).rows;
    const mix: Record<string, Record<string, number>> = {};
    for (const row of rows) {
      const stage = (mix[row.stage] ??= {});
      stage[row.outcome] = (stage[row.outcome] ?? 0) + row.n;
      stage[`decidedBy:${row.decided_by}`] = (stage[`decidedBy:${row.decided_by}`] ?? 0) + row.n;
    }

    log(`tokenizations: the cascade, ${cascadeCards} cards with ${CASCADE_TOKENS_PER_CARD} tokens each (the processor's tokenizations)...`);
    const tokenize = async (cardKey: string, i: number): Promise<void> => {
      const body = JSON.stringify({ cardId: cardKey, walletProvider: WALLETS[i % WALLETS.length], networkVerdict: 'approve' });
      // A new card reaches the processor with its `card_created`, sent after the card's commit: until then 404 CARD_NOT_FOUND.
      const deadline = performance.now() + 30_000;
      for (;;) {
        const res = await fetch(`${input.processing}/__sandbox/tokenizations`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
        const text = await res.text();
        if (res.status === 201) {
          const decision = (JSON.parse(text) as { decision: { decision: string } }).decision.decision;
          if (decision !== 'approve') throw new Error(`tokenization of ${cardKey}: the gateway answered ${decision}`);
          return;
        }
        if (res.status !== 404 || performance.now() > deadline) throw new Error(`POST /__sandbox/tokenizations → ${res.status} ${text}`);
        await sleep(20);
      }
    };
    // Four cards at a time, each card's tokens one after another.
    const queue = [...cascade];
    await Promise.all(
      Array.from({ length: 4 }, async () => {
        for (let cardKey = queue.shift(); cardKey !== undefined; cardKey = queue.shift()) {
          for (let i = 0; i < CASCADE_TOKENS_PER_CARD; i++) await tokenize(cardKey, i);
        }
      })
    );
    const counted = (
      await pg.query<{ n: number }>("SELECT count(*)::int AS n FROM tokens WHERE card_key = ANY($1) AND status = 'active'", [cascade])
    ).rows[0]!.n;
    if (counted !== cascadeCards * CASCADE_TOKENS_PER_CARD) throw new Error(`the cascade's cards hold ${counted} active tokens, not ${cascadeCards * CASCADE_TOKENS_PER_CARD}`);

    const lockBody = JSON.stringify({ expDate: input.expDate, reason: 'bench' });
    const suspendedAfter: number[] = [];
    const lockTimes: number[] = [];
    let notSuspended = 0;
    for (const cardKey of cascade) {
      const headers = await input.auth();
      const sent = performance.now();
      const lock = await fetch(`${input.partnerApi}/cards/${cardKey}/lock`, { method: 'POST', headers, body: lockBody });
      const text = await lock.text();
      const answered = performance.now();
      if (lock.status !== 200) throw new Error(`POST /cards/${cardKey}/lock → ${lock.status} ${text}`);
      lockTimes.push(answered - sent);
      // The partner's view of each token is its row: polled every 5 ms, the poll's own time included.
      for (;;) {
        const n = (await pg.query<{ n: number }>("SELECT count(*)::int AS n FROM tokens WHERE card_key = $1 AND status = 'suspended'", [cardKey])).rows[0]!.n;
        const now = performance.now();
        if (n === CASCADE_TOKENS_PER_CARD) {
          suspendedAfter.push(now - answered);
          break;
        }
        if (now - answered > CASCADE_GIVE_UP_MS) {
          notSuspended += 1;
          break;
        }
        await sleep(5);
      }
    }
    let partnerViewSuspended = 0;
    for (const cardKey of cascade) {
      const view = (await json(`${input.partnerApi}/cards/${cardKey}/tokens`, { headers: await input.auth() })) as { data: { status: string; suspendedBy?: string }[] };
      if (view.data.length === CASCADE_TOKENS_PER_CARD && view.data.every((t) => t.status === 'suspended' && t.suspendedBy === 'card_state')) partnerViewSuspended += 1;
    }
    const after = sorted(suspendedAfter);
    const locks = sorted(lockTimes);

    return {
      loadAverage: { start: round2(loadAtStart), end: round2(os.loadavg()[0]!) },
      cards: pool.length,
      withoutEndpoint,
      withEndpoint: {
        ...endpointRound,
        ...endpointFigures(partnerLatencies, handling, own, beyondEndpoint),
      },
      mix,
      cascade: {
        cards: cascade.length,
        tokensPerCard: CASCADE_TOKENS_PER_CARD,
        p50Ms: round2(percentile(after, 50)),
        p95Ms: round2(percentile(after, 95)),
        p99Ms: round2(percentile(after, 99)),
        maxMs: round2(after[after.length - 1] ?? 0),
        lockP50Ms: round2(percentile(locks, 50)),
        lockP99Ms: round2(percentile(locks, 99)),
        notSuspended,
        partnerViewSuspended,
      },
    };
  } finally {
    await fetch(`${input.processing}/__sandbox/notify-target`, { method: 'DELETE' }).then((r) => r.arrayBuffer()).catch(() => undefined);
    await endpoint.close();
    await pg.end();
  }
}

/** The tokenization phase's lines of the printed summary. */
export function tokenizationLines(t: TokenizationResult): string {
  const w = t.withoutEndpoint;
  const e = t.withEndpoint;
  const c = t.cascade;
  return [
    `tokenizations (${t.cards} cards, a new tokenization id each request; load average ${t.loadAverage.start} to ${t.loadAverage.end}) at ${w.rate}/s, no endpoint: p50 ${w.p50Ms} ms, p95 ${w.p95Ms} ms, p99 ${w.p99Ms} ms, max ${w.maxMs} ms (${w.samples} decisions, ${w.errors} errors, CPU ${w.cpuUsPerDecision} µs and ${w.queriesPerDecision} statements each)`,
    `  at ${e.rate}/s, loopback partner endpoint: at the client p50 ${e.p50Ms} ms, p95 ${e.p95Ms} ms, p99 ${e.p99Ms} ms, max ${e.maxMs} ms (${e.samples} decisions, ${e.errors} errors, CPU ${e.cpuUsPerDecision} µs and ${e.queriesPerDecision} statements each); partner latency as recorded p50 ${e.partnerLatencyP50Ms} ms, p99 ${e.partnerLatencyP99Ms} ms; endpoint's own handling p50 ${e.endpointHandlingP50Ms} ms, p99 ${e.endpointHandlingP99Ms} ms (${e.endpointCalls} calls); the gateway's own time (less the partner's as recorded) p50 ${e.ownP50Ms} ms, p95 ${e.ownP95Ms} ms, p99 ${e.ownP99Ms} ms; less the endpoint's own handling only p50 ${e.beyondEndpointP50Ms} ms, p99 ${e.beyondEndpointP99Ms} ms`,
    `  cascade: ${c.cards} cards of ${c.tokensPerCard} tokens locked one at a time; lock's answer to every token suspended p50 ${c.p50Ms} ms, p95 ${c.p95Ms} ms, p99 ${c.p99Ms} ms, max ${c.maxMs} ms (the lock itself p50 ${c.lockP50Ms} ms, p99 ${c.lockP99Ms} ms); ${c.notSuspended} cards not suspended within 30 s; ${c.partnerViewSuspended} of ${c.cards} read all suspended (card_state) by the partner route`,
  ].join('\n');
}

/** The tokenization targets (issue 35's "Done when"), met or not. */
export function tokenizationTargets(t: TokenizationResult): Record<string, boolean> {
  return {
    [`tokenizations: p99 <= 20 ms at ${t.withoutEndpoint.rate}/s, no endpoint (the gateway's own time)`]: t.withoutEndpoint.p99Ms <= 20 && t.withoutEndpoint.samples > 0,
    [`tokenizations: p99 <= 20 ms at ${t.withEndpoint.rate}/s, loopback partner endpoint, the gateway's own time (less the partner's)`]: t.withEndpoint.ownP99Ms <= 20 && t.withEndpoint.samples > 0,
    [`tokenizations: every request answered 200 approve`]: t.withoutEndpoint.errors === 0 && t.withEndpoint.errors === 0,
    [`tokenizations: the cascade suspends ${t.cascade.tokensPerCard} tokens of a card within ${CASCADE_TARGET_MS} ms of the lock's answer (p99 over ${t.cascade.cards} cards)`]:
      t.cascade.p99Ms <= CASCADE_TARGET_MS && t.cascade.notSuspended === 0 && t.cascade.partnerViewSuspended === t.cascade.cards,
  };
}
