import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';

const run = promisify(execFile);
const ROOT = path.resolve(__dirname, '..', '..', '..');

/**
 * Requests per scenario (and for the memory run): enough for every scenario to report a rate,
 * percentiles and a peak RSS, few enough that the smoke costs its process starts, not the load
 * (200 per scenario, the smoke's default, made the gateways' CPU the larger share).
 */
const REQUESTS = 50;

describe(`bench harness (smoke: ${REQUESTS} requests per scenario)`, function () {
  this.timeout(300_000);

  it('runs every scenario and baseline, prints the table and writes the results file', async function () {
    const { stdout } = await run(process.execPath, [path.join(ROOT, 'dist', 'bench', 'run.js'), '--smoke', '--requests', String(REQUESTS), '--rss-requests', String(REQUESTS)], {
      cwd: ROOT,
      env: { ...process.env, LOG_LEVEL: 'warn' },
      maxBuffer: 10 * 1024 * 1024,
    });
    expect(stdout).to.match(/ES512 ceiling \(one core\): \d+ verifications\/s/);
    const written = /written (bench\/results\/[^\s]+\.json)/.exec(stdout);
    expect(written, stdout).to.not.equal(null);
    const report = JSON.parse(fs.readFileSync(path.join(ROOT, written![1]), 'utf8'));
    const names = report.results.map((r: { name: string }) => r.name);
    expect(names).to.include.members(['direct', 'bare-proxy', 'eg-proxy', 'S1', 'S2', 'S3', 'S4', 'S5', 'S6-direct', 'S6-S1', 'S1-cluster2']);
    expect(report.options.requests).to.equal(REQUESTS);
    for (const result of report.results) {
      expect(result.requests, `${result.name}: every request of the scenario was sent and answered`).to.equal(REQUESTS);
      expect(result.non2xx, `${result.name} answered non-2xx`).to.equal(0);
      expect(result.errors, `${result.name} had errors or timeouts`).to.equal(0);
      expect(result.rps, `${result.name} req/s`).to.be.greaterThan(0);
      expect(result.p50, `${result.name} p50`).to.be.a('number').at.least(0);
      expect(result.p99, `${result.name} p99 >= p50`).to.be.at.least(result.p50);
    }
    for (const name of ['S1', 'S1-cluster2']) expect(report.results.find((r: { name: string }) => r.name === name).peakRssMb, `${name} peak RSS`).to.be.greaterThan(0);
    expect(report.es512CeilingPerSecond).to.be.greaterThan(0);
    expect(report.ratios).to.have.keys(['s1VsEgProxy', 's1VsBareProxy', 's2VsEs512Ceiling', 's6AddedP50Ms', 's6AddedP99Ms', 'cluster2VsOne', 's1CpuVsEgProxyCpu', 's2CpuVsEs512']);
    // CPU per request of the serving process, for the baselines and S1 to S5.
    const cpu = (name: string): number => report.results.find((r: { name: string }) => r.name === name).cpuUsPerRequest;
    for (const name of ['direct', 'bare-proxy', 'eg-proxy', 'S1', 'S2', 'S3', 'S4', 'S5']) expect(cpu(name), `${name} CPU µs per request`).to.be.a('number').at.least(0);
    // A fresh token per request costs an ES512 verification (about 1.2 ms of CPU) that S1's reused token does not.
    expect(cpu('S2'), 'S2 (fresh tokens) costs more CPU per request than S1 (one token)').to.be.greaterThan(cpu('S1'));
    // The webhook phase: every change of the burst reached the loopback receiver.
    expect(report.webhooks).to.include({ deliveries: REQUESTS, cards: 8, latencySamples: REQUESTS });
    expect(report.webhooks.deliveriesPerSecond, 'webhook deliveries per second').to.be.greaterThan(0);
    expect(report.webhooks.cpuUsPerChangeAndDelivery, 'CPU per change and delivery').to.be.greaterThan(0);
    expect(report.webhooks.addedLatencyP50Ms, 'change to receiver p50').to.be.greaterThan(0);
    expect(report.webhooks.addedLatencyP99Ms, 'change to receiver p99 >= p50').to.be.at.least(report.webhooks.addedLatencyP50Ms);
    expect(stdout).to.match(/webhooks: \d+ deliveries\/s/);
    // The authorization phase (issue 21): signed processor requests, each answered and recorded once.
    const a = report.authorizations;
    expect(a.rounds, 'one round in the smoke').to.have.length(1);
    expect(a.rounds[0]).to.include({ decisions: REQUESTS, errors: 0 });
    expect(a.decisionsPerSecond, 'decisions per second').to.be.greaterThan(0);
    expect(a.cpuUsPerDecision, 'gateway CPU per decision').to.be.greaterThan(0);
    expect(a.s1CpuUsPerRequest, 'S1 CPU per request beside it').to.be.greaterThan(0);
    // The recording statement alone, which takes the card's lock and counts velocity itself, once the
    // gateway remembers the card; the reads before it on each card's first decision in the process
    // (docs/authorizations.md, "Round trips"; bench/count-queries counts them; a background pass of
    // the gateway may add a few to the round's count). 2 per decision if the card were never remembered.
    expect(a.queriesPerDecision, 'statements per decision').to.be.at.least(1).and.at.most(1.5);
    expect(a.unrecorded, 'every decision answered recorded its transaction').to.equal(0);
    expect(a.abandoned, 'the smoke\'s rounds are counted (--requests): each waits for every answer').to.equal(0);
    for (const latency of [a.latencyControlsOnly, a.latencyWithEndpoint]) {
      expect(latency).to.include({ errors: 0, rate: 200 });
      expect(latency.samples).to.be.greaterThan(0);
      expect(latency.p99Ms).to.be.at.least(latency.p50Ms);
    }
    expect(a.latencyWithEndpoint.endpointCalls, 'the loopback endpoint was asked for each decision it could approve').to.be.greaterThan(0);
    // The own time read the stricter way (the client's latency less the endpoint's own handling, by authorization id): every call matched.
    expect(a.latencyWithEndpoint.beyondEndpointP99Ms, 'the endpoint, in its own process, reported its calls by id').to.be.at.least(a.latencyWithEndpoint.beyondEndpointP50Ms).and.above(0);
    expect(a.mix.saturation, 'approvals and spend-control declines').to.include.keys('approved', 'mcc_blocked', 'country_blocked', 'amount_exceeded');
    expect(a.mix.endpoint['decidedBy:partner'], 'decided by the loopback endpoint').to.be.greaterThan(0);
    // The answer at the deadline (issue 32): every answer comes before the processor's deadline,
    // when the endpoint hangs and when the database holds every recording.
    const [hanging, held] = a.deadline;
    for (const [d, cause] of [[hanging, 'endpoint'], [held, 'database']] as const) {
      expect(d).to.include({ cause, samples: 5, busyProcesses: 0, other: 0, pastDeadline: 0, deadlineMs: 2000 });
      expect(d.defaults + d.unavailable).to.equal(5);
    }
    expect(hanging.p50Ms, 'each waited out the endpoint\'s timeoutMs (100 ms in the smoke)').to.be.at.least(100);
    expect(held.p50Ms, 'each held until answerBy (1,700 ms after arrival)').to.be.at.least(1700);
    expect(a.mix['deadline-endpoint']['decidedBy:partner_default'], 'the endpoint\'s default, recorded').to.equal(hanging.defaults);
    expect(held.unavailable, 'the gateway\'s own 503 at answerBy, for each held recording').to.equal(5);
    expect(stdout).to.match(/authorizations \(\d+ cards with spend controls.*\): \d+ decisions\/s per worker/);
    // The tokenization phase (issue 35): 20 signed tokenization requests per round at 100/s, each
    // approved, without an endpoint (the network's verdict) and with the loopback endpoint (the partner).
    const t = report.tokenizations;
    for (const latency of [t.withoutEndpoint, t.withEndpoint]) {
      expect(latency).to.include({ samples: 20, errors: 0, rate: 100 });
      expect(latency.p50Ms, 'tokenization p50 at the client').to.be.greaterThan(0);
      expect(latency.p95Ms).to.be.at.least(latency.p50Ms);
      expect(latency.p99Ms).to.be.at.least(latency.p95Ms);
    }
    expect(t.mix.network, 'no endpoint: decided by the network\'s verdict').to.deep.equal({ approve: 20, 'decidedBy:network': 20 });
    expect(t.mix.endpoint, 'decided by the loopback endpoint').to.deep.equal({ approve: 20, 'decidedBy:partner': 20 });
    expect(t.withEndpoint.endpointCalls, 'the endpoint was asked once per tokenization').to.equal(20);
    // The own time, the client's latency less the partner's recorded latency, matched for every decision.
    expect(t.withEndpoint.ownP99Ms).to.be.at.least(t.withEndpoint.ownP50Ms).and.at.most(t.withEndpoint.maxMs);
    expect(t.withEndpoint.beyondEndpointP99Ms).to.be.at.least(t.withEndpoint.beyondEndpointP50Ms).and.above(0);
    // The cascade: 5 cards of 10 tokens, each card's tokens all suspended after its lock, as the partner reads them.
    expect(t.cascade).to.include({ cards: 5, tokensPerCard: 10, notSuspended: 0, partnerViewSuspended: 5 });
    expect(t.cascade.p50Ms, 'lock answered to every token suspended').to.be.greaterThan(0);
    expect(t.cascade.maxMs).to.be.at.least(t.cascade.p99Ms).and.at.least(t.cascade.p50Ms);
    expect(Object.keys(report.targets).filter((k: string) => k.startsWith('tokenizations: ')), 'the tokenization targets').to.have.length(4);
    expect(stdout).to.match(/tokenizations \(\d+ cards.*\) at 100\/s, no endpoint: p50 [\d.]+ ms/);
    expect(stdout).to.match(/cascade: 5 cards of 10 tokens/);
    expect(stdout).to.match(/CPU per request \(serving process\): S1 \/ express-gateway proxy [\d.]+x/);
  });
});
