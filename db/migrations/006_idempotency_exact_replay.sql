-- Issue 12. A replay is the first answer's bytes and headers, byte for byte (not a re-serialisation
-- of jsonb, whose key order differs), and a claim says who holds it and that its holder is alive.
-- response_body stays for answers recorded before this migration; new rows leave it NULL.
ALTER TABLE idempotency_keys
  ADD COLUMN response_bytes   bytea,
  ADD COLUMN response_headers jsonb,
  -- The claim's own id: only its holder completes, releases or refreshes it (a takeover makes a new one).
  ADD COLUMN claim_id         text,
  -- The claiming process (host, pid, instance), for operators.
  ADD COLUMN claimed_by       text,
  -- Refreshed by the holding process every few seconds while its handler runs; a claim whose
  -- heartbeat stopped is abandoned (its process is gone) and may be taken over
  -- (gateway/idempotency/idempotency-store.ts). NULL on claims made before this migration.
  ADD COLUMN heartbeat_at     timestamptz;
