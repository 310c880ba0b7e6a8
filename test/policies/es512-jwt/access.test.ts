import crypto, { type KeyObject } from 'node:crypto';
import { expect } from 'chai';
import { CompactSign } from 'jose';
import es512JwtPolicy from '../../../policies/es512-jwt';
import { makeKeyPair, type PartnerKeyPair } from '../../support/partners';
import { Writable } from 'node:stream';
import { createLogger } from '../../../gateway/logging/logger';
import { openServices, policyContext, serve, type InProcessServices } from '../../support/in-process';
import { rsaKeyPair } from '../../support/keys';

type Claims = Record<string, unknown>;

const b64 = (value: unknown) => Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url');

async function signWith(header: Record<string, unknown>, claims: Claims, key: KeyObject | Uint8Array): Promise<string> {
  return new CompactSign(new TextEncoder().encode(JSON.stringify(claims)))
    .setProtectedHeader(header as { alg: string })
    .sign(key);
}

/** ES512 by hand, for headers jose refuses to produce (e.g. an unknown crit extension). */
function rawEs512(header: Record<string, unknown>, claims: Claims, key: KeyObject): string {
  const signingInput = `${b64({ alg: 'ES512', ...header })}.${b64(claims)}`;
  const signature = crypto.sign('sha512', Buffer.from(signingInput), { key, dsaEncoding: 'ieee-p1363' });
  return `${signingInput}.${signature.toString('base64url')}`;
}

function hmacToken(alg: 'HS256' | 'HS512', claims: Claims, secret: string): string {
  const signingInput = `${b64({ alg, typ: 'JWT' })}.${b64(claims)}`;
  const digest = alg === 'HS256' ? 'sha256' : 'sha512';
  return `${signingInput}.${crypto.createHmac(digest, secret).update(signingInput).digest('base64url')}`;
}

interface Case {
  description: string;
  authorization: () => Promise<string | undefined>;
  expectedCode: string;
}

describe('es512-jwt policy: access (table-driven, real PostgreSQL)', function () {
  let services: InProcessServices;
  let server: { url: string; close(): Promise<void> };
  let handlerExecuted = 0;
  let partner: { id: string; issuer: string; kid: string; keys: PartnerKeyPair };
  let other: { id: string; issuer: string; keys: PartnerKeyPair };
  let disabled: { id: string; issuer: string; keys: PartnerKeyPair };
  let revokedKey: PartnerKeyPair;
  const revokedKid = 'revoked-key-1';
  const attacker = makeKeyPair();
  const now = () => Math.floor(Date.now() / 1000);
  const claims = (overrides: Claims = {}): Claims => {
    const iat = now();
    return { iss: partner.issuer, sub: partner.id, iat, exp: iat + 60, ...overrides };
  };
  const without = (name: string): Claims => {
    const c = claims();
    delete c[name];
    return c;
  };
  const es512 = (c: Claims, key: KeyObject = partner.keys.privateKey, header: Record<string, unknown> = {}) =>
    signWith({ alg: 'ES512', ...header }, c, key);

  const logLines: Record<string, unknown>[] = [];
  const logSink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n')) if (line.startsWith('{')) logLines.push(JSON.parse(line));
      done();
    },
  });

  before(async function () {
    services = await openServices(undefined, { log: createLogger({ level: 'info', destination: logSink }) });
    const create = async (name: string) => {
      const keys = makeKeyPair();
      const issuer = `https://${name}-${crypto.randomBytes(3).toString('hex')}.example`;
      const created = await services.partners.create({ name, issuer, publicKey: keys.publicPem });
      return { id: created._id, issuer, kid: created.keys[0].kid, keys };
    };
    partner = await create('table-partner');
    other = await create('other-partner');
    disabled = await create('disabled-partner');
    await services.partners.setStatus(disabled.id, 'disabled');
    revokedKey = makeKeyPair();
    await services.partners.addKey(partner.id, { publicKey: revokedKey.publicPem, kid: revokedKid });
    await services.partners.revokeKey(partner.id, revokedKid);

    const policy = es512JwtPolicy.policy({ clockSkewSeconds: 30, maxLifetimeSeconds: 300 }, policyContext(services));
    server = await serve(
      [
        policy,
        (req, res) => {
          handlerExecuted += 1;
          res.json({ partnerId: req.partner?._id, kid: req.auth?.kid });
        },
      ],
      services.log
    );
  });

  after(async function () {
    await server?.close();
    await services?.close();
  });

  async function call(authorization: string | undefined) {
    const response = await fetch(`${server.url}/probe`, { headers: authorization === undefined ? {} : { authorization } });
    const text = await response.text();
    return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : null };
  }

  const bearer = (token: () => Promise<string> | string) => async () => `Bearer ${await token()}`;

  const cases: Case[] = [
    { description: 'no Authorization header', authorization: async () => undefined, expectedCode: 'token_missing' },
    { description: 'empty Authorization header', authorization: async () => '', expectedCode: 'token_missing' },
    { description: 'Basic scheme instead of Bearer', authorization: async () => `Basic ${b64('a:b')}`, expectedCode: 'token_malformed' },
    { description: 'Bearer without a token', authorization: async () => 'Bearer ', expectedCode: 'token_malformed' },
    { description: 'garbage token', authorization: async () => 'Bearer not-a-jwt', expectedCode: 'token_malformed' },
    { description: 'two segments only', authorization: async () => `Bearer ${b64({ alg: 'ES512' })}.${b64(claims())}`, expectedCode: 'token_malformed' },
    { description: 'header is not JSON', authorization: async () => `Bearer ${b64('{nope')}.${b64(claims())}.AAAA`, expectedCode: 'token_malformed' },
    { description: 'two tokens in the header', authorization: async () => `Bearer ${await es512(claims())} ${await es512(claims())}`, expectedCode: 'token_malformed' },
    { description: 'oversized token (9 KB)', authorization: async () => `Bearer ${b64({ alg: 'ES512' })}.${'A'.repeat(9000)}.AAAA`, expectedCode: 'token_malformed' },
    { description: 'alg none, unsigned', authorization: async () => `Bearer ${b64({ alg: 'none', typ: 'JWT' })}.${b64(claims())}.`, expectedCode: 'alg_not_allowed' },
    { description: 'alg "NONE" in capitals', authorization: async () => `Bearer ${b64({ alg: 'NONE' })}.${b64(claims())}.`, expectedCode: 'alg_not_allowed' },
    { description: 'header without alg', authorization: async () => `Bearer ${b64({ typ: 'JWT' })}.${b64(claims())}.AAAA`, expectedCode: 'alg_not_allowed' },
    {
      description: 'HS512 keyed with the PEM text of the partner public key (algorithm confusion)',
      authorization: async () => `Bearer ${hmacToken('HS512', claims(), partner.keys.publicPem)}`,
      expectedCode: 'alg_not_allowed',
    },
    { description: 'HS256 with a guessed secret', authorization: async () => `Bearer ${hmacToken('HS256', claims(), 'secret')}`, expectedCode: 'alg_not_allowed' },
    {
      description: 'RS256 signed with an RSA key',
      authorization: bearer(() => signWith({ alg: 'RS256' }, claims(), rsaKeyPair().privateKey)),
      expectedCode: 'alg_not_allowed',
    },
    {
      description: 'PS512 signed with an RSA key',
      authorization: bearer(() => signWith({ alg: 'PS512' }, claims(), rsaKeyPair().privateKey)),
      expectedCode: 'alg_not_allowed',
    },
    { description: 'ES256 on P-256', authorization: bearer(() => signWith({ alg: 'ES256' }, claims(), makeKeyPair('P-256').privateKey)), expectedCode: 'alg_not_allowed' },
    { description: 'ES384 on P-384', authorization: bearer(() => signWith({ alg: 'ES384' }, claims(), makeKeyPair('P-384').privateKey)), expectedCode: 'alg_not_allowed' },
    {
      description: 'ES512 header over an ES256 signature from a P-256 key (another curve)',
      authorization: async () => {
        const token = await signWith({ alg: 'ES256' }, claims(), makeKeyPair('P-256').privateKey);
        const [, payload, signature] = token.split('.');
        return `Bearer ${b64({ alg: 'ES512' })}.${payload}.${signature}`;
      },
      expectedCode: 'signature_invalid',
    },
    {
      description: 'header jwk carrying the attacker\'s own key',
      authorization: async () => {
        const jwk = attacker.publicKey.export({ format: 'jwk' });
        return `Bearer ${await es512(claims(), attacker.privateKey, { jwk })}`;
      },
      expectedCode: 'header_not_allowed',
    },
    { description: 'header jku pointing elsewhere', authorization: bearer(() => es512(claims(), attacker.privateKey, { jku: 'https://attacker.example/jwks' })), expectedCode: 'header_not_allowed' },
    { description: 'header x5u', authorization: bearer(() => es512(claims(), undefined, { x5u: 'https://attacker.example/cert' })), expectedCode: 'header_not_allowed' },
    { description: 'header x5c', authorization: bearer(() => es512(claims(), undefined, { x5c: ['MIIB'] })), expectedCode: 'header_not_allowed' },
    { description: 'missing iss', authorization: bearer(() => es512(without('iss'))), expectedCode: 'claim_missing' },
    { description: 'missing sub', authorization: bearer(() => es512(without('sub'))), expectedCode: 'claim_missing' },
    { description: 'missing exp', authorization: bearer(() => es512(without('exp'))), expectedCode: 'claim_missing' },
    { description: 'missing iat', authorization: bearer(() => es512(without('iat'))), expectedCode: 'claim_missing' },
    { description: 'exp as a string', authorization: bearer(() => es512(claims({ exp: String(now() + 60) }))), expectedCode: 'claim_invalid' },
    { description: 'exp before iat', authorization: bearer(() => es512(claims({ iat: now(), exp: now() - 1 }))), expectedCode: 'claim_invalid' },
    { description: 'expired 60 s ago (beyond the 30 s skew)', authorization: bearer(() => es512(claims({ iat: now() - 120, exp: now() - 60 }))), expectedCode: 'token_expired' },
    { description: 'iat 120 s in the future', authorization: bearer(() => es512(claims({ iat: now() + 120, exp: now() + 180 }))), expectedCode: 'token_not_yet_valid' },
    { description: 'nbf 120 s in the future', authorization: bearer(() => es512(claims({ nbf: now() + 120 }))), expectedCode: 'token_not_yet_valid' },
    { description: 'lifetime of one hour (max 300 s)', authorization: bearer(() => es512(claims({ exp: now() + 3600 }))), expectedCode: 'lifetime_too_long' },
    { description: 'sub is not an object id', authorization: bearer(() => es512(claims({ sub: 'acme' }))), expectedCode: 'unknown_partner' },
    { description: 'sub of no registered partner', authorization: bearer(() => es512(claims({ sub: 'ffffffffffffffffffffffff' }))), expectedCode: 'unknown_partner' },
    // One public code for "no such partner" and "issuer does not match" (the precise reason is logged only).
    { description: 'iss does not match the partner', authorization: bearer(() => es512(claims({ iss: 'https://evil.example' }))), expectedCode: 'unknown_partner' },
    {
      description: 'signed by another partner\'s key (sub of this partner)',
      authorization: async () => `Bearer ${await es512(claims(), other.keys.privateKey)}`,
      expectedCode: 'signature_invalid',
    },
    {
      description: 'tampered payload (exp extended after signing)',
      authorization: async () => {
        const [header, , signature] = (await es512(claims())).split('.');
        return `Bearer ${header}.${b64(claims({ exp: now() + 299 }))}.${signature}`;
      },
      expectedCode: 'signature_invalid',
    },
    {
      description: 'tampered payload (sub swapped to another partner)',
      authorization: async () => {
        const [header, , signature] = (await es512(claims())).split('.');
        return `Bearer ${header}.${b64(claims({ sub: other.id, iss: other.issuer }))}.${signature}`;
      },
      expectedCode: 'signature_invalid',
    },
    {
      description: 'truncated signature',
      authorization: async () => {
        const token = await es512(claims());
        return `Bearer ${token.slice(0, token.length - 10)}`;
      },
      expectedCode: 'signature_invalid',
    },
    {
      description: 'signature stripped',
      authorization: async () => {
        const [header, payload] = (await es512(claims())).split('.');
        return `Bearer ${header}.${payload}.`;
      },
      expectedCode: 'signature_invalid',
    },
    { description: 'signed by the attacker\'s P-521 key', authorization: bearer(() => es512(claims(), attacker.privateKey)), expectedCode: 'signature_invalid' },
    { description: 'kid of no key of the partner', authorization: bearer(() => es512(claims(), undefined, { kid: 'no-such-kid' })), expectedCode: 'key_unknown' },
    { description: 'kid of a revoked key', authorization: bearer(() => es512(claims(), revokedKey.privateKey, { kid: revokedKid })), expectedCode: 'key_revoked' },
    { description: 'no kid, signed by a revoked key', authorization: bearer(() => es512(claims(), revokedKey.privateKey)), expectedCode: 'signature_invalid' },
    {
      description: 'disabled partner, valid signature',
      authorization: async () => `Bearer ${await es512({ iss: disabled.issuer, sub: disabled.id, iat: now(), exp: now() + 60 }, disabled.keys.privateKey)}`,
      expectedCode: 'partner_disabled',
    },
    {
      description: 'crit header naming an extension',
      authorization: bearer(() => rawEs512({ crit: ['x-ext'], 'x-ext': 1 }, claims(), partner.keys.privateKey)),
      expectedCode: 'header_not_allowed',
    },
    {
      description: 'hand-made ES512 with a wrong-partner issuer in the right format',
      authorization: bearer(() => rawEs512({}, claims({ iss: other.issuer }), partner.keys.privateKey)),
      expectedCode: 'unknown_partner',
    },
    {
      description: 'disabled partner named with a wrong issuer',
      authorization: async () => `Bearer ${await es512({ iss: 'https://guess.example', sub: disabled.id, iat: now(), exp: now() + 60 }, attacker.privateKey)}`,
      expectedCode: 'unknown_partner',
    },
  ];

  it(`has at least 25 invalid-token cases (${cases.length})`, function () {
    expect(cases.length).to.be.at.least(25);
  });

  for (const testCase of cases) {
    it(`refuses ${testCase.description} → 401 ${testCase.expectedCode}, handler not reached`, async function () {
      const before = handlerExecuted;
      const response = await call(await testCase.authorization());
      expect(response.status).to.equal(401);
      expect(response.headers.get('content-type')).to.match(/^application\/problem\+json/);
      expect(response.headers.get('www-authenticate')).to.match(/^Bearer .*error="invalid_token"/);
      expect(response.body.code).to.equal(testCase.expectedCode);
      expect(response.body.status).to.equal(401);
      expect(response.body.type).to.equal(`https://partner-gateway.dev/problems/${testCase.expectedCode}`);
      expect(response.body.requestId).to.be.a('string');
      expect(handlerExecuted, 'handler must not run').to.equal(before);
    });
  }

  it('answers an unknown partner and a wrong issuer alike (status, code, title, detail, headers); only the log tells them apart', async function () {
    const unknownSub = 'eeeeeeeeeeeeeeeeeeeeeeee';
    const unknown = await call(`Bearer ${await es512(claims({ sub: unknownSub }), attacker.privateKey)}`);
    const mismatch = await call(`Bearer ${await es512(claims({ iss: 'https://guess.example' }), attacker.privateKey)}`);
    const publicPart = (r: Awaited<ReturnType<typeof call>>) => ({
      status: r.status,
      wwwAuthenticate: r.headers.get('www-authenticate'),
      contentType: r.headers.get('content-type'),
      body: { ...r.body, requestId: undefined },
    });
    expect(publicPart(unknown)).to.deep.equal(publicPart(mismatch));
    expect(unknown.body).to.include({ status: 401, code: 'unknown_partner', title: 'Unknown partner or issuer' });
    const reasons = await (async () => {
      const deadline = Date.now() + 5000;
      for (;;) {
        const found = [unknown, mismatch].map((r) => logLines.find((l) => l.requestId === r.body.requestId && l.msg === 'partner token refused: unknown partner or issuer'));
        if (found.every(Boolean) || Date.now() > deadline) return found.map((l) => l?.reason);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    })();
    expect(reasons).to.deep.equal(['no_such_partner', 'issuer_mismatch']);
  });

  const accepted: { description: string; token: () => Promise<string>; expectedKid: () => string }[] = [
    { description: 'a valid token without kid', token: () => es512(claims()), expectedKid: () => partner.kid },
    { description: 'a valid token with the kid of the key', token: () => es512(claims(), undefined, { kid: partner.kid }), expectedKid: () => partner.kid },
    { description: 'a token expired 10 s ago (within the 30 s skew)', token: () => es512(claims({ iat: now() - 70, exp: now() - 10 })), expectedKid: () => partner.kid },
    { description: 'iat 10 s in the future (within the skew)', token: () => es512(claims({ iat: now() + 10, exp: now() + 70 })), expectedKid: () => partner.kid },
    {
      description: 'a hand-made ES512 token (the signer the crit case uses)',
      token: async () => rawEs512({}, claims(), partner.keys.privateKey),
      expectedKid: () => partner.kid,
    },
    { description: 'a lifetime of exactly 300 s', token: () => es512(claims({ exp: now() + 300 })), expectedKid: () => partner.kid },
  ];
  for (const testCase of accepted) {
    it(`accepts ${testCase.description}`, async function () {
      const before = handlerExecuted;
      const response = await call(`Bearer ${await testCase.token()}`);
      expect(response.status).to.equal(200);
      expect(response.body).to.deep.equal({ partnerId: partner.id, kid: testCase.expectedKid() });
      expect(handlerExecuted).to.equal(before + 1);
    });
  }

  it('accepts a token signed with a rotated-in second key, and refuses it once that key is revoked', async function () {
    const second = makeKeyPair();
    const added = await services.partners.addKey(partner.id, { publicKey: second.publicPem });
    const token = await es512(claims(), second.privateKey);
    expect((await call(`Bearer ${token}`)).status).to.equal(200);
    await services.partners.revokeKey(partner.id, added.kid);
    const refused = await call(`Bearer ${token}`);
    expect(refused.status).to.equal(401);
    expect(refused.body.code).to.equal('signature_invalid');
    const withKid = await call(`Bearer ${await es512(claims(), second.privateKey, { kid: added.kid })}`);
    expect(withKid.body.code).to.equal('key_revoked');
  });

  it('refuses a disabled partner at once and accepts it again when re-enabled', async function () {
    const token = await es512({ iss: disabled.issuer, sub: disabled.id, iat: now(), exp: now() + 60 }, disabled.keys.privateKey);
    expect((await call(`Bearer ${token}`)).body.code).to.equal('partner_disabled');
    await services.partners.setStatus(disabled.id, 'active');
    expect((await call(`Bearer ${token}`)).status).to.equal(200);
    await services.partners.setStatus(disabled.id, 'disabled');
    expect((await call(`Bearer ${token}`)).status).to.equal(401);
  });
});
