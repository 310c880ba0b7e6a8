-- The gateway's real-time authorization decisions (docs/authorizations.md).
-- One row per authorization id the processing system asked about: claimed while it is decided
-- (`deciding`, with a lease), then `decided` with the decision, so a processor's repeat of the
-- same id, on any instance, gets the same answer without a second partner call or velocity count.
CREATE TABLE authorization_decisions (
  authorization_id  text PRIMARY KEY CHECK (length(authorization_id) BETWEEN 1 AND 100),
  transaction_id    text NOT NULL,
  card_key          text NOT NULL,
  state             text NOT NULL CHECK (state IN ('deciding', 'decided')),
  -- The claim's holder: a takeover (the lease ran out) gives the claim a new token, and only the
  -- holder of the current token may record the decision.
  claim_token       text NOT NULL,
  decision          jsonb,
  lease_until       timestamptz NOT NULL,
  created_at        timestamptz NOT NULL DEFAULT now(),
  decided_at        timestamptz,
  CHECK ((state = 'decided') = (decision IS NOT NULL))
);
CREATE INDEX authorization_decisions_created_idx ON authorization_decisions (created_at);

-- How the gateway decided a transaction's authorization (`authorization` of the partner view; AUTHORIZATION is a reserved word):
-- {decidedBy, rule?, partnerLatencyMs?}; null for a transaction the gateway was not asked about.
ALTER TABLE card_transactions ADD COLUMN decided_by jsonb;
