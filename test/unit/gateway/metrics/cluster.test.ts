import cluster, { type Worker } from 'node:cluster';
import path from 'node:path';
import { expect } from 'chai';
import { serveClusterMetrics } from '../../../../gateway/metrics';

const AGGREGATION_ENV = 'PARTNER_GATEWAY_METRICS_AGGREGATION';

/** The next message of `type` from a worker. */
function nextMessage(worker: Worker, type: string): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    const onMessage = (message: Record<string, unknown>) => {
      if (message?.type !== type) return;
      worker.off('message', onMessage);
      worker.off('exit', onExit);
      resolve(message);
    };
    const onExit = (code: number) => reject(new Error(`worker exited (${code}) before sending ${type}`));
    worker.on('message', onMessage);
    worker.once('exit', onExit);
  });
}

async function forkWorker(env: Record<string, string> = {}): Promise<Worker> {
  const worker = cluster.fork(env);
  await nextMessage(worker, 'fixture:ready');
  return worker;
}

async function record(worker: Worker, upstream: string, calls: number): Promise<void> {
  const done = nextMessage(worker, 'fixture:recorded');
  worker.send({ type: 'fixture:record', upstream, calls });
  await done;
}

async function scrape(worker: Worker): Promise<string> {
  const answer = nextMessage(worker, 'fixture:collected');
  worker.send({ type: 'fixture:collect' });
  const message = await answer;
  if (typeof message.text !== 'string') throw new Error(String(message.error));
  return message.text;
}

function countOf(text: string, upstream: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`upstream_request_duration_seconds_count{upstream="${upstream}"}`));
  return line === undefined ? undefined : Number(line.split(' ').pop());
}

describe('unit: metrics/cluster (WORKERS > 1)', function () {
  this.timeout(60_000);
  const workers: Worker[] = [];
  const previousEnv = process.env[AGGREGATION_ENV];

  before(function () {
    cluster.setupPrimary({ exec: path.join(__dirname, 'fixtures', 'cluster-worker.js'), silent: true });
    serveClusterMetrics();
  });

  after(async function () {
    await Promise.all(
      workers.map(
        (worker) =>
          new Promise<void>((resolve) => {
            if (worker.isDead()) return resolve();
            worker.once('exit', () => resolve());
            worker.disconnect();
          })
      )
    );
    if (previousEnv === undefined) delete process.env[AGGREGATION_ENV];
    else process.env[AGGREGATION_ENV] = previousEnv;
  });

  it('a scrape served by any worker shows every worker\'s metrics, summed by the primary', async function () {
    const [first, second] = await Promise.all([forkWorker(), forkWorker()]);
    workers.push(first, second);
    await record(first, 'cluster-test', 2);
    await record(second, 'cluster-test', 3);
    expect(countOf(await scrape(first), 'cluster-test')).to.equal(5);
    expect(countOf(await scrape(second), 'cluster-test')).to.equal(5);
  });

  it('without the primary\'s aggregation a worker answers with its own metrics only', async function () {
    const alone = await forkWorker({ [AGGREGATION_ENV]: '' });
    workers.push(alone);
    await record(alone, 'cluster-alone', 4);
    const text = await scrape(alone);
    expect(countOf(text, 'cluster-alone')).to.equal(4);
    expect(countOf(text, 'cluster-test')).to.equal(undefined);
  });
});
