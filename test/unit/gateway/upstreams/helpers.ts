// Shared fixtures of the upstream client tests: a captured debug logger and a mock upstream.
import { MockAgent } from 'undici';
import { createLogger, type Logger } from '../../../../gateway/logging/logger';
import { OriginGate, type UpstreamPool } from '../../../../gateway/upstreams/agents';

/** Base URLs the mock agent answers for; never resolvable, so nothing leaks to a real network. */
export const MOCK_URLS = { issuer: 'http://issuer.test', processing: 'http://processing.test', accounts: 'http://accounts.test' } as const;

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
 * Mocha hooks for a suite whose upstream is undici's `MockAgent` (the client's pool is undici's, so
 * the agent stands in for the upstream the way nock did for node:http): a new agent per test, no
 * real connection through it, and every interceptor must be used. `mock.agent` is the current
 * test's agent; `mock.pool()` wraps it as a client's pool.
 */
export function useMockAgent(): { readonly agent: MockAgent; pool(): UpstreamPool } {
  let agent: MockAgent | undefined;
  beforeEach(() => {
    agent = new MockAgent();
    agent.disableNetConnect();
  });
  afterEach(async function () {
    const current = agent!;
    agent = undefined;
    const pending = current.pendingInterceptors();
    await current.close();
    if (this.currentTest?.state === 'passed' && pending.length > 0) {
      throw new Error(`interceptors not used: ${pending.map((p) => `${p.method} ${p.origin}${String(p.path)}`).join(', ')}`);
    }
  });
  return {
    get agent(): MockAgent {
      if (!agent) throw new Error('no mock agent outside a test');
      return agent;
    },
    pool(): UpstreamPool {
      const dispatcher = this.agent;
      return { dispatcher, connections: 64, gate: new OriginGate(dispatcher, 64), destroy: () => undefined };
    },
  };
}
