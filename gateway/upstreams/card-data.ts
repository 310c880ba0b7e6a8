import { createPublicKey } from 'node:crypto';

/**
 * Card-number detection for everything an upstream hands the gateway (docs/cards.md, "Card numbers
 * from upstreams"). A PAN is 13 to 19 digits passing the Luhn check; in free text its digits may be
 * grouped by single spaces or hyphens (`5355 7099 9999 9994`). Nothing an upstream sends that holds
 * one is passed on to a partner or stored, except the two reveal fields (`cvv`, `cardNumber` of
 * `GET /cards/{id}/cvv|pan`), which must be RSA-OAEP ciphertexts under the partner's securityKey.
 *
 * Every function here is iterative and linear in its input: no recursion, whatever an upstream
 * sends.
 */

const MIN_PAN_DIGITS = 13;
const MAX_PAN_DIGITS = 19;

/** A run longer than this is card data for sure (it holds hundreds of 13-19 digit windows). */
const MAX_RUN_CHECKED = 64;

function isDigit(code: number): boolean {
  return code >= 48 && code <= 57;
}

/** Luhn check of `digits[start, end)`. */
function luhnValid(digits: number[], start: number, end: number): boolean {
  let sum = 0;
  let double = false;
  for (let i = end - 1; i >= start; i--) {
    let d = digits[i];
    if (double) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
    double = !double;
  }
  return sum % 10 === 0;
}

/** True when a run of digits holds a Luhn-valid window of 13 to 19 digits. */
function runHoldsPan(digits: number[]): boolean {
  if (digits.length < MIN_PAN_DIGITS) return false;
  if (digits.length > MAX_RUN_CHECKED) return true;
  for (let end = MIN_PAN_DIGITS; end <= digits.length; end++) {
    for (let length = MIN_PAN_DIGITS; length <= MAX_PAN_DIGITS && length <= end; length++) {
      if (luhnValid(digits, end - length, end)) return true;
    }
  }
  return false;
}

/**
 * True when `text` holds a card number: a Luhn-valid run of 13 to 19 digits, the digits possibly
 * grouped by single spaces or hyphens.
 *
 * @example containsCardNumber('card 5355 7099 9999 9994') // true
 * @example containsCardNumber('2026-03-01T10:15:00.000Z') // false
 */
export function containsCardNumber(text: string): boolean {
  let run: number[] = [];
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (isDigit(code)) {
      run.push(code - 48);
      continue;
    }
    // One space or hyphen between two digits groups them; anything else ends the run.
    const grouping = (code === 32 || code === 45) && run.length > 0 && i + 1 < text.length && isDigit(text.charCodeAt(i + 1));
    if (grouping) continue;
    if (runHoldsPan(run)) return true;
    run = [];
  }
  return runHoldsPan(run);
}

/**
 * True when an identifier IS a card number: one of its alphanumeric tokens (split on anything
 * else) is made of 13 to 19 digits only and passes Luhn. Random hexadecimal identifiers (a
 * `CK…` cardKey, a 24-hex id) often hold Luhn-valid digit runs by chance (about 1 in 1,400
 * cardKeys); they are opaque, so only an identifier that is a card number by itself is refused.
 */
export function identifierIsCardNumber(text: string): boolean {
  for (const token of text.split(/[^A-Za-z0-9]+/)) {
    if (/^[0-9]+$/.test(token) && token.length >= MIN_PAN_DIGITS && token.length <= MAX_PAN_DIGITS) {
      const digits = [...token].map(Number);
      if (luhnValid(digits, 0, digits.length)) return true;
    }
  }
  return false;
}

/** Mask characters issuers use in a masked PAN. */
const MASK_CHARACTERS = /^[*Xx\u2022]$/;

/**
 * True when `text` has the shape of a masked card number: 13 to 19 positions once single spaces or
 * hyphens between groups are removed, at most the first 6 and the last 4 of them digits, all the
 * others mask characters (`*`, `X`, `x`, `•`), at least one of them.
 *
 * @example isMaskedCardNumber('5355 70** **** 1234') // true
 * @example isMaskedCardNumber('5355 7099 9999 9994') // false
 */
export function isMaskedCardNumber(text: string): boolean {
  if (text.length > 64 || !/^[0-9*Xx\u2022]+(?:[ -][0-9*Xx\u2022]+)*$/.test(text)) return false;
  const positions = [...text.replace(/[ -]/g, '')];
  if (positions.length < MIN_PAN_DIGITS || positions.length > MAX_PAN_DIGITS) return false;
  let first = 0;
  while (first < positions.length && /[0-9]/.test(positions[first])) first++;
  let last = positions.length;
  while (last > first && /[0-9]/.test(positions[last - 1])) last--;
  if (first > 6 || positions.length - last > 4 || last === first) return false;
  return positions.slice(first, last).every((p) => MASK_CHARACTERS.test(p));
}

const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;
const BASE64URL = /^[A-Za-z0-9_-]+={0,2}$/;

/** Bytes of the RSA modulus of a partner's `securityKey` (base64 SPKI DER), or undefined when it is not an RSA key. */
export function rsaModulusBytes(securityKey: string): number | undefined {
  try {
    const key = createPublicKey({ key: Buffer.from(securityKey.trim().replace(/ /g, '+'), 'base64'), format: 'der', type: 'spki' });
    const bits = key.asymmetricKeyType === 'rsa' ? key.asymmetricKeyDetails?.modulusLength : undefined;
    return bits === undefined ? undefined : Math.ceil(bits / 8);
  } catch {
    return undefined;
  }
}

/**
 * True when `text` looks like an RSA-OAEP ciphertext: base64 (standard or url-safe) of exactly
 * `modulusBytes` bytes (the size of the key it was encrypted under), or, when the key size is not
 * known, of 256 to 1024 bytes in steps of 128 (RSA-2048 to RSA-8192). A plaintext CVV or PAN never
 * passes.
 */
export function looksLikeRsaCiphertext(text: string, modulusBytes?: number): boolean {
  if (text.length === 0 || text.length > 2048 || !(BASE64.test(text) || BASE64URL.test(text))) return false;
  // Trailing padding counted by a loop, not /=+$/ (quadratic on a long run of '=').
  let end = text.length;
  while (end > 0 && text.charCodeAt(end - 1) === 0x3d) end--;
  if (end % 4 === 1) return false;
  const bytes = Math.floor((end * 3) / 4);
  if (modulusBytes !== undefined) return bytes === modulusBytes;
  return bytes >= 256 && bytes <= 1024 && bytes % 128 === 0;
}

/**
 * Members whose value is an identifier (`id`, `_id`, `reference`, `…Id`, `…ID`, `…Key`, `…Hash`,
 * `…Reference`: `cardKey`, `accountId`, `clientID`, a config's `activeHash`, a network token's
 * `tokenReference`...): refused only when the identifier is itself a card number. Random hexadecimal values hold Luhn-valid digit runs by chance.
 */
const IDENTIFIER_MEMBER = /^(?:_?id|reference|.*(?:Id|ID|Key|Hash|Reference))$/;

/**
 * True when one value an upstream answered under `member` holds a card number: for an identifier
 * member ({@link IDENTIFIER_MEMBER}), only when it is a card number by itself; for any other, when
 * it contains one. Numbers are checked as their decimal text.
 *
 * @example memberHoldsCardNumber('currency', '5355709999999994') // true
 * @example memberHoldsCardNumber('cardKey', 'CK5355709999999994') // false
 */
export function memberHoldsCardNumber(member: string, value: string | number): boolean {
  const text = String(value);
  return IDENTIFIER_MEMBER.test(member) ? identifierIsCardNumber(text) : containsCardNumber(text);
}

/**
 * Members never read from an answer by the gateway except as a reveal: `cvv` / `cardNumber` are
 * the reveal fields of `GET /cards/{id}/cvv|pan` (checked as ciphertext by their transform) and a
 * leak anywhere else (the sandbox's `SANDBOX-LEAK` card), which every handler and transform drops.
 */
const REVEAL_MEMBERS: ReadonlySet<string> = new Set(['cvv', 'cardNumber']);

/**
 * Where an upstream's JSON answer carries card data the gateway could pass on or store, or
 * undefined when it carries none. The answer is walked iteratively (any depth):
 * - a `cardMask` member must have the masked shape ({@link isMaskedCardNumber});
 * - an identifier member ({@link IDENTIFIER_MEMBER}) must not be a card number by itself;
 * - `cvv` and `cardNumber` are left to the reveal transforms (see {@link REVEAL_MEMBERS});
 * - members listed in `unread` (data the caller never reads, such as the accounts service's echo
 *   of the partner's own input) are skipped: the caller must not read them;
 * - every other string, number and member name must not contain a card number.
 *
 * The answer names the member (`data.3.merchant.name`), never its value.
 *
 * @example cardDataIn({ cardMask: '5355709999999994' }) // 'cardMask is not a masked card number'
 */
export function cardDataIn(answer: unknown, unread: readonly string[] = []): string | undefined {
  const stack: Array<{ value: unknown; path: string; member: string | undefined }> = [{ value: answer, path: '', member: undefined }];
  while (stack.length > 0) {
    const { value, path, member } = stack.pop()!;
    const where = path || 'answer';
    if (member !== undefined && (REVEAL_MEMBERS.has(member) || unread.includes(member))) continue;
    if (member === 'cardMask' && value !== null && value !== undefined) {
      if (typeof value !== 'string' || !isMaskedCardNumber(value)) return `${where} is not a masked card number`;
      continue;
    }
    if (typeof value === 'string' || typeof value === 'number') {
      if (memberHoldsCardNumber(member ?? '', value)) return `${where} holds a card number`;
    } else if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i--) stack.push({ value: value[i], path: path ? `${path}.${i}` : String(i), member: undefined });
    } else if (value !== null && typeof value === 'object') {
      for (const [name, item] of Object.entries(value as Record<string, unknown>)) {
        if (containsCardNumber(name)) return `a member name of ${where} holds a card number`;
        stack.push({ value: item, path: path ? `${path}.${name}` : name, member: name });
      }
    }
  }
  return undefined;
}
