/**
 * The one declared list of secrets that never reach a log line. It drives three mechanisms:
 * pino's `redact` (header paths), the deep key-based scrubber applied to every logged object,
 * and the query-string scrubber applied to every logged URL.
 *
 * The list lives in code, not in operator YAML, on purpose: removing an entry is a security
 * change that must go through review (docs/logging.md).
 */
export const REDACTED_KEYS: readonly string[] = [
  'authorization',
  'proxy-authorization',
  'cookie',
  'set-cookie',
  'x-admin-token',
  'token',
  'accessToken',
  'adminToken',
  'securityKey',
  'pin',
  'pinBlock',
  'newPin',
  'cvv',
  'cvv2',
  'cardNumber',
  'pan',
  'passportNumber',
  'taxIdNumber',
  'answer',
  'threeDsAnswer',
  'publicKey',
  'privateKey',
  'password',
  'secret',
];

/** The value that stands in for a redacted one. */
export const REDACTED = '[REDACTED]';

const redactedKeySet = new Set(REDACTED_KEYS.map((k) => k.toLowerCase()));

/** True when a field of this name must never be logged (case-insensitive). */
export function isRedactedKey(key: string): boolean {
  return redactedKeySet.has(key.toLowerCase());
}

// A compact JWS/JWT anywhere in a string: header.payload.signature, base64url, header starting "eyJ".
const JWT_PATTERN = /eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*/g;
// A run of 13 to 19 digits (optionally spaced or dashed) that starts like a payment card (major
// industry identifier 2 to 6: Mastercard 2/5, Amex 3, Visa 4, Discover 6, ...) and passes the
// Luhn check looks like a PAN. Numbers starting with 1 (epoch milliseconds in request ids, say)
// are left alone: one in ten would pass Luhn by chance.
const PAN_PATTERN = /\b[2-6](?:[ -]?\d){12,18}\b/g;

/** Luhn checksum of a digit string (true when valid). */
export function luhnValid(digits: string): boolean {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = digits.charCodeAt(digits.length - 1 - i) - 48;
    if (i % 2 === 1) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return sum % 10 === 0;
}

/** Removes anything that looks like a JWT or a full card number from free text. */
export function scrubText(text: string): string {
  return text
    .replace(JWT_PATTERN, '[REDACTED_JWT]')
    .replace(PAN_PATTERN, (match) => (luhnValid(match.replace(/[ -]/g, '')) ? '[REDACTED_PAN]' : match));
}

/**
 * Rewrites a URL or path so that the values of redacted query parameters are replaced.
 *
 * @example redactUrl('/cards/X/cvv?expDate=01/2030&securityKey=MIIB') // '/cards/X/cvv?expDate=01/2030&securityKey=[REDACTED]'
 */
export function redactUrl(url: string): string {
  const q = url.indexOf('?');
  if (q === -1) return scrubText(url);
  const head = url.slice(0, q);
  const query = url
    .slice(q + 1)
    .split('&')
    .map((pair) => {
      const eq = pair.indexOf('=');
      const rawName = eq === -1 ? pair : pair.slice(0, eq);
      let name = rawName;
      try {
        name = decodeURIComponent(rawName);
      } catch {
        // keep the raw name: a malformed escape is still checked against the list below
      }
      return isRedactedKey(name) && eq !== -1 ? `${rawName}=${REDACTED}` : pair;
    })
    .join('&');
  return scrubText(`${head}?${query}`);
}

const URL_KEYS = new Set(['url', 'path', 'originalurl', 'upstreamurl']);

/**
 * Deep copy of a value to be logged, with every redacted key replaced, URLs scrubbed and JWT- or
 * PAN-looking strings removed. Depth is bounded so that a cyclic or huge object cannot stall logging.
 */
export function redactValue(value: unknown, depth = 0, key = ''): unknown {
  if (value === null || value === undefined) return value;
  if (typeof value === 'string') {
    return URL_KEYS.has(key.toLowerCase()) ? redactUrl(value) : scrubText(value);
  }
  if (typeof value !== 'object') return value;
  if (depth > 8) return '[TRUNCATED]';
  if (Array.isArray(value)) return value.map((item) => redactValue(item, depth + 1, key));
  if (value instanceof Error) {
    return {
      type: value.name,
      message: scrubText(value.message),
      code: (value as { code?: unknown }).code,
      stack: value.stack === undefined ? undefined : scrubText(value.stack),
      cause: value.cause === undefined ? undefined : redactValue(value.cause, depth + 1),
    };
  }
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    out[k] = isRedactedKey(k) ? REDACTED : redactValue(v, depth + 1, k);
  }
  return out;
}
