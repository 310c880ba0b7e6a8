-- Issue 12. One upstream operation id per partner operation, reused by every retry: the idempotency
-- record holds the id its upstream call carries (the onboarding id of an account creation, the
-- issuer's Idempotency-Key of a card creation, replace, re-issue or status change), written when
-- the key is claimed, so BEFORE the upstream call. A takeover of an abandoned claim and a retry
-- after a 5xx keep it (gateway/idempotency/idempotency-store.ts), so the upstream deduplicates.
ALTER TABLE idempotency_keys ADD COLUMN operation_id text;
-- 'released': a 5xx answer freed the key for a retry; the row stays so that the retry reuses its operation id.
ALTER TABLE idempotency_keys DROP CONSTRAINT IF EXISTS idempotency_keys_state_check;
ALTER TABLE idempotency_keys ADD CONSTRAINT idempotency_keys_state_check CHECK (state IN ('in_progress', 'completed', 'released'));
-- The reconciler now picks pending onboardings by their last attempt (a retry of the same operation
-- refreshes updated_at, so the reconciler leaves it to that retry).
CREATE INDEX individual_onboardings_pending_attempt_idx ON individual_onboardings (updated_at) WHERE provisioning = 'pending';
