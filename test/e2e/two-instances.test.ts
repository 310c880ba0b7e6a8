import { expect } from 'chai';
import { startGatewayProcess, type GatewayProcess } from '../support/gateway-process';
import { adminCall, registerPartner } from '../support/partners';

describe('e2e: two gateway instances on one PostgreSQL', function () {
  this.timeout(60_000);
  let a: GatewayProcess;
  let b: GatewayProcess;

  before(async function () {
    if (process.env.TEST_DB === 'embedded') this.skip(); // LISTEN/NOTIFY needs real PostgreSQL; the embedded database serves one instance
    [a, b] = await Promise.all([startGatewayProcess(), startGatewayProcess()]);
  });
  after(async function () {
    await Promise.all([a?.stop(), b?.stop()]);
  });

  const me = async (gateway: GatewayProcess, token: string) =>
    (await fetch(`${gateway.baseUrl}/api/partner/me`, { headers: { authorization: `Bearer ${token}` } })).status;

  async function eventually(check: () => Promise<boolean>, timeoutMs = 5000): Promise<number> {
    const started = Date.now();
    while (Date.now() - started < timeoutMs) {
      if (await check()) return Date.now() - started;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error('condition not met in time');
  }

  it('refuses a cached token on every instance once its key is revoked or its partner disabled on one', async function () {
    const partner = await registerPartner(a, 'two-instances');
    const token = await partner.token({ ttlSeconds: 300 });
    expect(await me(a, token)).to.equal(200);
    expect(await me(b, token), 'verified and cached on B').to.equal(200);

    await adminCall(a, 'PATCH', `/admin/partners/${partner.id}`, { status: 'disabled' });
    expect(await me(a, token), 'refused at once on A').to.equal(401);
    const waited = await eventually(async () => (await me(b, token)) === 401);
    expect(waited).to.be.below(5000);

    await adminCall(a, 'PATCH', `/admin/partners/${partner.id}`, { status: 'active' });
    await eventually(async () => (await me(b, token)) === 200);
    await adminCall(b, 'DELETE', `/admin/partners/${partner.id}/keys/${encodeURIComponent(partner.kid)}`);
    expect(await me(b, token)).to.equal(401);
    await eventually(async () => (await me(a, token)) === 401);
  });
});
