/**
 * Partner quickstart on the partner SDK (`npm install @partner-gateway/sdk`, docs/sdk.md): nothing
 * of the gateway's own code, only the SDK and Node.js 20 built-ins.
 *
 * It makes a P-521 key pair, gets itself registered (THE OPERATOR'S STEP, done here through the
 * sandbox admin API so that the example runs on its own), then with the SDK's client (which signs
 * and reuses short-lived ES512 tokens, adds Idempotency-Keys and retries) onboards an individual,
 * issues a virtual card, locks and unlocks it, reads its CVV (decrypted from under a one-off RSA
 * key of its own), and changes a card limit.
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
import crypto, { type KeyObject } from 'node:crypto';
import fs from 'node:fs';
import { PartnerGateway } from '@partner-gateway/sdk';

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

/** Step 1 (and the operator's step when needed): who the SDK signs tokens as. */
async function partnerIdentity(env: NodeJS.ProcessEnv): Promise<{ partnerId: string; issuer: string; privateKey: KeyObject | string; kid?: string }> {
  if (env.PARTNER_ID && env.PARTNER_ISSUER && env.PARTNER_KEY_FILE) {
    log('identity', `using the registered partner ${env.PARTNER_ID}`);
    // PKCS#8 or SEC1 PEM, as `npm run partners -- keygen` writes it.
    return { partnerId: env.PARTNER_ID, issuer: env.PARTNER_ISSUER, privateKey: fs.readFileSync(env.PARTNER_KEY_FILE, 'utf8') };
  }
  // The partner makes its key pair; the private key never leaves it.
  const { publicKey, privateKey } = crypto.generateKeyPairSync('ec', { namedCurve: 'P-521' });
  const publicKeyPem = publicKey.export({ type: 'spki', format: 'pem' }).toString();
  log('keys', 'made a P-521 (ES512) key pair; only the public key is shared');

  const adminToken = env.ADMIN_TOKEN;
  if (!adminToken) throw new Error('set ADMIN_TOKEN (sandbox: cat .data/admin-token), or PARTNER_ID, PARTNER_ISSUER and PARTNER_KEY_FILE');
  const issuer = env.PARTNER_ISSUER ?? `https://quickstart-${crypto.randomBytes(4).toString('hex')}.example`;
  const { partnerId, kid } = await operatorRegistersPartner(env.ADMIN_URL ?? 'http://127.0.0.1:9876', adminToken, { name: 'Quickstart Pay', issuer, publicKeyPem });
  log('operator', `[operator's step, sandbox only] registered partner ${partnerId} (issuer ${issuer}, kid ${kid})`);
  return { partnerId, issuer, privateKey, kid };
}

/** Runs the whole quickstart; returns what it did (printed as the last line). */
export async function quickstart(env: NodeJS.ProcessEnv = process.env) {
  const client = new PartnerGateway({ ...(await partnerIdentity(env)), baseUrl: env.PARTNER_API_URL ?? 'http://localhost:8080/api/partner' });

  const me = await client.me();
  log('me', `authenticated as ${me.partner.name} (${me.partner._id})`);

  // Creations get an Idempotency-Key from the SDK, reused if it has to retry.
  const individual = await client.individuals.create({
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
  });
  log('onboard', `individual ${individual._id}, clientID ${individual.clientID}, ${individual.applicationStatus}`);

  // clientCode must be the individual's clientID (set once the onboarding is approved).
  if (!individual.clientID) throw new Error(`individual ${individual._id} has no clientID (${individual.applicationStatus})`);
  const expDate = expiryIn(3);
  const card = await client.individuals.issueVirtualCard(individual._id, { expDate, clientCode: individual.clientID, currency: 'EUR', productCode: 'P-STD' });
  log('issue', `virtual card ${card.cardKey} (${card.cardMask}), ${card.status}`);

  const locked = await client.cards.lock(card.cardKey, { expDate, reason: 'Quickstart: lock' });
  log('lock', `${locked.status} (${locked.statusCode})`);
  const unlocked = await client.cards.unlock(card.cardKey, { expDate, reason: 'Quickstart: unlock' });
  log('unlock', `${unlocked.status} (${unlocked.statusCode})`);

  // The CVV is only ever sent encrypted: the SDK makes a one-off RSA key, sends its public half and decrypts.
  const { cvv } = await client.cards.revealCvv(card.cardKey, { expDate });
  // A real integration shows it to the cardholder and forgets it: never log a CVV.
  log('cvv', `decrypted the CVV with our RSA private key: ${'*'.repeat(cvv.length)} (${cvv.length} digits)`);

  const limit = await client.cards.setLimit(card.cardKey, 'dailyPurchase', { name: 'dailyPurchase', value: 750 });
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
