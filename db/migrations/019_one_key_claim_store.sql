-- Issue 22. One key-claim store for the partners' and the operators' idempotency keys
-- (gateway/idempotency/key-claims.ts): the operators' table gets the columns the store writes in
-- both, so that an operator's answer is recorded as its exact bytes (as a partner's, since
-- migration 006) and its claim names its process. Rows recorded before keep their parsed
-- response_body and are replayed from it as before; nothing is rewritten.
ALTER TABLE admin_idempotency_keys
  ADD COLUMN claimed_by       text,
  ADD COLUMN response_bytes   bytea,
  ADD COLUMN response_headers jsonb;
