import crypto, { type KeyObject } from 'node:crypto';
import { signPartnerToken } from '../../scripts/token';
import { recordSecret } from './secrets';

/** A P-521 key pair of a test partner. */
export interface PartnerKeyPair {
  privateKey: KeyObject;
  publicKey: KeyObject;
  publicPem: string;
}

/** Makes a P-521 key pair (what a partner does before registering). */
export function makeKeyPair(curve: 'P-521' | 'P-256' | 'P-384' = 'P-521'): PartnerKeyPair {
  const { privateKey, publicKey } = crypto.generateKeyPairSync('ec', { namedCurve: curve });
  return { privateKey, publicKey, publicPem: publicKey.export({ type: 'spki', format: 'pem' }).toString() };
}

/** A partner registered through the admin API, with a way to sign its tokens. */
export interface TestPartner {
  id: string;
  issuer: string;
  kid: string;
  keys: PartnerKeyPair;
  token(options?: { ttlSeconds?: number; kid?: string; now?: number }): Promise<string>;
}

/** Calls the admin API with the gateway's admin token; returns status and parsed body. */
export async function adminCall(
  gateway: { adminUrl: string; adminToken: string },
  method: string,
  urlPath: string,
  body?: unknown
): Promise<{ status: number; body: any; headers: Headers }> {
  const response = await fetch(`${gateway.adminUrl}${urlPath}`, {
    method,
    headers: {
      authorization: `Bearer ${gateway.adminToken}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : null, headers: response.headers };
}

/** Registers a new partner with a fresh P-521 key through the admin API. */
export async function registerPartner(
  gateway: { adminUrl: string; adminToken: string },
  name = `partner-${crypto.randomBytes(3).toString('hex')}`
): Promise<TestPartner> {
  const keys = makeKeyPair();
  const issuer = `https://${name}.example`;
  const created = await adminCall(gateway, 'POST', '/admin/partners', { name, issuer, publicKey: keys.publicPem });
  if (created.status !== 201) throw new Error(`partner registration failed: ${created.status} ${JSON.stringify(created.body)}`);
  const id = created.body._id as string;
  const kid = created.body.keys[0].kid as string;
  let reused: { token: string; expiresAt: number } | undefined;
  return {
    id,
    issuer,
    kid,
    keys,
    token: async (options = {}) => {
      // As a partner's client does, a token is reused while it has time left (at least half of its
      // 60 s): a fresh ES512 signature per request cost the run about 3,400 signatures and as many
      // verifications in the gateways. A test that needs a token of its own passes an option.
      const reusable = Object.keys(options).length === 0;
      if (reusable && reused && reused.expiresAt - Date.now() > 30_000) return reused.token;
      const token = await signPartnerToken({ partnerId: id, issuer, privateKey: keys.privateKey, ...options });
      // Every token made is recorded: the run's gateway logs are scanned for it (test/setup.ts).
      recordSecret('jwt', token);
      if (reusable) reused = { token, expiresAt: Date.now() + 60_000 };
      return token;
    },
  };
}
