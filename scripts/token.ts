/**
 * `npm run -s token -- --partner ID --issuer URL --key PRIVATE_KEY_FILE [--ttl 60] [--kid KID]`
 * prints an ES512 JWT for a partner, signed with its P-521 private key, so that a new user can call
 * the API with curl. The gateway never sees the private key: this runs on the partner's side.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import { parseArgs } from 'node:util';
import { SignJWT } from 'jose';

/** Signs a partner token (also used by tests and the quickstart). */
export async function signPartnerToken(options: {
  partnerId: string;
  issuer: string;
  privateKey: crypto.KeyObject | string;
  ttlSeconds?: number;
  kid?: string;
  now?: number;
}): Promise<string> {
  const key = typeof options.privateKey === 'string' ? crypto.createPrivateKey(options.privateKey) : options.privateKey;
  const iat = options.now ?? Math.floor(Date.now() / 1000);
  const header: { alg: 'ES512'; typ: 'JWT'; kid?: string } = { alg: 'ES512', typ: 'JWT' };
  if (options.kid) header.kid = options.kid;
  return new SignJWT({})
    .setProtectedHeader(header)
    .setIssuer(options.issuer)
    .setSubject(options.partnerId)
    .setIssuedAt(iat)
    .setExpirationTime(iat + (options.ttlSeconds ?? 60))
    .sign(key);
}

const USAGE = `usage: npm run -s token -- --partner ID --issuer URL --key PRIVATE_KEY_FILE [--ttl 60] [--kid KID]
  --partner ID       the partner's _id (the token's sub)
  --issuer URL       the issuer URL registered for the partner (the token's iss)
  --key FILE         the partner's P-521 private key (PEM)
  --ttl SECONDS      lifetime, default 60 (the gateway accepts at most 300)
  --kid KID          the key id to name in the header (when the partner has several keys)
  --help             this text
Prints the ES512 JWT and a newline.
`;

async function main(): Promise<void> {
  let parsed;
  try {
    parsed = parseArgs({
      options: {
      partner: { type: 'string' },
      issuer: { type: 'string' },
      key: { type: 'string' },
        ttl: { type: 'string', default: '60' },
        kid: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (err) {
    process.stderr.write(`token: ${(err as Error).message}\n${USAGE}`);
    process.exit(2);
  }
  const { values } = parsed;
  if (values.help) {
    process.stdout.write(USAGE);
    return;
  }
  if (!values.partner || !values.issuer || !values.key) {
    process.stderr.write(USAGE);
    process.exit(2);
  }
  const ttl = Number(values.ttl);
  if (!Number.isInteger(ttl) || ttl < 1) {
    process.stderr.write('--ttl must be a positive number of seconds\n');
    process.exit(2);
  }
  const token = await signPartnerToken({
    partnerId: values.partner,
    issuer: values.issuer,
    privateKey: fs.readFileSync(values.key, 'utf8'),
    ttlSeconds: ttl,
    kid: values.kid,
  });
  process.stdout.write(`${token}\n`);
}

if (require.main === module) {
  main().catch((err: unknown) => {
    process.stderr.write(`token: ${(err as Error).message}\n`);
    process.exit(1);
  });
}
