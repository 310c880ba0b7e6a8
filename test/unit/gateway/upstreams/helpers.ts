// Shared fixtures of the upstream client tests: a captured debug logger and nock hygiene.
import nock from 'nock';
import { createLogger, type Logger } from '../../../../gateway/logging/logger';

// Requiring nock switches its interception on for the whole mocha process, and while it is on,
// real requests pass through interceptors that ignore the caller's http.Agent (no keep-alive,
// no maxSockets) and wrap fetch. Off by default then: only suites that call useNock() get it.
if (nock.isActive()) nock.restore();

/** Base URLs nock answers for; never resolvable, so nothing leaks to a real network. */
export const NOCK_URLS = { issuer: 'http://issuer.test', processing: 'http://processing.test', accounts: 'http://accounts.test' } as const;

/** A debug-level logger whose lines are parsed into `lines`. */
export function captureLogger(): { log: Logger; lines: Array<Record<string, unknown>> } {
  const lines: Array<Record<string, unknown>> = [];
  const log = createLogger({
    level: 'debug',
    destination: {
      write(line: string) {
        lines.push(JSON.parse(line) as Record<string, unknown>);
      },
    },
  });
  return { log, lines };
}

/**
 * Mocha hooks for a nock-based suite: nock is on for the suite only, only loopback may be reached
 * for real (the refused-port test), every interceptor must be used, and nothing outlives the suite.
 */
export function useNock(): void {
  before(() => {
    if (!nock.isActive()) nock.activate();
    nock.disableNetConnect();
    nock.enableNetConnect(/^(127\.0\.0\.1|localhost)(:\d+)?$/);
  });
  afterEach(function () {
    const pending = nock.pendingMocks();
    nock.cleanAll();
    if (this.currentTest?.state === 'passed' && pending.length > 0) {
      throw new Error(`nock interceptors not used: ${pending.join(', ')}`);
    }
  });
  after(() => {
    nock.cleanAll();
    nock.enableNetConnect();
    nock.restore();
  });
}

/** Mocha hooks for a suite inside a nock suite that needs real sockets (agents, keep-alive). */
export function withoutNock(): void {
  let wasActive = false;
  before(() => {
    wasActive = nock.isActive();
    if (wasActive) nock.restore();
  });
  after(() => {
    if (wasActive) nock.activate();
  });
}
