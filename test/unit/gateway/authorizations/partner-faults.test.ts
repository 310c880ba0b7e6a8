import { expect } from 'chai';
import pino from 'pino';
import { PartnerFaultLog, type FaultReport } from '../../../../gateway/authorizations/partner-faults';
import { waitFor } from '../../../support/wait';

/** The partners' decision-endpoint faults, logged at warn and at most once per partner per interval (docs/authorization-endpoint.md, "Logs"). */
describe('unit: authorizations/partner-faults', function () {
  const INTERVAL_MS = 100;
  let lines: Record<string, any>[];
  let now: number;
  let faults: PartnerFaultLog;
  beforeEach(() => {
    lines = [];
    now = 0;
    const log = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
    faults = new PartnerFaultLog(log, INTERVAL_MS, () => now);
  });
  afterEach(() => faults.flush());
  const fault = (partnerId: string, overrides: Partial<FaultReport> = {}): FaultReport => ({
    partnerId,
    reason: 'timeout',
    latencyMs: 1_480,
    authorizationId: `auth_${lines.length}_${Math.random()}`,
    answered: 'default',
    ...overrides,
  });

  it('writes a partner\'s first fault at once, at warn, with no stack, its reason and no answer or URL', () => {
    faults.report(fault('p1', { reason: 'error', error: 'http_status', authorizationId: 'auth_1' }));
    expect(lines).to.have.length(1);
    expect(lines[0]).to.include({ level: 40, msg: 'partner decision endpoint did not answer usably', partnerId: 'p1', reason: 'error', error: 'http_status', authorizationId: 'auth_1', answered: 'default', count: 1 });
    expect(lines[0]).to.not.have.any.keys('err', 'stack', 'url');
  });

  it('holds the faults that follow within the interval and writes them as one line at its end, with their count, reasons and answers', async () => {
    faults.report(fault('p1'));
    for (let i = 0; i < 40; i++) faults.report(fault('p1', { reason: i % 4 === 0 ? 'overloaded' : 'timeout', answered: i % 10 === 0 ? 'unavailable' : 'default' }));
    expect(lines, 'one line during the burst').to.have.length(1);
    now = INTERVAL_MS;
    await waitFor('the interval\'s line', () => lines.length === 2);
    expect(lines[1]).to.deep.include({ level: 40, partnerId: 'p1', count: 40, reasons: { overloaded: 10, timeout: 30 }, answers: { unavailable: 4, default: 36 } });
  });

  it('keeps partners apart: each has its own line and its own interval', () => {
    faults.report(fault('p1'));
    faults.report(fault('p2'));
    faults.report(fault('p1'));
    expect(lines.map((l) => [l.partnerId, l.count])).to.deep.equal([
      ['p1', 1],
      ['p2', 1],
    ]);
  });

  it('writes the next fault at once after a quiet interval, and forgets a partner with nothing held', async () => {
    faults.report(fault('p1'));
    now = INTERVAL_MS * 3;
    // The interval ends with nothing held: no line, and the partner is forgotten.
    await new Promise((resolve) => setTimeout(resolve, INTERVAL_MS * 2));
    expect(lines).to.have.length(1);
    faults.report(fault('p1', { answered: 'unavailable' }));
    expect(lines).to.have.length(2);
    expect(lines[1]).to.include({ count: 1, answered: 'unavailable' });
  });

  it('flush writes what is held at once (shutdown)', () => {
    faults.report(fault('p1'));
    faults.report(fault('p1'));
    faults.report(fault('p1'));
    faults.flush();
    expect(lines.map((l) => l.count)).to.deep.equal([1, 2]);
  });
});
