import { SignatureVerificationError, verifySignature } from '../../sdk/src';

/**
 * Whether `header` (a `Partner-Gateway-Signature`) signs `rawBody` with one of `secrets`, by the
 * partner SDK's check (what a partner's receiver runs), with a `t` at most `toleranceSeconds` away.
 */
export function signatureVerifies(header: string | undefined, rawBody: string, secrets: readonly string[], toleranceSeconds = 300): boolean {
  try {
    verifySignature(rawBody, header, secrets, { toleranceSeconds });
    return true;
  } catch (err) {
    if (err instanceof SignatureVerificationError) return false;
    throw err;
  }
}
