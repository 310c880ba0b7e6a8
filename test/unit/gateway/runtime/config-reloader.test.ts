import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import type { RequestHandler } from 'express';
import { changedYaml, type Yaml } from '../../../support/config-files';
import { ConfigRefusedError } from '../../../../gateway/boot/config-guards';
import { buildInitialConfig, checkInitialConfig, configHash } from '../../../../gateway/runtime/config-candidate';
import { ConfigReloader } from '../../../../gateway/runtime/config-reloader';
import { loadAndCheck, type GatewayRuntime } from '../../../../gateway/runtime/express-gateway';
import { createLogger } from '../../../../gateway/logging/logger';
import { openServices, type InProcessServices } from '../../../support/in-process';
import { waitFor } from '../../../support/wait';

const SHIPPED_CONFIG = path.resolve(__dirname, '..', '..', '..', '..', '..', 'config');

/** This file's reloads answer within 10 s; polled every 20 ms. */
const until = <T>(what: string, probe: () => T | undefined): Promise<T> => waitFor(what, probe, 10_000, 20);

describe('unit: gateway/runtime/config-reloader', function () {
  this.timeout(30_000);
  let services: InProcessServices;
  let runtime: GatewayRuntime;
  let dir: string;
  let file: string;
  let shipped: string;
  let lines: Record<string, any>[];
  let applied: RequestHandler[];
  let outcomes: string[];
  let reloader: ConfigReloader;

  const write = (text: string) => {
    fs.writeFileSync(file, text);
    return configHash(text);
  };
  const changed = (change: (c: Yaml) => void) => changedYaml(shipped, change);
  const withoutJwtOnMe = () => changed((c) => c.pipelines.me.policies.shift());
  const protectedHealthCheck = () => changed((c) => c.pipelines['health-check'].policies.unshift({ 'es512-jwt': [{ action: {} }] }));

  before(async function () {
    services = await openServices();
    ({ runtime } = loadAndCheck({ configDir: SHIPPED_CONFIG, adminHost: '127.0.0.1' }));
    shipped = fs.readFileSync(path.join(SHIPPED_CONFIG, 'gateway.config.yml'), 'utf8');
  });

  after(async function () {
    await services?.close();
  });

  beforeEach(async function () {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pgw-reloader-'));
    file = path.join(dir, 'gateway.config.yml');
    fs.writeFileSync(file, shipped);
    lines = [];
    applied = [];
    outcomes = [];
    const log = createLogger({ level: 'debug', destination: { write: (line: string) => void lines.push(JSON.parse(line)) } });
    reloader = new ConfigReloader({ runtime, services, log, initial: await buildInitialConfig(checkInitialConfig(runtime, file), runtime, services), apply: (router) => applied.push(router), debounceMs: 20, onOutcome: (outcome, trigger) => outcomes.push(`${trigger}:${outcome.result}`) });
  });

  afterEach(function () {
    reloader.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('starts with the hash of the bytes it built, and nothing reloaded', function () {
    const status = reloader.status();
    expect(status).to.include({ hash: configHash(shipped), path: file, watching: false, pid: process.pid });
    expect(status.reloads).to.deep.equal({ applied: 0, rejected: 0 });
    expect(status).to.not.have.property('lastRejection');
  });

  it('refuses to start on a file the guards refuse (ConfigRefusedError, as the boot guards)', async function () {
    write(withoutJwtOnMe());
    let error: unknown;
    try {
      checkInitialConfig(runtime, file);
    } catch (err) {
      error = err;
    }
    expect(error).to.be.instanceOf(ConfigRefusedError);
    expect((error as Error).message).to.match(/configuration refused:[\s\S]*lacks the es512-jwt policy/);
  });

  it('applies a changed file, reports unchanged for the same bytes', async function () {
    const hash = write(protectedHealthCheck());
    const outcome = await reloader.reload('admin');
    expect(outcome.result).to.equal('applied');
    expect(applied).to.have.length(1);
    expect(outcome.status).to.include({ hash });
    expect(outcome.status.reloads).to.deep.equal({ applied: 1, rejected: 0 });
    expect(lines.find((l) => l.msg === 'gateway config reloaded')).to.include({ level: 'info', hash, trigger: 'admin' });

    const again = await reloader.reload('admin');
    expect(again.result).to.equal('unchanged');
    expect(again.status.loadedAt).to.equal(outcome.status.loadedAt);
    expect(applied).to.have.length(1);
    expect(outcomes).to.deep.equal(['admin:applied']);
  });

  it('keeps the previous config on a refusal, logs the reason at error level', async function () {
    const before = reloader.status();
    const hash = write(withoutJwtOnMe());
    const outcome = await reloader.reload('admin');
    expect(outcome.result).to.equal('rejected');
    expect(applied).to.have.length(0);
    const status = reloader.status();
    expect(status).to.include({ hash: before.hash, loadedAt: before.loadedAt });
    expect(status.reloads).to.deep.equal({ applied: 0, rejected: 1 });
    expect(status.lastRejection).to.include({ hash, stage: 'guards' });
    const line = lines.find((l) => l.level === 'error');
    expect(line).to.include({ hash, activeHash: before.hash, stage: 'guards', trigger: 'admin' });
    expect(line!.reason).to.match(/lacks the es512-jwt policy/);
  });

  it('logs a watched file refused once only once; an explicit reload checks it again', async function () {
    write(withoutJwtOnMe());
    await reloader.reload('watch');
    await reloader.reload('watch');
    expect(reloader.status().reloads.rejected).to.equal(1);
    expect(lines.filter((l) => l.level === 'error')).to.have.length(1);
    await reloader.reload('admin');
    expect(reloader.status().reloads.rejected).to.equal(2);
    expect(outcomes, 'the outcome hook sees what the counters count').to.deep.equal(['watch:rejected', 'admin:rejected']);
  });

  it('refuses a missing file (stage read, no hash)', async function () {
    fs.rmSync(file);
    const outcome = await reloader.reload('admin');
    expect(outcome.result).to.equal('rejected');
    expect(reloader.status().lastRejection).to.include({ stage: 'read', hash: null });
    expect(reloader.status().hash).to.equal(configHash(shipped));
  });

  it('runs reloads one at a time: two at once build the file once', async function () {
    write(protectedHealthCheck());
    const outcomes = await Promise.all([reloader.reload('admin'), reloader.reload('admin')]);
    expect(outcomes.map((o) => o.result)).to.deep.equal(['applied', 'unchanged']);
    expect(applied).to.have.length(1);
  });

  it('watches the folder: a file replaced by rename is applied; close() stops watching', async function () {
    expect(reloader.watch()).to.equal(true);
    expect(reloader.status().watching).to.equal(true);
    const text = protectedHealthCheck();
    const temp = path.join(dir, '.gateway.config.yml.swp');
    fs.writeFileSync(temp, text);
    fs.renameSync(temp, file);
    await until('the renamed file to apply', () => (reloader.status().hash === configHash(text) ? true : undefined));
    expect(applied).to.have.length(1);

    reloader.close();
    expect(reloader.status().watching).to.equal(false);
  });
});
