import type { RequestHandler } from 'express';
// jose's subpath modules, not its index (which loads every JWE/JWT/JWKS module: about 25 ms of CPU a start).
import * as joseErrors from 'jose/errors';
import { compactVerify } from 'jose/jws/compact/verify';
import { GatewayError, type ErrorCode } from '../../gateway/errors';
import { isObjectId } from '../../gateway/ids';
import type { PolicyContext } from '../policy';
import type { PartnerStore } from '../../gateway/partners/partner-store';
import type { CacheSnapshot, VerifiedTokenCache } from './verified-token-cache';
import type { FailedAuthLimiter } from './failed-auth-limiter';
import type { Logger } from '../../gateway/logging/logger';
import { clientAddressOf } from '../../gateway/http/client-address';
import type { Es512JwtParams } from './schema';
import type { Settings } from '../../gateway/settings';

/** What the es512-jwt policy needs of the gateway's services. */
export interface Es512JwtServices {
  partners: PartnerStore;
  tokenCache: VerifiedTokenCache;
  authFailures: FailedAuthLimiter;
  log: Logger;
  settings: Settings;
}

/** Header parameters that would let a token bring its own key: never trusted, always refused. */
const KEY_CARRYING_HEADERS = ['jwk', 'jku', 'x5u', 'x5c'];
const REQUIRED_CLAIMS = ['iss', 'sub', 'exp', 'iat'] as const;
const BEARER = /^Bearer[ ]+([^ ]+)[ ]*$/i;
const COMPACT_JWS = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;
const MAX_TOKEN_LENGTH = 8192;

function refuse(code: ErrorCode, detail: string): GatewayError {
  return new GatewayError(code, detail, {
    headers: { 'WWW-Authenticate': `Bearer realm="partner-api", error="invalid_token", error_description="${code}"` },
  });
}

function decodeSegment(segment: string, what: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(segment, 'base64url').toString('utf8'));
  } catch {
    throw refuse('token_malformed', `The token ${what} is not base64url-encoded JSON`);
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw refuse('token_malformed', `The token ${what} is not a JSON object`);
  }
  return parsed as Record<string, unknown>;
}

import type { VerifiedToken } from './verified-token-cache';
export type { VerifiedToken };

/**
 * One public answer for "no partner has this sub" and "the partner's issuer is not iss": telling
 * them apart would tell a prober which partner ids exist. The precise reason is logged only.
 */
const UNKNOWN_PARTNER_DETAIL = '"sub" and "iss" do not name a registered partner';

/** What the policy adds to a verification: the caller's address, the failed-auth limiter, the log. */
export interface VerificationContext {
  /** The client address (TCP peer) the failed-auth limits count by. */
  address?: string;
  limiter?: FailedAuthLimiter;
  log?: Logger;
  requestId?: string;
}

/**
 * Checks a bearer token and returns the partner it authenticates, or throws a 401 GatewayError
 * whose code says why (429 when too many verifications failed lately, see {@link FailedAuthLimiter}).
 * Cheap checks (shape, algorithm, claims, times) run before the partner lookup and the ~1 ms
 * ES512 signature verification.
 */
export async function verifyPartnerToken(
  authorization: string | undefined,
  partners: PartnerStore,
  params: Es512JwtParams,
  nowSeconds = Math.floor(Date.now() / 1000),
  cache?: VerifiedTokenCache,
  context: VerificationContext = {}
): Promise<VerifiedToken> {
  if (authorization === undefined || authorization === '') {
    throw refuse('token_missing', 'Send Authorization: Bearer <token>');
  }
  const match = BEARER.exec(authorization);
  if (!match) throw refuse('token_malformed', 'The Authorization header must be "Bearer <token>"');
  const token = match[1];
  // The exact same token was verified before, is not past its exp, and its partner has not
  // changed since: nothing to re-check.
  const known = cache?.get(token, nowSeconds * 1000);
  if (known) return known;
  const verified = await verifyFully(token, partners, params, nowSeconds, cache, context);
  cache?.set(token, verified.token, nowSeconds * 1000, verified.since);
  return verified.token;
}

async function verifyFully(
  token: string,
  partners: PartnerStore,
  params: Es512JwtParams,
  nowSeconds: number,
  cache: VerifiedTokenCache | undefined,
  context: VerificationContext
): Promise<{ token: VerifiedToken; since?: CacheSnapshot }> {
  if (token.length > MAX_TOKEN_LENGTH || !COMPACT_JWS.test(token)) {
    throw refuse('token_malformed', 'The token is not a compact JWS (header.payload.signature)');
  }
  const [headerSegment, payloadSegment, signatureSegment] = token.split('.');
  const header = decodeSegment(headerSegment, 'header');
  if (header.alg !== 'ES512') {
    throw refuse('alg_not_allowed', `Only ES512 is accepted, the token says ${JSON.stringify(header.alg ?? null)}`);
  }
  const carried = KEY_CARRYING_HEADERS.find((h) => h in header);
  if (carried) throw refuse('header_not_allowed', `The token header must not carry "${carried}": keys are registered with the operator`);
  if (header.crit !== undefined) throw refuse('header_not_allowed', 'The token header must not carry "crit"');
  if (header.kid !== undefined && (typeof header.kid !== 'string' || header.kid.length === 0 || header.kid.length > 200)) {
    throw refuse('token_malformed', 'The kid header must be a non-empty string');
  }
  if (signatureSegment.length === 0) throw refuse('signature_invalid', 'The token has no signature');

  const claims = decodeSegment(payloadSegment, 'payload');
  for (const name of REQUIRED_CLAIMS) {
    if (claims[name] === undefined || claims[name] === null) throw refuse('claim_missing', `The token has no "${name}" claim`);
  }
  const { iss, sub, exp, iat, nbf } = claims;
  if (typeof iss !== 'string' || iss.length === 0) throw refuse('claim_invalid', '"iss" must be a non-empty string');
  if (typeof sub !== 'string') throw refuse('claim_invalid', '"sub" must be a string');
  if (typeof exp !== 'number' || !Number.isFinite(exp)) throw refuse('claim_invalid', '"exp" must be a number of seconds');
  if (typeof iat !== 'number' || !Number.isFinite(iat)) throw refuse('claim_invalid', '"iat" must be a number of seconds');
  if (nbf !== undefined && (typeof nbf !== 'number' || !Number.isFinite(nbf))) throw refuse('claim_invalid', '"nbf" must be a number of seconds');

  const skew = params.clockSkewSeconds;
  if (exp <= iat) throw refuse('claim_invalid', '"exp" must be after "iat"');
  if (nowSeconds - skew >= exp) throw refuse('token_expired', `The token expired at ${new Date(exp * 1000).toISOString()}`);
  if (iat > nowSeconds + skew) throw refuse('token_not_yet_valid', '"iat" is in the future');
  if (typeof nbf === 'number' && nbf > nowSeconds + skew) throw refuse('token_not_yet_valid', '"nbf" is in the future');
  if (exp - iat > params.maxLifetimeSeconds) {
    throw refuse('lifetime_too_long', `exp - iat is ${exp - iat} s; at most ${params.maxLifetimeSeconds} s is accepted`);
  }

  const unknownPartner = (reason: 'sub_not_an_id' | 'no_such_partner' | 'issuer_mismatch') => {
    context.log?.info({ requestId: context.requestId, claimedPartner: isObjectId(sub) ? sub : undefined, reason }, 'partner token refused: unknown partner or issuer');
    return refuse('unknown_partner', UNKNOWN_PARTNER_DETAIL);
  };
  if (!isObjectId(sub)) throw unknownPartner('sub_not_an_id');

  // Too many failed verifications from this address or naming this partner: answered before the
  // partner lookup and the signature check, which are what a flood of forged tokens costs.
  const { limiter, address = 'unknown', log } = context;
  const throttled = limiter?.check(address, sub);
  if (throttled) {
    throw new GatewayError(
      'rate_limited',
      `Too many failed authentications ${throttled.scope === 'address' ? 'from this address' : 'naming this partner'}; retry in ${throttled.retryAfterSeconds} s`,
      { headers: { 'Retry-After': String(throttled.retryAfterSeconds) } }
    );
  }
  try {
    const verified = await checkAgainstPartner(token, partners, header, { iss, sub, iat, exp }, cache, unknownPartner);
    limiter?.succeeded(address, sub);
    return verified;
  } catch (err) {
    if (limiter && err instanceof GatewayError && err.status === 401) {
      for (const scope of limiter.failed(address, sub)) {
        log?.warn({ requestId: context.requestId, scope, claimedPartner: sub, limit: scope === 'address' ? limiter.limits.perAddress : limiter.limits.perPartner, windowMs: limiter.limits.windowMs }, 'failed authentications reached their limit: further attempts are answered 429 until the window ends');
      }
    }
    throw err;
  }
}

/** The part of a verification that reads the partner: its status, issuer, keys, and the signature. */
async function checkAgainstPartner(
  token: string,
  partners: PartnerStore,
  header: Record<string, unknown>,
  claims: VerifiedToken['claims'],
  cache: VerifiedTokenCache | undefined,
  unknownPartner: (reason: 'no_such_partner' | 'issuer_mismatch') => GatewayError
): Promise<{ token: VerifiedToken; since?: CacheSnapshot }> {
  const { iss, sub } = claims;
  if (cache?.isUnknown(sub)) throw unknownPartner('no_such_partner');
  // Credentials another verification read lately, unless the partner changed since; else read now,
  // with the snapshot taken BEFORE the read: if the partner changes (a key revoked, the partner
  // disabled) while this verification runs, neither the credentials nor its result are cached.
  const kept = cache?.credentials(sub);
  const since = kept?.since ?? cache?.snapshot(sub);
  const credentials = kept?.credentials ?? (await partners.credentials(sub));
  if (!credentials) {
    if (since) cache?.setUnknown(since);
    throw unknownPartner('no_such_partner');
  }
  if (!kept && since) cache?.setCredentials(since, credentials);
  // The issuer before the status: with a guessed id and a wrong issuer, a disabled partner looks
  // like no partner at all.
  if (credentials.partner.issuer !== iss) throw unknownPartner('issuer_mismatch');
  if (credentials.partner.status !== 'active') throw refuse('partner_disabled', 'The partner is disabled');

  if (typeof header.kid === 'string' && credentials.revokedKids.has(header.kid)) {
    throw refuse('key_revoked', 'The key this token names (kid) has been revoked');
  }
  const candidates = typeof header.kid === 'string' ? credentials.keys.filter((k) => k.kid === header.kid) : credentials.keys;
  if (candidates.length === 0) {
    throw refuse('key_unknown', typeof header.kid === 'string' ? 'No active key of the partner has this kid' : 'The partner has no active key');
  }
  for (const candidate of candidates) {
    try {
      await compactVerify(token, candidate.key, { algorithms: ['ES512'] });
      return { token: { partner: credentials.partner, kid: candidate.kid, claims }, since };
    } catch (err) {
      if (!(err instanceof joseErrors.JWSSignatureVerificationFailed) && !(err instanceof joseErrors.JOSEError)) throw err;
    }
  }
  throw refuse('signature_invalid', 'The signature does not verify with any active key of the partner');
}

/**
 * The es512-jwt policy: authenticates every request of its pipeline or ends it with a 401 problem.
 * Nothing after it in the pipeline runs for a refused token.
 */
export function es512Jwt(params: Es512JwtParams, { services }: PolicyContext<Es512JwtServices>): RequestHandler {
  const settings: Es512JwtParams = {
    clockSkewSeconds: params.clockSkewSeconds ?? 30,
    maxLifetimeSeconds: params.maxLifetimeSeconds ?? 300,
    cacheVerifiedTokens: params.cacheVerifiedTokens ?? true,
  };
  const { partners, tokenCache, authFailures, log, settings: gatewaySettings } = services;
  const clientAddress = clientAddressOf(gatewaySettings.trustProxy);
  const cache = settings.cacheVerifiedTokens ? tokenCache : undefined;
  return function es512JwtPolicy(req, _res, next) {
    const context: VerificationContext = { address: clientAddress(req), limiter: authFailures, log, requestId: req.requestId };
    verifyPartnerToken(req.headers.authorization, partners, settings, Math.floor(Date.now() / 1000), cache, context).then(
      (verified) => {
        req.partner = verified.partner;
        req.auth = { kid: verified.kid, claims: verified.claims };
        next();
      },
      (err: unknown) => next(err)
    );
  };
}
