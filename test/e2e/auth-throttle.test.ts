import http from 'node:http';
import { expect } from 'chai';
import { signPartnerToken } from '../../scripts/token';
import { startGatewayProcess, type GatewayProcess } from '../support/gateway-process';
import { makeKeyPair, registerPartner, type TestPartner } from '../support/partners';
import { recordSecret } from '../support/secrets';

/** The shipped defaults (docs/authentication.md, "Throttling failed authentication"). */
const PER_PARTNER = 30;
const PER_ADDRESS = 60;

interface Answer {
  status: number;
  code?: string;
  retryAfter?: string;
}

/**
 * GET /api/partner/me from a given loopback address (127.0.0.x: every one reaches the gateway on
 * 127.0.0.1), optionally through a proxy that names the client in X-Forwarded-For.
 */
function meFrom(gateway: GatewayProcess, localAddress: string, token: string, forwardedFor?: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { authorization: `Bearer ${token}`, ...(forwardedFor ? { 'x-forwarded-for': forwardedFor } : {}) };
    const req = http.get(`${gateway.baseUrl}/api/partner/me`, { agent: false, localAddress, headers }, (res) => {
      let body = '';
      res.on('data', (chunk: Buffer) => (body += chunk.toString()));
      res.on('end', () => {
        const header = res.headers['retry-after'];
        resolve({ status: res.statusCode ?? 0, code: body.startsWith('{') ? JSON.parse(body).code : undefined, ...(header ? { retryAfter: String(header) } : {}) });
      });
    });
    req.on('error', reject);
  });
}

async function jwtRefusals(gateway: GatewayProcess, code: string): Promise<number> {
  const text = await (await fetch(`${gateway.adminUrl}/admin/metrics`, { headers: { authorization: `Bearer ${gateway.adminToken}` } })).text();
  const line = text.split('\n').find((l) => l.startsWith(`jwt_refusals_total{code="${code}"}`));
  return Number(line?.split(' ')[1] ?? 0);
}

/** A key no partner ever registered (one for the file: what matters is that it is not the partner's). */
const attackerKey = makeKeyPair();

/** A token in the partner's name signed with a key the partner never registered. */
async function forged(partner: TestPartner): Promise<string> {
  const token = await signPartnerToken({ partnerId: partner.id, issuer: partner.issuer, privateKey: attackerKey.privateKey, ttlSeconds: 60 });
  recordSecret('jwt', token);
  return token;
}

/**
 * One gateway for both describes, with the shipped limits and TRUST_PROXY naming 127.0.0.6 only:
 * the first describe's clients (127.0.0.1 to .5) are not that proxy, so for them X-Forwarded-For
 * means nothing, as without TRUST_PROXY; each describe uses addresses and partners of its own.
 */
describe('e2e: failed authentication throttling', function () {
  this.timeout(90_000);
  let gateway: GatewayProcess;

  before(async function () {
    gateway = await startGatewayProcess({ env: { TRUST_PROXY: '127.0.0.6' } });
  });
  after(async function () {
    await gateway?.stop();
  });

  describe('is throttled before verification', function () {
    this.timeout(90_000);
    let victim: TestPartner;
    let bystander: TestPartner;

    before(async function () {
      victim = await registerPartner(gateway, 'throttle-victim');
      bystander = await registerPartner(gateway, 'throttle-bystander');
    });

    it(`40 forged tokens naming a real partner: ${PER_PARTNER} verified and refused, then 429 with Retry-After without verification; other partners and the partner's own address unaffected`, async function () {
      // The victim's own integration has verified a token from 127.0.0.3 before the attack.
      expect((await meFrom(gateway, '127.0.0.3', await victim.token())).status).to.equal(200);
      const verifiedBefore = await jwtRefusals(gateway, 'signature_invalid');

      const answers: Answer[] = [];
      for (let i = 0; i < 40; i++) answers.push(await meFrom(gateway, '127.0.0.1', await forged(victim)));
      expect(answers.slice(0, PER_PARTNER).map((a) => `${a.status} ${a.code}`)).to.deep.equal(Array(PER_PARTNER).fill('401 signature_invalid'));
      for (const answer of answers.slice(PER_PARTNER)) {
        expect(answer).to.include({ status: 429, code: 'rate_limited' });
        expect(Number(answer.retryAfter)).to.be.within(1, 60);
      }
      // Only the first ones reached the signature check (the refusal counter counts verifications that failed).
      expect((await jwtRefusals(gateway, 'signature_invalid')) - verifiedBefore).to.equal(PER_PARTNER);

      // From another address, forged tokens naming the partner are refused before verification too.
      expect(await meFrom(gateway, '127.0.0.2', await forged(victim))).to.include({ status: 429, code: 'rate_limited' });
      // Another partner, from the attacking address itself: unaffected (the address is below its own limit).
      expect((await meFrom(gateway, '127.0.0.1', await bystander.token())).status).to.equal(200);
      // The victim itself, with a new token from the address it authenticated from before: unaffected.
      expect((await meFrom(gateway, '127.0.0.3', await victim.token())).status).to.equal(200);
    });

    it(`an address over ${PER_ADDRESS} failures is answered 429 whichever partner it names; other addresses are unaffected`, async function () {
      const answers: Answer[] = [];
      // Forged tokens spread over fresh partners, so that only the address count is reached.
      const targets = await Promise.all(Array.from({ length: 4 }, (_, i) => registerPartner(gateway, `throttle-target-${i}`)));
      for (let i = 0; i < PER_ADDRESS + 5; i++) answers.push(await meFrom(gateway, '127.0.0.4', await forged(targets[i % targets.length])));
      expect(answers.filter((a) => a.status === 401)).to.have.length(PER_ADDRESS);
      expect(answers.slice(PER_ADDRESS).every((a) => a.status === 429 && a.code === 'rate_limited')).to.equal(true);
      expect(await meFrom(gateway, '127.0.0.4', await targets[0].token())).to.include({ status: 429, code: 'rate_limited' });
      expect((await meFrom(gateway, '127.0.0.5', await targets[0].token())).status).to.equal(200);
    });
  });

  /**
   * Behind a load balancer every TCP peer is the balancer: with TRUST_PROXY naming it, the failures
   * are counted per client of X-Forwarded-For, so one client's forged tokens never throttle another
   * partner's requests through the same balancer. Without TRUST_PROXY, X-Forwarded-For is ignored.
   */
  describe('behind a trusted proxy, is counted per forwarded client', function () {
    this.timeout(90_000);

    it(`one client over ${PER_ADDRESS} failures through the balancer (127.0.0.6) is 429; another client through it is not`, async function () {
      const targets = await Promise.all(Array.from({ length: 4 }, (_, i) => registerPartner(gateway, `proxied-target-${i}`)));
      const answers: Answer[] = [];
      for (let i = 0; i < PER_ADDRESS + 3; i++) answers.push(await meFrom(gateway, '127.0.0.6', await forged(targets[i % targets.length]), '203.0.113.7'));
      expect(answers.filter((a) => a.status === 401)).to.have.length(PER_ADDRESS);
      expect(answers.slice(PER_ADDRESS).every((a) => a.status === 429 && a.code === 'rate_limited')).to.equal(true);
      // Another client behind the same balancer, and the same client's forwarded address from an untrusted peer (ignored: the peer counts).
      expect((await meFrom(gateway, '127.0.0.6', await targets[0].token(), '203.0.113.8')).status).to.equal(200);
      expect((await meFrom(gateway, '127.0.0.7', await targets[0].token(), '203.0.113.7')).status).to.equal(200);
    });
  });
});
