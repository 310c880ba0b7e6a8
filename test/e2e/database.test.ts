import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { readMigrations } from '../../gateway/db/migrate';
import { startGatewayProcess, type GatewayProcess } from '../support/gateway-process';
import { registerPartner, type TestPartner } from '../support/partners';
import { connectAsOtherUser, tcpListeningPorts } from '../support/listeners';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy';
import { runDatabaseUrl } from '../support/test-database';

/** How many migrations a new database gets (db/migrations). */
const MIGRATIONS = readMigrations().length;

async function me(gateway: GatewayProcess, partner: TestPartner) {
  const response = await fetch(`${gateway.baseUrl}/api/partner/me`, { headers: { authorization: `Bearer ${await partner.token()}` } });
  return { status: response.status, headers: response.headers, body: (await response.json()) as Record<string, unknown> };
}

describe('e2e: database availability', function () {
  describe('real PostgreSQL behind a link that goes down and comes back', function () {
    let proxy: TcpProxy;
    let gateway: GatewayProcess;
    let partner: TestPartner;

    before(async function () {
      const direct = new URL(runDatabaseUrl());
      const port = Number(direct.port || 5432);
      // TEST_DB=embedded: the run's database is a Unix socket (host = its directory), forwarded here over loopback TCP.
      const host = decodeURIComponent(direct.hostname);
      proxy = await startTcpProxy(host.startsWith('/') ? { path: path.join(host, `.s.PGSQL.${port}`) } : { host, port });
      const viaProxy = new URL(direct.toString());
      viaProxy.hostname = '127.0.0.1';
      viaProxy.port = String(proxy.port);
      gateway = await startGatewayProcess({ env: { DATABASE_URL: viaProxy.toString() } });
      partner = await registerPartner(gateway, 'outage');
    });

    after(async function () {
      await gateway?.stop();
      await proxy?.close();
    });

    it('answers 503 problems while the database is unreachable and resumes without a restart', async function () {
      expect((await me(gateway, partner)).status).to.equal(200);

      await proxy.cut();
      for (let i = 0; i < 3; i++) {
        const down = await me(gateway, partner);
        expect(down.status).to.equal(503);
        expect(down.headers.get('content-type')).to.match(/^application\/problem\+json/);
        expect(down.headers.get('retry-after')).to.equal('1');
        expect(down.body.code).to.equal('database_unavailable');
        expect(JSON.stringify(down.body)).to.not.match(/ECONNREFUSED|at .*\.js/);
      }
      const health = await fetch(`${gateway.baseUrl}/api/partner/health-check`);
      expect(health.status, 'the liveness probe stays 200').to.equal(200);

      await proxy.restore();
      const back = await me(gateway, partner);
      expect(back.status).to.equal(200);
      expect((back.body.partner as { _id: string })._id).to.equal(partner.id);
      expect(gateway.child.exitCode, 'the process never restarted').to.equal(null);
    });
  });

  describe('embedded PostgreSQL (DATABASE_URL unset)', function () {
    this.timeout(90_000);

    // The product's first start: DATA_DIR empty, the gateway runs initdb itself (the other embedded
    // gateways of the suite start from a copy of an initialised data directory: test/support/pglite-template.ts).
    it('runs the same migrations and SQL, and keeps its data under DATA_DIR across restarts', async function () {
      const first = await startGatewayProcess({ embedded: true, firstStart: true, timeoutMs: 60_000 });
      let dataDir: string;
      let partner: TestPartner;
      try {
        expect(first.logLines().find((l) => l.msg === 'gateway ready')).to.include({ database: 'embedded' });
        expect(first.logLines().filter((l) => l.msg === 'migration applied'), 'every migration, on a database initialised by this start').to.have.length(MIGRATIONS);
        partner = await registerPartner(first, 'embedded');
        const answer = await me(first, partner);
        expect(answer.status).to.equal(200);
        expect((answer.body.partner as { _id: string })._id).to.equal(partner.id);
        dataDir = first.dataDir;
      } finally {
        expect(await first.stop()).to.equal(0);
      }
      const second = await startGatewayProcess({ embedded: true, dataDir, timeoutMs: 60_000 });
      try {
        const again = await me(second, partner);
        expect(again.status, 'the partner registered before the restart still authenticates').to.equal(200);
        expect(second.output()).to.not.include('migration applied');
      } finally {
        await second.stop();
      }
    });

    it('opens no TCP port for the database: its socket sits in a directory only the gateway user can enter', async function () {
      if (process.platform !== 'linux') this.skip(); // listeners are read from /proc
      const gateway = await startGatewayProcess({ embedded: true, timeoutMs: 60_000 });
      try {
        expect(gateway.logLines().filter((l) => l.msg === 'migration applied'), 'the template holds no migration: the gateway applied them').to.have.length(MIGRATIONS);
        const ready = gateway.logLines().find((l) => l.msg === 'gateway ready') as { port: number; adminPort: number; notifyPort?: number; upstreams: Record<string, string> };
        // In sandbox mode the upstream-notifications listener (docs/upstreams.md, section 9) listens too.
        expect(ready.notifyPort, 'the notifications listener of sandbox mode').to.be.a('number');
        const ownPorts = [ready.port, ready.adminPort, ready.notifyPort!, ...Object.values(ready.upstreams).map((url) => Number(new URL(url).port))];
        expect(tcpListeningPorts(gateway.child.pid!), 'the partner, admin and notifications listeners and the in-process sandboxes, nothing else').to.deep.equal(
          [...new Set(ownPorts)].sort((a, b) => a - b)
        );

        const partner = await registerPartner(gateway, 'embedded-socket');
        expect((await me(gateway, partner)).status, 'the gateway works on its embedded database').to.equal(200);

        const started = gateway.logLines().find((l) => typeof l.msg === 'string' && l.msg.startsWith('embedded PostgreSQL (PGlite) started'));
        const socketDir = String(started?.socketDir);
        const stat = fs.statSync(socketDir);
        expect(stat.isDirectory()).to.equal(true);
        expect(stat.mode & 0o777, 'only the owner may enter the socket directory').to.equal(0o700);
        expect(stat.uid).to.equal(process.getuid!());
        const socket = { path: path.join(socketDir, '.s.PGSQL.5432') };
        if (process.getuid!() === 0) {
          // The probe is live: as the directory's owner it gets a password-less session.
          expect(await connectAsOtherUser(socket, 0)).to.deep.equal({ outcome: 'authenticated' });
          expect(await connectAsOtherUser(socket), 'another local user cannot reach the socket').to.deep.equal({ outcome: 'error', code: 'EACCES' });
        }
      } finally {
        await gateway.stop();
      }
      expect(fs.existsSync(String(gateway.logLines().find((l) => l.socketDir)?.socketDir)), 'the socket directory is removed on stop').to.equal(false);
    });
  });
});
