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
  // Wallet provisioning (docs/tokens.md): the wallet's inputs and the processor's payload for it.
  // Not `code`: it names every error's code; the verification code is kept out of loggers by construction.
  'certificates',
  'nonce',
  'nonceSignature',
  'activationData',
  'encryptedPassData',
  'ephemeralPublicKey',
  'opaquePaymentCard',
  'walletAccountId',
  'deviceId',
];

/** The value that stands in for a redacted one. */
export const REDACTED = '[REDACTED]';

const redactedKeySet = new Set(REDACTED_KEYS.map((k) => k.toLowerCase()));

/** True when a field of this name must never be logged (case-insensitive). */
export function isRedactedKey(key: string): boolean {
  return redactedKeySet.has(key.toLowerCase());
}

// A compact JWS/JWT lies inside a run of base64url characters and dots: header.payload.signature,
// the header starting "eyJ". The scan takes maximal runs only and looks for the token inside each
// run in code (redactJwtsInRun), so it is linear. A pattern that starts at "eyJ" and must then find
// a dot (such as `eyJ[A-Za-z0-9_-]{5,}\.…`) is quadratic: on "eyJeyJeyJ…" without a dot every
// "eyJ" reads to the end of the run before it fails (15 KB of it cost 90 to 190 ms).
const TOKEN_RUN = /[A-Za-z0-9_.-]+/g;
// A run of 13 to 19 digits (optionally spaced or dashed) that starts like a payment card (major
// industry identifier 2 to 6: Mastercard 2/5, Amex 3, Visa 4, Discover 6, ...) and passes the
// Luhn check looks like a PAN. Numbers starting with 1 (epoch milliseconds in request ids, say)
// are left alone: one in ten would pass Luhn by chance. Each try reads at most 37 characters.
const PAN_PATTERN = /\b[2-6](?:[ -]?\d){12,18}\b/g;
/** A partner's webhook signing secret (`whsec_` and base64url, docs/webhooks.md), wherever it appears in text: one prefix, one run. */
const WEBHOOK_SECRET_PATTERN = /whsec_[A-Za-z0-9_-]+/g;
const PAN_SEPARATORS = /[ -]/g;

/** The most characters of a URL that a log line keeps; longer ones end in {@link URL_TRUNCATED}. */
export const MAX_LOGGED_URL_LENGTH = 2048;
/** Appended to a logged URL that was cut at {@link MAX_LOGGED_URL_LENGTH} characters. */
export const URL_TRUNCATED = '…[truncated]';

/**
 * Redacts the JWTs in one run of base64url characters and dots, as the pattern
 * `eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*` would, in one pass: a JWT starts at the
 * first "eyJ" of a dot-separated segment that has at least 5 characters after it, is followed by a
 * payload segment of at least 5 characters and a (possibly empty) signature segment.
 */
function redactJwtsInRun(run: string): string {
  if (!run.includes('eyJ')) return run;
  const segments = run.split('.');
  const out: string[] = [];
  let i = 0;
  while (i < segments.length) {
    const segment = segments[i];
    const at = segment.indexOf('eyJ');
    if (at !== -1 && segment.length - at >= 8 && i + 2 < segments.length && segments[i + 1].length >= 5) {
      out.push(`${segment.slice(0, at)}[REDACTED_JWT]`);
      i += 3;
    } else {
      out.push(segment);
      i += 1;
    }
  }
  return out.join('.');
}

/** Replaces every JWT-looking token in free text with `[REDACTED_JWT]` (linear in the text's length). */
export function redactJwts(text: string): string {
  return text.includes('eyJ') ? text.replace(TOKEN_RUN, redactJwtsInRun) : text;
}

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
  return redactJwts(text).replace(WEBHOOK_SECRET_PATTERN, '[REDACTED_WEBHOOK_SECRET]').replace(PAN_PATTERN, (match) => (luhnValid(match.replace(PAN_SEPARATORS, '')) ? '[REDACTED_PAN]' : match));
}

/**
 * Cuts a (scrubbed) URL to {@link MAX_LOGGED_URL_LENGTH} characters and marks the cut, so that a
 * hostile 15 KB path costs a log line no more than 2 KB.
 */
export function capUrl(url: string): string {
  if (url.length <= MAX_LOGGED_URL_LENGTH) return url;
  let end = MAX_LOGGED_URL_LENGTH;
  const last = url.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end -= 1; // never split a surrogate pair
  return `${url.slice(0, end)}${URL_TRUNCATED}`;
}

/**
 * One path segment or query value as the application reads it (percent-decoding repeated up to
 * three times, so a double-encoded value is read too; each run of escapes on its own, so a
 * malformed one elsewhere does not stop it; `+` read as a space), scrubbed. The raw
 * text comes back unchanged when the decoded one holds nothing to remove; otherwise the scrubbed
 * decoded text, encoded again: `search=5355%207099%209999%209994` (a card number as a partner types
 * it, with spaces) is logged as `search=[REDACTED_PAN]`, never as the raw escapes.
 */
function scrubUrlPart(raw: string): string {
  // `+` is a space in a query and a separator a log reader sees between digits anywhere.
  let decoded = raw.replace(/\+/g, ' ');
  for (let round = 0; round < 3 && decoded.includes('%'); round++) {
    const next = decodeEscapes(decoded).replace(/\+/g, ' ');
    if (next === decoded) break;
    decoded = next;
  }
  if (decoded === raw) return raw;
  const scrubbed = scrubText(decoded);
  if (scrubbed === decoded) return raw;
  try {
    return encodeURIComponent(scrubbed).replace(/%5B(REDACTED[A-Z_]*)%5D/g, '[$1]');
  } catch {
    return REDACTED; // a lone surrogate cannot be encoded: the part goes whole
  }
}

/**
 * Decodes each run of `%XX` escapes on its own; a run that is not UTF-8 (or a lone `%`) stays as
 * it is, so one malformed escape cannot keep the rest of a value from being read.
 */
function decodeEscapes(text: string): string {
  return text.replace(/(?:%[0-9A-Fa-f]{2})+/g, (run) => {
    try {
      return decodeURIComponent(run);
    } catch {
      return run;
    }
  });
}

/**
 * Rewrites a URL or path for a log line: the values of redacted query parameters are replaced,
 * JWTs and PANs anywhere are scrubbed (in the text as sent and, segment by segment and value by
 * value, as decoded), and then the result is capped ({@link capUrl}). Scrubbing runs on the whole
 * URL first, so that a cut can never leave part of a token unscrubbed.
 *
 * @example redactUrl('/cards/X/cvv?expDate=01/2030&securityKey=MIIB') // '/cards/X/cvv?expDate=01/2030&securityKey=[REDACTED]'
 */
export function redactUrl(url: string): string {
  // Escapes and `+` are rare in the gateway's URLs: only then is each part decoded and checked.
  const encoded = url.includes('%') || url.includes('+');
  const q = url.indexOf('?');
  const path = q === -1 ? url : url.slice(0, q);
  const head = encoded ? path.split('/').map((segment) => scrubUrlPart(segment)).join('/') : path;
  if (q === -1) return capUrl(scrubText(head));
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
      if (isRedactedKey(name) && eq !== -1) return `${rawName}=${REDACTED}`;
      if (!encoded) return pair;
      return eq === -1 ? scrubUrlPart(pair) : `${scrubUrlPart(rawName)}=${scrubUrlPart(pair.slice(eq + 1))}`;
    })
    .join('&');
  return capUrl(scrubText(`${head}?${query}`));
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
