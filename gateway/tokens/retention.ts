import type { Queryable } from '../db/database';
import { deleteInBatches, RETENTION_BATCH } from '../db/retention';

/**
 * Forgets the tokenization decisions and the verification attempts made more than `retentionDays`
 * ago (`NOTIFICATIONS_RETENTION_DAYS`, default 7, as the authorization decisions: docs/tokens.md,
 * "What is stored"), in batches; returns how many of each went. They only have to outlive the
 * processor's retries of one request: past them, a repeat of a tokenization id finds its token
 * (`tokens`' unique tokenization id and reference: no second token, the token's status answered),
 * and a repeat of a verification id finds the token no longer pending. A claim still deciding is
 * kept until its lease is over. Idempotent; safe on several instances.
 */
export async function deleteExpiredTokenizations(db: Queryable, retentionDays: number, batch = RETENTION_BATCH): Promise<{ decisions: number; verifications: number }> {
  const decisions = await deleteInBatches(
    db,
    `DELETE FROM tokenization_decisions WHERE tokenization_id IN (
       SELECT tokenization_id FROM tokenization_decisions WHERE created_at < now() - make_interval(days => $1) AND (state = 'decided' OR lease_until < now())
        ORDER BY created_at LIMIT $2 FOR UPDATE SKIP LOCKED)`,
    [retentionDays],
    batch
  );
  const verifications = await deleteInBatches(
    db,
    `DELETE FROM token_verification_attempts WHERE verification_id IN (
       SELECT verification_id FROM token_verification_attempts WHERE created_at < now() - make_interval(days => $1)
        ORDER BY created_at LIMIT $2 FOR UPDATE SKIP LOCKED)`,
    [retentionDays],
    batch
  );
  return { decisions, verifications };
}
