/**
 * Partner quickstart: a complete client of the Partner Card-Management API, written with only what
 * a partner has — Node.js 20 built-ins and `jose` — and nothing of the gateway's own code.
 *
 * It makes a P-521 key pair, gets itself registered (THE OPERATOR'S STEP, done here through the
 * sandbox admin API so that the example runs on its own), signs short-lived ES512 tokens, onboards
 * an individual, issues a virtual card, locks and unlocks it, reads its CVV encrypted under its own
 * RSA key and decrypts it, and changes a card limit.
 *
 * Run it against a local gateway (`npm start`) — see examples/README.md and docs/quickstart.md:
 *
 *   ADMIN_TOKEN=$(cat .data/admin-token) node dist/examples/quickstart.js
 *
 * Environment:
 *   PARTNER_API_URL   base URL of the partner API (default http://localhost:8080/api/partner)
 *   ADMIN_URL         the operator's admin API (default http://127.0.0.1:9876), sandbox only
 *   ADMIN_TOKEN       the operator's admin token, sandbox only
 *   PARTNER_ID, PARTNER_ISSUER, PARTNER_KEY_FILE
 *                     an already registered partner (its _id, issuer and P-521 private key PEM):
 *                     set them to skip key generation and the operator's step
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import { SignJWT, exportSPKI, generateKeyPair, type KeyLike } from 'jose';

/** A refused call: the problem (RFC 9457) the gateway answered. */
class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly problem: { code?: string; detail?: string; requestId?: string; invalidParams?: unknown }
  ) {
    super(`HTTP ${status} ${problem.code ?? ''}: ${problem.detail ?? ''} (requestId ${problem.requestId ?? '?'})`);
    this.name = 'ApiError';
  }
}

/** The identity the partner signs its tokens with. */
interface PartnerIdentity {
  partnerId: string;
  issuer: string;
  privateKey: KeyLike;
  /** The key id the operator registered (sent as `kid` so that the gateway tries that key only). */
  kid?: string;
}

/**
 * A minimal API client: a fresh 60-second ES512 token on every call (the gateway accepts at most
 * 300 s and recommends 60), JSON in and out, problems turned into {@link ApiError}.
 */
class PartnerApiClient {
  constructor(
    private readonly baseUrl: string,
    private readonly identity: PartnerIdentity
  ) {}

  /** Signs a short-lived token: ES512 (P-521), claims iss, sub, iat, exp. */
  async token(): Promise<string> {
    const header: { alg: 'ES512'; typ: 'JWT'; kid?: string } = { alg: 'ES512', typ: 'JWT' };
    if (this.identity.kid) header.kid = this.identity.kid;
    return new SignJWT({})
      .setProtectedHeader(header)
      .setIssuer(this.identity.issuer)
      .setSubject(this.identity.partnerId)
      .setIssuedAt()
      .setExpirationTime('60s')
      .sign(this.identity.privateKey);
  }

  async call<T>(method: string, path: string, options: { body?: unknown; query?: Record<string, string>; idempotencyKey?: string } = {}): Promise<T> {
    const url = new URL(`${this.baseUrl}${path}`);
    for (const [name, value] of Object.entries(options.query ?? {})) url.searchParams.set(name, value);
    const headers: Record<string, string> = { authorization: `Bearer ${await this.token()}`, accept: 'application/json' };
    if (options.body !== undefined) headers['content-type'] = 'application/json';
    // Creations are safe to retry with the same key for 24 hours.
    if (options.idempotencyKey) headers['idempotency-key'] = options.idempotencyKey;
    const response = await fetch(url, { method, headers, body: options.body === undefined ? undefined : JSON.stringify(options.body) });
    const text = await response.text();
    const body = text ? JSON.parse(text) : null;
    if (!response.ok) throw new ApiError(response.status, body ?? {});
    return body as T;
  }
}

function log(step: string, message: string): void {
  process.stdout.write(`${step.padEnd(10)} ${message}\n`);
}

/** MM/YYYY, `years` from now. */
function expiryIn(years: number): string {
  const now = new Date();
  return `${String(now.getUTCMonth() + 1).padStart(2, '0')}/${now.getUTCFullYear() + years}`;
}

/**
 * THE OPERATOR'S STEP, not the partner's: in production you send your PUBLIC key and issuer URL to
 * the operator, who registers them and gives you your partner _id. Against the sandbox this example
 * does it itself through the admin API, with the operator's admin token.
 */
async function operatorRegistersPartner(adminUrl: string, adminToken: string, partner: { name: string; issuer: string; publicKeyPem: string }) {
  const response = await fetch(`${adminUrl}/admin/partners`, {
    method: 'POST',
    headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: partner.name, issuer: partner.issuer, publicKey: partner.publicKeyPem }),
  });
  const body = (await response.json()) as { _id: string; keys: { kid: string }[]; detail?: string };
  if (response.status !== 201) throw new Error(`the operator could not register the partner: HTTP ${response.status} ${body.detail ?? ''}`);
  return { partnerId: body._id, kid: body.keys[0].kid };
}

/** Step 1 (and the operator's step when needed): the identity the tokens are signed with. */
async function partnerIdentity(env: NodeJS.ProcessEnv): Promise<PartnerIdentity> {
  if (env.PARTNER_ID && env.PARTNER_ISSUER && env.PARTNER_KEY_FILE) {
    log('identity', `using the registered partner ${env.PARTNER_ID}`);
    // PKCS#8 or SEC1 PEM, as `npm run partners -- keygen` writes it.
    return { partnerId: env.PARTNER_ID, issuer: env.PARTNER_ISSUER, privateKey: crypto.createPrivateKey(fs.readFileSync(env.PARTNER_KEY_FILE, 'utf8')) };
  }
  // The partner makes its key pair; the private key never leaves it.
  const { publicKey, privateKey } = await generateKeyPair('ES512', { extractable: true });
  const publicKeyPem = await exportSPKI(publicKey);
  log('keys', 'made a P-521 (ES512) key pair; only the public key is shared');

  const adminToken = env.ADMIN_TOKEN;
  if (!adminToken) throw new Error('set ADMIN_TOKEN (sandbox: cat .data/admin-token), or PARTNER_ID, PARTNER_ISSUER and PARTNER_KEY_FILE');
  const issuer = env.PARTNER_ISSUER ?? `https://quickstart-${crypto.randomBytes(4).toString('hex')}.example`;
  const { partnerId, kid } = await operatorRegistersPartner(env.ADMIN_URL ?? 'http://127.0.0.1:9876', adminToken, { name: 'Quickstart Pay', issuer, publicKeyPem });
  log('operator', `[operator's step, sandbox only] registered partner ${partnerId} (issuer ${issuer}, kid ${kid})`);
  return { partnerId, issuer, privateKey, kid };
}

/** The fields of a card (spec 2.3) this example uses. */
interface Card {
  cardKey: string;
  cardMask: string;
  status: string;
  expDate: string;
}

/** Card status result (spec 2.4). */
interface CardStatusResult {
  cardKey: string;
  status: string;
  statusCode: string;
}

/** Runs the whole quickstart; returns what it did (printed as the last line). */
export async function quickstart(env: NodeJS.ProcessEnv = process.env) {
  const api = new PartnerApiClient((env.PARTNER_API_URL ?? 'http://localhost:8080/api/partner').replace(/\/+$/, ''), await partnerIdentity(env));

  const me = await api.call<{ partner: { _id: string; name: string } }>('GET', '/me');
  log('me', `authenticated as ${me.partner.name} (${me.partner._id})`);

  const individual = await api.call<{ _id: string; clientID: string; applicationStatus: string }>('POST', '/individual/accounts', {
    idempotencyKey: crypto.randomUUID(),
    body: {
      firstName: 'Ada',
      middleName: 'Augusta',
      lastName: 'Lovelace',
      country: 'GB',
      city: 'London',
      zipCode: 'SW1Y 4LE',
      buildingNumber: '12',
      address1: 'St James Square',
      idType: 'PASSPORT',
      passportNumber: 'P1234567',
      issuingDate: '2020-01-15',
      validityDate: '2030-01-14',
      passportCountry: 'GB',
      birthCountry: 'GB',
      birthDate: '1990-12-10',
      nationality: 'GB',
      phone: '+447700900123',
      email: 'ada@example.com',
    },
  });
  log('onboard', `individual ${individual._id}, clientID ${individual.clientID}, ${individual.applicationStatus}`);

  const card = await api.call<Card>('POST', `/individual/accounts/${individual._id}/cards/virtual`, {
    idempotencyKey: crypto.randomUUID(),
    // clientCode must be the individual's clientID.
    body: { expDate: expiryIn(3), clientCode: individual.clientID, currency: 'EUR', productCode: 'P-STD' },
  });
  log('issue', `virtual card ${card.cardKey} (${card.cardMask}), ${card.status}`);

  const locked = await api.call<CardStatusResult>('POST', `/cards/${card.cardKey}/lock`, { body: { expDate: card.expDate, reason: 'Quickstart: lock' } });
  log('lock', `${locked.status} (${locked.statusCode})`);
  const unlocked = await api.call<CardStatusResult>('POST', `/cards/${card.cardKey}/unlock`, { body: { expDate: card.expDate, reason: 'Quickstart: unlock' } });
  log('unlock', `${unlocked.status} (${unlocked.statusCode})`);

  // The CVV is only ever sent encrypted (RSA-OAEP, SHA-256) under an RSA public key of ours.
  const rsa = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
  const securityKey = rsa.publicKey.export({ type: 'spki', format: 'der' }).toString('base64');
  const { cvv: encryptedCvv } = await api.call<{ cvv: string }>('GET', `/cards/${card.cardKey}/cvv`, { query: { expDate: card.expDate, securityKey } });
  const cvv = crypto
    .privateDecrypt({ key: rsa.privateKey, padding: crypto.constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha256' }, Buffer.from(encryptedCvv, 'base64'))
    .toString('utf8');
  // A real integration shows it to the cardholder and forgets it: never log a CVV.
  log('cvv', `decrypted the CVV with our RSA private key: ${'*'.repeat(cvv.length)} (${cvv.length} digits)`);

  const limit = await api.call<{ name: string; value: number; currency: string; used: number; available: number }>('PUT', `/cards/${card.cardKey}/limits/dailyPurchase`, {
    body: { name: 'dailyPurchase', value: 750 },
  });
  log('limit', `${limit.name} = ${limit.value} ${limit.currency} (available ${limit.available})`);

  return {
    partnerId: me.partner._id,
    individualId: individual._id,
    cardKey: card.cardKey,
    statuses: [card.status, locked.status, unlocked.status],
    cvvDigits: /^\d+$/.test(cvv) ? cvv.length : 0,
    limit: { name: limit.name, value: limit.value },
  };
}

if (require.main === module) {
  quickstart().then(
    (summary) => process.stdout.write(`done       ${JSON.stringify(summary)}\n`),
    (err: unknown) => {
      process.stderr.write(`quickstart failed: ${err instanceof Error ? err.message : String(err)}\n`);
      process.exit(1);
    }
  );
}
