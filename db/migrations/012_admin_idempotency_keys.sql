-- Issue 14 follow-up. Idempotency keys of the admin API's card status change
-- (POST /admin/cards/{cardKey}/status, gateway/idempotency/admin-keys.ts): an operator's retry with
-- the same Idempotency-Key carries the same upstream operation id to the issuer (which applies the
-- change once) and, once the change committed, is answered the stored result without a second
-- status-history row, audit entry or event. Kept apart from the partners' idempotency_keys: an
-- operator key belongs to no partner, and must never collide with, or be replayed to, one.
CREATE TABLE admin_idempotency_keys (
  key           text PRIMARY KEY CHECK (length(key) BETWEEN 1 AND 255),
  route         text NOT NULL,
  request_hash  text NOT NULL,
  -- The issuer's Idempotency-Key of this operation: drawn once, when the key is first claimed.
  operation_id  char(24) NOT NULL,
  state         text NOT NULL CHECK (state IN ('in_progress', 'completed', 'released')),
  -- Only its holder completes or releases a claim; a takeover (lease run out) draws a new one.
  claim_id      text NOT NULL,
  claimed_at    timestamptz NOT NULL DEFAULT now(),
  response_status integer,
  response_body jsonb,
  created_at    timestamptz NOT NULL DEFAULT now(),
  expires_at    timestamptz NOT NULL
);
CREATE INDEX admin_idempotency_keys_expiry_idx ON admin_idempotency_keys (expires_at);
