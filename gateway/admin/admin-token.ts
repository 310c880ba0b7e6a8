import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

/** File under DATA_DIR holding the generated admin token when ADMIN_TOKEN is not set. */
export const ADMIN_TOKEN_FILE = 'admin-token';

/**
 * The admin API's bearer token: `ADMIN_TOKEN` when set; otherwise a random 256-bit token generated
 * once into `DATA_DIR/admin-token` (mode 0600) and reused on later starts. The admin API never runs
 * without a token.
 */
export function resolveAdminToken(configured: string | undefined, dataDir: string): { token: string; source: 'env' | 'file' } {
  if (configured) return { token: configured, source: 'env' };
  const file = path.join(dataDir, ADMIN_TOKEN_FILE);
  fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  try {
    const existing = fs.readFileSync(file, 'utf8').trim();
    if (existing.length >= 32) return { token: existing, source: 'file' };
  } catch {
    // not there yet: generated below
  }
  const token = crypto.randomBytes(32).toString('base64url');
  fs.writeFileSync(file, `${token}\n`, { mode: 0o600 });
  return { token, source: 'file' };
}

/** Constant-time comparison of a presented bearer token with the configured one. */
export function tokenMatches(presented: string, expected: string): boolean {
  const a = crypto.createHash('sha256').update(presented).digest();
  const b = crypto.createHash('sha256').update(expected).digest();
  return crypto.timingSafeEqual(a, b);
}
