/**
 * The authorization phase of `npm run bench` (docs/performance.md, "Authorization decisions"). The
 * processor's signed authorization request
 * (`POST <notifications listener>/upstream-notifications/processing/authorizations`, docs/upstreams.md
 * 6.10) against the bench's single-worker gateway, on cards that carry spend controls (MCC allow and
 * block lists, country allow and block lists, a maximum per transaction and two velocity rules with
 * limits no run reaches), each request with its own authorization and transaction id:
 *
 * 1. saturation, controls only, in rounds that alternate with S1 on the same gateway: decisions per
 *    second, the gateway's CPU per decision beside S1's CPU per request, PostgreSQL's CPU per decision
 *    (the backends of the bench database), and the statements the gateway sent per decision
 *    (bench/count-queries, preloaded). autocannon, whose `setupRequest` builds and signs each body;
 * 2. a fixed 200 decisions/s, controls only, then with a loopback partner decision endpoint (a
 *    node:http server in a process of its own, bench/decision-endpoint.ts, answering `{approved: true}` at once): latency at the client
 *    p50/p99, from a small open-loop client (node:http, keep-alive agent, a request sent every 5 ms
 *    whatever the earlier ones are doing), so that no slow answer delays the next request. With
 *    the endpoint: the partner's latency as the gateway recorded it (`authorization.partnerLatencyMs`)
 *    and the endpoint's own handling time;
 * 3. one more saturation round with the endpoint enrolled (informative; not in the smoke);
 * 4. the answer at the deadline, with both cores kept busy by two other processes (not
 *    in the smoke): the processor's view of every answer's time, 200 or 503, against its deadline
 *    (`AUTHORIZATION_DEADLINE_MS`, 2000 ms), at 20 decisions/s: first the endpoint hangs (its
 *    `timeoutMs` 1500, the longest), so each decision waits out the partner's whole share of the
 *    budget and is recorded at its end (the rate keeps the partner's cap of 32 calls in flight
 *    nearly full); then a table lock holds every recording, so each answer is the gateway's own
 *    503 at `answerBy`.
 *
 * The mix of outcomes is read back from the transactions the decisions recorded.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import { spawn } from 'node:child_process';
import http from 'node:http';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import autocannon from 'autocannon';
import { Client } from 'pg';
import { cpuByPid, cpuTimeMs, startNode, type BenchProcess } from './processes';
import { upstreamSignature } from '../sandbox/shared/notifier';
import { traceNow } from '../gateway/authorizations/decision-trace';
import { json, percentile, QUERY_COUNT_EVERY_MS, round2 } from './stats';

const PATH = '/upstream-notifications/processing/authorizations';
/**
 * The decision-time diagnostic (docs/performance.md "Diagnostics"): with BENCH_AUTHORIZATION_TRACE_DIR set,
 * the fixed-rate client writes each request's send and answer times (epoch ms) to client.jsonl there,
 * the loopback endpoint its request event and answer per authorization id to endpoint.jsonl, and this
 * process its event loop's delay each second (client.jsonl); the gateway writes gateway.jsonl.
 */
const TRACE_DIR = process.env.BENCH_AUTHORIZATION_TRACE_DIR;
const traceLines = new Map<string, string[]>();
const trace = (file: string, record: object) => {
  if (!TRACE_DIR) return;
  let lines = traceLines.get(file);
  if (!lines) traceLines.set(file, (lines = []));
  lines.push(JSON.stringify(record));
};
const flushTrace = () => {
  if (!TRACE_DIR) return;
  for (const [file, lines] of traceLines) fs.appendFileSync(path.join(TRACE_DIR, file), `${lines.join('\n')}\n`);
  traceLines.clear();
};
/** The fixed rate of the latency measurements by default (the latency target is stated at it; `--authorization-rate`). */
export const LATENCY_RATE = 200;

/**
 * The figures of a latency round with the loopback endpoint, from its samples (ms): the partner's
 * latency as the gateway recorded it, the endpoint's own handling, the gateway's own time (the
 * client's latency less the partner's as recorded) and the time beyond the endpoint's own handling.
 */
export function endpointFigures(partnerLatencies: number[], handling: number[], own: number[], beyondEndpoint: number[]) {
  return {
    partnerLatencyP50Ms: percentile(partnerLatencies, 50),
    partnerLatencyP99Ms: percentile(partnerLatencies, 99),
    endpointHandlingP50Ms: round2(percentile(handling, 50)),
    endpointHandlingP99Ms: round2(percentile(handling, 99)),
    endpointCalls: handling.length,
    ownP50Ms: round2(percentile(own, 50)),
    ownP95Ms: round2(percentile(own, 95)),
    ownP99Ms: round2(percentile(own, 99)),
    beyondEndpointP50Ms: round2(percentile(beyondEndpoint, 50)),
    beyondEndpointP95Ms: round2(percentile(beyondEndpoint, 95)),
    beyondEndpointP99Ms: round2(percentile(beyondEndpoint, 99)),
  };
}

/** What a phase of decisions the processor asks for (authorizations, tokenizations) is given. */
export interface DecisionPhaseInput {
  gateway: BenchProcess;
  /** The partner API, e.g. `http://127.0.0.1:<port>/api/partner`. */
  partnerApi: string;
  /** The notifications listener, `http://127.0.0.1:<notifyPort>`. */
  notifyBase: string;
  auth: () => Promise<Record<string, string>>;
  /** Issues one more card for the bench partner (ACTIVE); its card key. */
  newCard: () => Promise<string>;
  /** The bench database (its backends' CPU, the recorded decisions). */
  dbUrl: string;
  /** PROCESSING_NOTIFY_SECRET of the gateway. */
  secret: string;
  /** Where bench/count-queries writes the gateway's statement count. */
  queryCountFile: string;
  smoke: boolean;
  /** Requests per latency round. */
  requests?: number;
}

export interface AuthorizationPhaseInput extends DecisionPhaseInput {
  duration: number;
  connections: number;
  /** Decisions per second of the latency measurements (default {@link LATENCY_RATE}). */
  rate?: number;
  /** One S1 round on the same gateway: its CPU per request (µs). */
  s1Round: () => Promise<{ cpuUsPerRequest?: number }>;
  /** Starts (true) or stops (false) the gateway's CPU profile: around the first controls-only saturation round (`--profile A`). */
  profile?: (on: boolean) => Promise<void>;
  /** The same around the saturation round with the loopback endpoint (`--profile AE`). */
  profileEndpoint?: (on: boolean) => Promise<void>;
  log: (message: string) => void;
}

/** The spend controls every bench card carries. */
export const BENCH_CONTROLS = {
  maxAmountPerTransaction: 500,
  allowedMccs: ['5411', '5812', '5942', '4111', '5999'],
  blockedMccs: ['7995'],
  allowedCountries: ['DE', 'FR', 'NL', 'AT', 'BE', 'ES', 'IT'],
  blockedCountries: ['RU'],
  velocity: [
    { window: '1h', maxCount: 1_000_000 },
    { window: '24h', maxAmount: 1_000_000_000 },
  ],
};

export interface LatencyFigures {
  samples: number;
  rate: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  errors: number;
  /** Gateway CPU per decision at this rate (µs): higher than at saturation, where work batches. */
  cpuUsPerDecision: number;
}

/** Every answer's time at the client (the processor's view) while something keeps the decisions from an early answer. */
export interface DeadlineFigures {
  /** `endpoint`: the partner's endpoint hangs; `database`: every recording waits behind a table lock (the 503 of the gateway's own timer). */
  cause: 'endpoint' | 'database';
  samples: number;
  rate: number;
  /** Processes kept busy beside the gateway (each spinning on one core). */
  busyProcesses: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  /** Answers: the endpoint's default decision (200), or 503 `decision_unavailable` (the stand-in). */
  defaults: number;
  unavailable: number;
  /** Answers of another status, and requests with no answer (a connection error). */
  other: number;
  /** Answers at or past the processor's deadline, or never had: must be 0. */
  pastDeadline: number;
  deadlineMs: number;
}

export interface SaturationRound {
  decisions: number;
  decisionsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  errors: number;
  cpuUsPerDecision: number;
  postgresCpuUsPerDecision: number;
  queriesPerDecision: number;
  /** S1's CPU per request in the round before this one, same gateway. */
  s1CpuUsPerRequest?: number;
}

export interface AuthorizationResult {
  cards: number;
  connections: number;
  controls: typeof BENCH_CONTROLS;
  rounds: SaturationRound[];
  /** Medians over the rounds. */
  decisionsPerSecond: number;
  cpuUsPerDecision: number;
  s1CpuUsPerRequest: number;
  cpuVsS1: number;
  postgresCpuUsPerDecision: number;
  queriesPerDecision: number;
  latencyControlsOnly: LatencyFigures;
  latencyWithEndpoint: LatencyFigures & {
    /** What the gateway recorded as the partner's latency (`authorization.partnerLatencyMs`, whole ms). */
    partnerLatencyP50Ms: number;
    partnerLatencyP99Ms: number;
    /** The endpoint's own time, from its request event to its answer written. */
    endpointHandlingP50Ms: number;
    endpointHandlingP99Ms: number;
    endpointCalls: number;
    /**
     * The gateway's own time per decision: its latency at the client less the partner's latency the
     * gateway recorded for it (whole ms, so within half a millisecond), decision by decision.
     */
    ownP50Ms: number;
    ownP99Ms: number;
    /**
     * The client's latency less the endpoint's own handling time (request event to answer written,
     * in its own process), decision by decision: the partner call's HTTP exchange, which the
     * recorded partner latency includes, is counted here as the gateway's.
     */
    beyondEndpointP50Ms: number;
    beyondEndpointP99Ms: number;
  };
  /** Not in the smoke. */
  saturationWithEndpoint?: SaturationRound;
  /** Stage 4, by cause: a hanging endpoint, then the recordings held by the database; both cores busy (not in the smoke: no busy cores there). */
  deadline: DeadlineFigures[];
  /** Recorded transactions by stage: `approved` and each `declineReason`, and `decidedBy`. */
  mix: Record<string, Record<string, number>>;
  /** Requests answered 200 less the transactions recorded (0: each approved or declined answer recorded its transaction, and nothing more; see {@link AuthorizationResult.abandoned}). */
  unrecorded: number;
  /**
   * Requests a timed saturation round (`--duration`, no `--requests`) sent and left unanswered when
   * it ended (autocannon's sent less its completed): the gateway decides and records them all the
   * same (a decision stands whether or not the processor waited for it), so up to this many more
   * transactions than 200 answers are recorded. 0 with `--requests` (each round waits for every answer).
   */
  abandoned: number;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** `count` calls of `send` at `rate` per second, open loop (each on its schedule, whatever the earlier ones are doing); resolves when all have. */
export const openLoop = async (count: number, rate: number, send: () => Promise<void>): Promise<void> => {
  const pending: Promise<void>[] = [];
  const began = performance.now();
  for (let i = 0; i < count; i++) {
    const wait = began + (i * 1000) / rate - performance.now();
    if (wait > 0) await sleep(wait);
    pending.push(send());
  }
  await Promise.all(pending);
};
const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length === 0 ? 0 : sorted.length % 2 ? sorted[(sorted.length - 1) / 2]! : (sorted[sorted.length / 2 - 1]! + sorted[sorted.length / 2]!) / 2;
};



export async function authorizationPhase(input: AuthorizationPhaseInput): Promise<AuthorizationResult> {
  const { gateway, notifyBase, secret, log } = input;
  const rate = input.rate ?? LATENCY_RATE;
  /** Requests answered 200 (each must have recorded its transaction). */
  let answered = 0;
  let abandoned = 0;
  const pg = new Client({ connectionString: input.dbUrl });
  await pg.connect();
  const endpoint = await startDecisionEndpoint();
  try {
    // Cards: one decision lock and one velocity count per card, so the load spreads over several.
    const cardCount = input.smoke ? 2 : 32;
    log(`authorizations: ${cardCount} cards with spend controls...`);
    const cards: string[] = [];
    for (let i = 0; i < cardCount; i++) {
      const cardKey = await input.newCard();
      await json(`${input.partnerApi}/cards/${cardKey}/spend-controls`, { method: 'PUT', headers: await input.auth(), body: JSON.stringify(BENCH_CONTROLS) });
      cards.push(cardKey);
    }

    const run = crypto.randomBytes(4).toString('hex');
    let seq = 0;
    /**
     * The next request body: a distinct authorization and transaction id, the cards in turn, and one
     * purchase in 20 each outside the MCC lists, the country lists and the maximum amount.
     */
    const nextBody = (stage: string): string => {
      const i = seq++;
      const id = `auth_${run}_${i}`;
      const kind = i % 20;
      const at = new Date().toISOString();
      return JSON.stringify({
        id,
        type: 'authorization.request',
        occurredAt: at,
        authorization: {
          id,
          transactionId: `bt${run}${i}`,
          cardId: cards[i % cards.length],
          amount: kind === 3 ? 750 : 10 + (i % 90) + 0.5,
          currency: 'EUR',
          type: 'PURCHASE',
          merchant: { name: `bench ${stage}`, mcc: kind === 1 ? '7995' : '5411', city: 'Berlin', country: kind === 2 ? 'US' : 'DE' },
          at,
        },
      });
    };
    const signedHeaders = (raw: string) => ({
      'content-type': 'application/json',
      'upstream-notification-id': (JSON.parse(raw) as { id: string }).id,
      'upstream-signature': upstreamSignature(secret, raw),
    });

    // The bench database's backends (the gateway's pool and its background work), not this client.
    const backendCpu = async (): Promise<Map<number, number>> => {
      const pids = (await pg.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()')).rows.map((r) => r.pid);
      return cpuByPid(pids);
    };
    const backendCpuSince = async (before: Map<number, number>): Promise<number> => {
      let total = 0;
      for (const [pid, ms] of await backendCpu()) total += ms - (before.get(pid) ?? 0);
      return total;
    };
    /** The gateway's statement count, once bench/count-queries has written it (every QUERY_COUNT_EVERY_MS). */
    const queries = async (): Promise<number> => {
      await sleep(QUERY_COUNT_EVERY_MS + 50);
      return Number(fs.readFileSync(input.queryCountFile, 'utf8')) || 0;
    };

    const amount = input.requests ?? (input.smoke ? 200 : undefined);
    const load = amount !== undefined ? { amount } : { duration: input.duration };
    const saturate = async (stage: string): Promise<SaturationRound> => {
      const connections = Math.min(input.connections, amount ?? Infinity);
      const queriesBefore = await queries();
      const pgBefore = await backendCpu();
      const cpuBefore = cpuTimeMs(gateway.child.pid!);
      const result = await autocannon({
        url: notifyBase,
        connections,
        ...load,
        ...(amount !== undefined ? { sampleInt: 100 } : {}),
        requests: [
          {
            method: 'POST',
            path: PATH,
            setupRequest: (request: any) => {
              const raw = nextBody(stage);
              request.body = raw;
              request.headers = { ...request.headers, ...signedHeaders(raw) };
              return request;
            },
          },
        ],
      });
      const cpuMs = cpuTimeMs(gateway.child.pid!) - cpuBefore;
      const pgMs = await backendCpuSince(pgBefore);
      const sent = (await queries()) - queriesBefore;
      answered += result['2xx'];
      abandoned += Math.max(0, result.requests.sent - result.requests.total);
      const decisions = Math.max(1, result.requests.total);
      return {
        decisions: result.requests.total,
        decisionsPerSecond: Math.round((result.requests.average * 1000) / (amount !== undefined ? 100 : 1000)),
        p50Ms: result.latency.p50,
        p99Ms: result.latency.p99,
        errors: result.errors + result.timeouts + result.non2xx,
        cpuUsPerDecision: Math.round((cpuMs * 1000) / decisions),
        postgresCpuUsPerDecision: Math.round((pgMs * 1000) / decisions),
        queriesPerDecision: round2(sent / decisions),
      };
    };

    /** The latency of each decision answered 200 at a fixed rate, by authorization id. */
    const latencyById = new Map<string, number>();

    /**
     * Stage 4: `count` decisions at 20 per second while `cause` keeps them from an early answer, and
     * `busy` other processes spinning; each answer's time at the client, whatever its status.
     * `endpoint`: the endpoint hangs (its `timeoutMs` 1500; 100 in the smoke), each decision waits out the partner's
     * share of the budget and records the default at its end. `database`: a migration's lock on
     * `audit_log` (ACCESS EXCLUSIVE, held by this process) keeps every recording waiting, so each
     * answer is the 503 of the gateway's own timer at `answerBy`; the held recordings run, past
     * their commit-by instant, once the lock is released, and are refused.
     */
    const deadlineStage = async (cause: DeadlineFigures['cause'], count: number, busy: number): Promise<DeadlineFigures> => {
      const deadlineRate = 20;
      const deadlineMs = Number(process.env.AUTHORIZATION_DEADLINE_MS) || 2000;
      const locker = cause === 'database' ? new Client({ connectionString: input.dbUrl }) : undefined;
      if (cause === 'endpoint') {
        await fetch(`${endpoint.base}/hang?on=1`).then((r) => r.arrayBuffer());
        // The longest timeout; in the smoke the shortest (a check of the stage, not a measurement).
        await json(`${input.partnerApi}/authorization-endpoint`, { method: 'PATCH', headers: await input.auth(), body: JSON.stringify({ timeoutMs: input.smoke ? 100 : 1500 }) });
      } else {
        await locker!.connect();
        await locker!.query('BEGIN');
        await locker!.query('LOCK TABLE audit_log IN ACCESS EXCLUSIVE MODE');
      }
      const burners = Array.from({ length: busy }, () => spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' }));
      const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
      const url = new URL(`${notifyBase}${PATH}`);
      const times: number[] = [];
      let defaults = 0;
      let unavailable = 0;
      let other = 0;
      let pastDeadline = 0;
      try {
        const send = (): Promise<void> =>
          new Promise((resolve) => {
            const raw = nextBody(`deadline-${cause}`);
            const started = performance.now();
            const req = http.request({ host: url.hostname, port: url.port, path: url.pathname, method: 'POST', agent, headers: signedHeaders(raw) }, (res) => {
              const chunks: Buffer[] = [];
              res.on('data', (c: Buffer) => chunks.push(c));
              res.on('end', () => {
                const took = performance.now() - started;
                times.push(took);
                if (took >= deadlineMs) pastDeadline += 1;
                const body = Buffer.concat(chunks).toString();
                if (res.statusCode === 200) {
                  defaults += 1;
                  answered += 1;
                } else if (res.statusCode === 503 && body.includes('decision_unavailable')) unavailable += 1;
                else other += 1;
                resolve();
              });
            });
            req.on('error', () => {
              other += 1;
              pastDeadline += 1;
              resolve();
            });
            req.end(raw);
          });
        await openLoop(count, deadlineRate, send);
      } finally {
        for (const burner of burners) burner.kill('SIGKILL');
        agent.destroy();
        if (cause === 'endpoint') {
          await fetch(`${endpoint.base}/hang?on=0`).then((r) => r.arrayBuffer());
          await json(`${input.partnerApi}/authorization-endpoint`, { method: 'PATCH', headers: await input.auth(), body: JSON.stringify({ timeoutMs: 1000 }) });
        } else {
          await locker!.query('ROLLBACK');
          await locker!.end();
        }
      }
      times.sort((a, b) => a - b);
      return {
        cause,
        samples: times.length,
        rate: deadlineRate,
        busyProcesses: busy,
        p50Ms: round2(percentile(times, 50)),
        p99Ms: round2(percentile(times, 99)),
        maxMs: round2(times[times.length - 1] ?? 0),
        defaults,
        unavailable,
        other,
        pastDeadline,
        deadlineMs,
      };
    };
    /** `count` decisions at `rate` per second, open loop: latency at the client, ms. */
    const fixedRate = async (stage: string, count: number): Promise<LatencyFigures> => {
      const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
      const url = new URL(`${notifyBase}${PATH}`);
      const latencies: number[] = [];
      let errors = 0;
      const send = (): Promise<void> =>
        new Promise((resolve) => {
          const raw = nextBody(stage);
          const id = (JSON.parse(raw) as { id: string }).id;
          const started = performance.now();
          const sentAt = TRACE_DIR ? traceNow() : 0;
          let flushedAt = 0;
          const req = http.request({ host: url.hostname, port: url.port, path: url.pathname, method: 'POST', agent, headers: signedHeaders(raw) }, (res) => {
            res.resume();
            res.on('end', () => {
              if (res.statusCode === 200) {
                const took = performance.now() - started;
                latencies.push(took);
                latencyById.set(id, took);
                trace('client.jsonl', { id, stage, sent: sentAt, flushed: flushedAt, end: traceNow(), ms: took });
              }
              else errors += 1;
              resolve();
            });
          });
          req.on('error', () => {
            errors += 1;
            resolve();
          });
          if (TRACE_DIR) req.on('finish', () => (flushedAt = traceNow()));
          req.end(raw);
        });
      const cpuBefore = cpuTimeMs(gateway.child.pid!);
      const delay = TRACE_DIR ? monitorEventLoopDelay({ resolution: 1 }) : undefined;
      delay?.enable();
      const delayEach = delay
        ? setInterval(() => {
            trace('client.jsonl', { eld: traceNow(), stage, maxMs: delay.max / 1e6, p99Ms: delay.percentile(99) / 1e6 });
            delay.reset();
          }, 1000)
        : undefined;
      await openLoop(count, rate, send);
      clearInterval(delayEach);
      delay?.disable();
      flushTrace();
      const cpuMs = cpuTimeMs(gateway.child.pid!) - cpuBefore;
      agent.destroy();
      answered += latencies.length;
      latencies.sort((a, b) => a - b);
      return {
        samples: latencies.length,
        rate,
        p50Ms: round2(percentile(latencies, 50)),
        p99Ms: round2(percentile(latencies, 99)),
        maxMs: round2(latencies[latencies.length - 1] ?? 0),
        errors,
        cpuUsPerDecision: Math.round((cpuMs * 1000) / Math.max(1, count)),
      };
    };

    // Not measured: the route's first requests compile its code paths (as S1's warm-up in run.ts).
    // The smoke (not a measurement) skips it, and the informative saturation with the endpoint.
    const warmup = input.smoke ? 0 : Math.min(amount ?? 1000, 1000);
    const warmUp = async (what: string): Promise<void> => {
      if (warmup === 0) return;
      log(`authorizations: warm-up${what} (${warmup} decisions)...`);
      answered += (await autocannon({
        url: notifyBase,
        connections: Math.min(input.connections, warmup),
        amount: warmup,
        sampleInt: 100,
        requests: [{ method: 'POST', path: PATH, setupRequest: (request: any) => ((request.body = nextBody('warm-up')), (request.headers = { ...request.headers, ...signedHeaders(request.body) }), request) }],
      }))['2xx'];
    };
    await warmUp('');

    const roundCount = input.smoke ? 1 : 3;
    const rounds: SaturationRound[] = [];
    for (let r = 0; r < roundCount; r++) {
      log(`authorizations: round ${r + 1} of ${roundCount}, S1 then decisions at saturation (controls only)...`);
      const s1 = await input.s1Round();
      if (r === 0) await input.profile?.(true);
      const round = await saturate('saturation');
      if (r === 0) await input.profile?.(false);
      rounds.push({ ...round, ...(s1.cpuUsPerRequest === undefined ? {} : { s1CpuUsPerRequest: s1.cpuUsPerRequest }) });
    }

    const samples = input.smoke ? Math.min(input.requests ?? 20, 20) : Math.min(input.requests ?? rate * input.duration, 3000);
    log(`authorizations: ${samples} decisions at ${rate}/s, controls only...`);
    const latencyControlsOnly = await fixedRate('controls-only', samples);

    log(`authorizations: loopback decision endpoint, ${samples} decisions at ${rate}/s...`);
    await json(`${input.partnerApi}/authorization-endpoint`, { method: 'POST', headers: await input.auth(), body: JSON.stringify({ url: endpoint.url, timeoutMs: 1000 }) });
    // The endpoint's path (the claim, the signed call, the recording of its answer) warmed as the
    // controls-only path is before its measurement (without it, the path's first seconds at this rate,
    // while V8 compiles it and the backends first run its statements, set the p99); then the fixed-rate client's keep-alive
    // sockets and the gateway's to the endpoint, opened before the measurement.
    await warmUp(' with the endpoint');
    if (!input.smoke) await fixedRate('warm-up', 100);
    const callsBefore = await endpoint.calls();
    const withEndpoint = await fixedRate('endpoint', samples);
    const calls = await endpoint.handlingFrom(callsBefore);
    const handlingById = new Map(calls.ids.map((id, i) => [id, calls.handling[i]!]));
    const handling = [...calls.handling].sort((a, b) => a - b);
    const recordedPartner = (
      await pg.query<{ id: string; ms: number }>(
        "SELECT authorization_id AS id, (decided_by->>'partnerLatencyMs')::float8 AS ms FROM card_transactions WHERE authorization_id LIKE $1 AND merchant->>'name' = 'bench endpoint' AND decided_by ? 'partnerLatencyMs' ORDER BY 2",
        [`auth\\_${run}\\_%`]
      )
    ).rows;
    const partnerLatencies = recordedPartner.map((r) => r.ms);
    const own = recordedPartner.flatMap((r) => {
      const took = latencyById.get(r.id);
      return took === undefined ? [] : [Math.max(0, took - r.ms)];
    });
    own.sort((a, b) => a - b);
    // The stricter reading: the client's latency less the endpoint's own handling only (all the rest,
    // the partner call's HTTP exchange included, counted as the gateway's).
    const beyondEndpoint = [...handlingById].flatMap(([id, ms]) => {
      const took = latencyById.get(id);
      return took === undefined ? [] : [Math.max(0, took - ms)];
    });
    beyondEndpoint.sort((a, b) => a - b);
    let saturationWithEndpoint: SaturationRound | undefined;
    if (!input.smoke) {
      log('authorizations: saturation with the loopback endpoint...');
      await input.profileEndpoint?.(true);
      saturationWithEndpoint = await saturate('saturation-endpoint');
      await input.profileEndpoint?.(false);
    }

    const deadline: AuthorizationResult['deadline'] = [];
    for (const cause of ['endpoint', 'database'] as const) {
      log(`authorizations: the answer at the deadline, ${cause === 'endpoint' ? 'the endpoint hanging' : 'the recordings held behind a table lock'}${input.smoke ? '' : ', both cores busy'}...`);
      deadline.push(await deadlineStage(cause, input.smoke ? 5 : 200, input.smoke ? 0 : 2));
    }

    // What was recorded, by stage: the transactions the decisions wrote.
    const rows = (
      await pg.query<{ stage: string; outcome: string; decided_by: string; n: number }>(
        `SELECT substr(merchant->>'name', 7) AS stage, coalesce(decline_reason, 'approved') AS outcome, decided_by->>'decidedBy' AS decided_by, count(*)::int AS n
           FROM card_transactions WHERE authorization_id LIKE $1 GROUP BY 1, 2, 3 ORDER BY 1, 2, 3`,
        [`auth\\_${run}\\_%`]
      )
    ).rows;
    const mix: Record<string, Record<string, number>> = {};
    let recorded = 0;
    for (const row of rows) {
      const stage = (mix[row.stage] ??= {});
      stage[row.outcome] = (stage[row.outcome] ?? 0) + row.n;
      stage[`decidedBy:${row.decided_by}`] = (stage[`decidedBy:${row.decided_by}`] ?? 0) + row.n;
      recorded += row.n;
    }

    const s1Cpu = median(rounds.flatMap((r) => (r.s1CpuUsPerRequest === undefined ? [] : [r.s1CpuUsPerRequest])));
    const cpu = median(rounds.map((r) => r.cpuUsPerDecision));
    return {
      cards: cards.length,
      connections: Math.min(input.connections, amount ?? Infinity),
      controls: BENCH_CONTROLS,
      rounds,
      decisionsPerSecond: Math.round(median(rounds.map((r) => r.decisionsPerSecond))),
      cpuUsPerDecision: Math.round(cpu),
      s1CpuUsPerRequest: Math.round(s1Cpu),
      cpuVsS1: round2(cpu / Math.max(1, s1Cpu)),
      postgresCpuUsPerDecision: Math.round(median(rounds.map((r) => r.postgresCpuUsPerDecision))),
      queriesPerDecision: median(rounds.map((r) => r.queriesPerDecision)),
      latencyControlsOnly,
      latencyWithEndpoint: { ...withEndpoint, ...endpointFigures(partnerLatencies, handling, own, beyondEndpoint) },
      ...(saturationWithEndpoint ? { saturationWithEndpoint } : {}),
      deadline,
      mix,
      unrecorded: answered - recorded,
      abandoned,
    };
  } finally {
    await endpoint.close();
    await pg.end();
  }
}

/**
 * The loopback partner decision endpoint (bench/decision-endpoint.ts) in a child process of its own
 * (also the tokenization phase's, bench/tokenizations.ts),
 * so that it does not share this process's event loop with the open-loop client: `calls()` how many
 * it answered, `handlingFrom(i)` its own handling times (ms) from the i-th call on.
 */
export async function startDecisionEndpoint(): Promise<{ url: string; base: string; calls: () => Promise<number>; handlingFrom: (from: number) => Promise<{ handling: number[]; ids: string[] }>; close: () => Promise<void> }> {
  const child = await startNode(path.join(__dirname, 'decision-endpoint.js'), {}, (line) => typeof line.port === 'number');
  const base = `http://127.0.0.1:${String(child.ready.port)}`;
  const stats = async (from: number, all: boolean): Promise<{ calls: number; handling: number[]; ids: string[] }> => {
    if (TRACE_DIR) await fetch(`${base}/flush`).then((r) => r.arrayBuffer());
    return (await (await fetch(`${base}/${all ? 'handling' : 'calls'}?from=${from}`)).json()) as { calls: number; handling: number[]; ids: string[] };
  };
  return {
    url: `${base}/decide`,
    base,
    calls: async () => (await stats(0, false)).calls,
    handlingFrom: async (from) => stats(from, true),
    close: () => child.stop(),
  };
}
