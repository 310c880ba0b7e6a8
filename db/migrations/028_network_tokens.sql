-- Issue 35, cards in phone wallets (docs/tokens.md, docs/upstreams.md section 10): the network tokens,
-- the tokenization decisions and verification attempts with their fence at COMMIT, the token
-- reconciler's cursor, and every part's columns (docs/plans/issue-35.md, "The migration").
SET LOCAL lock_timeout = '5s';

-- The partner's network tokens (docs/tokens.md): the processor's state (status, version) as the
-- gateway last applied it, and the gateway's own facts (the card it stands for now, who holds it
-- suspended). No foreign key to cards: a replacement changes the card's key (card_transactions alike).
CREATE TABLE tokens (
  id                  text PRIMARY KEY CHECK (id ~ '^tok_[0-9a-f]{24}$'),
  partner_id          char(24) NOT NULL REFERENCES partners (id),
  card_key            text NOT NULL,
  individual_id       char(24),
  tenant_id           char(24),
  processor_ref       text NOT NULL CHECK (length(processor_ref) BETWEEN 1 AND 100),
  tokenization_id     text CHECK (length(tokenization_id) BETWEEN 1 AND 100),
  wallet_provider     text NOT NULL CHECK (wallet_provider IN ('apple_pay', 'google_pay', 'samsung_pay', 'merchant')),
  token_requestor_id  text NOT NULL CHECK (token_requestor_id ~ '^[0-9]{11}$'),
  last4               char(4) NOT NULL CHECK (last4 ~ '^[0-9]{4}$'),
  token_exp_date      char(7) NOT NULL CHECK (token_exp_date ~ '^(0[1-9]|1[0-2])/[0-9]{4}$'),
  device              jsonb NOT NULL CHECK (jsonb_typeof(device) = 'object'),
  status              text NOT NULL CHECK (status IN ('requested', 'pending_verification', 'active', 'suspended', 'deactivated', 'declined')),
  -- Who holds it suspended, in the partner's view (NULL: not suspended, or the network did).
  suspended_by        text CHECK (suspended_by IN ('partner', 'card_state')),
  -- The card's state asked for its suspension (the cascade): the card's return to ACTIVE resumes
  -- exactly the tokens holding this, unless the partner suspended them too.
  card_state_hold     boolean NOT NULL DEFAULT false,
  history             jsonb NOT NULL CHECK (jsonb_typeof(history) = 'array'),
  -- The processor's version of the state held; 0: the gateway's decision, before any processor state.
  version             integer NOT NULL DEFAULT 0 CHECK (version >= 0),
  -- While pending_verification: {hash, expiresAt, attemptsLeft}; never the code.
  verification        jsonb,
  -- A partner's operation whose outcome at the processor is unknown (a timeout): the reconciler reads the token.
  processor_check_due boolean NOT NULL DEFAULT false,
  created_at          timestamptz NOT NULL DEFAULT now(),
  updated_at          timestamptz NOT NULL DEFAULT now(),
  CHECK (suspended_by IS NULL OR status = 'suspended'),
  CHECK (verification IS NULL OR status = 'pending_verification')
);
-- One token per processor token, and per tokenization request: a repeat can never make a second
-- one, even after its decision row went with retention.
CREATE UNIQUE INDEX tokens_processor_ref_idx ON tokens (processor_ref);
CREATE UNIQUE INDEX tokens_tokenization_idx ON tokens (tokenization_id) WHERE tokenization_id IS NOT NULL;
-- GET /tokens: one index per filter, each in the list's order (newest first, ties by id), walked
-- until limit + 1 rows: none; cardKey (also GET /cards/{id}/tokens and the cascade's reads);
-- status; walletProvider; status and walletProvider together (a mix that matches little would
-- otherwise walk every row of the status: the transactions' status_type lesson).
CREATE INDEX tokens_partner_idx ON tokens (partner_id, created_at DESC, id DESC);
CREATE INDEX tokens_card_idx ON tokens (partner_id, card_key, created_at DESC, id DESC);
CREATE INDEX tokens_status_idx ON tokens (partner_id, status, created_at DESC, id DESC);
CREATE INDEX tokens_wallet_idx ON tokens (partner_id, wallet_provider, created_at DESC, id DESC);
CREATE INDEX tokens_status_wallet_idx ON tokens (partner_id, status, wallet_provider, created_at DESC, id DESC);
-- The token reconciler's second queue.
CREATE INDEX tokens_check_due_idx ON tokens (updated_at) WHERE processor_check_due;

-- The tokenization decisions: authorization_decisions' claim protocol on a table of its own
-- (docs/plans/issue-35.md, "Exactly once"). token_id is drawn by the first claim and told to the
-- partner's endpoint; a takeover keeps it.
CREATE TABLE tokenization_decisions (
  tokenization_id  text PRIMARY KEY CHECK (length(tokenization_id) BETWEEN 1 AND 100),
  token_id         text NOT NULL CHECK (token_id ~ '^tok_[0-9a-f]{24}$'),
  card_key         text NOT NULL,
  state            text NOT NULL CHECK (state IN ('deciding', 'decided')),
  claim_token      text NOT NULL,
  decision         jsonb,
  lease_until      timestamptz NOT NULL,
  commit_by        timestamptz,
  created_at       timestamptz NOT NULL DEFAULT now(),
  decided_at       timestamptz,
  CHECK ((state = 'decided') = (decision IS NOT NULL)),
  CHECK (state = 'deciding' OR commit_by IS NOT NULL)
);
CREATE INDEX tokenization_decisions_created_idx ON tokenization_decisions (created_at);

-- The processor's verification attempts (upstreams.md 10.4), each counted once.
CREATE TABLE token_verification_attempts (
  verification_id  text PRIMARY KEY CHECK (length(verification_id) BETWEEN 1 AND 100),
  token_id         text NOT NULL,
  outcome          jsonb NOT NULL,        -- the answer given: {verified, reason?, attemptsLeft?}
  commit_by        timestamptz NOT NULL,
  created_at       timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX token_verification_attempts_created_idx ON token_verification_attempts (created_at);

-- The fence of both at COMMIT, on the database's clock: a recording whose COMMIT runs past its
-- commit_by rolls back whole (PGW01, migration 024's authorization_before), however late it arrived.
-- Deferred, so it runs when the transaction commits, after every statement of it.
CREATE FUNCTION decision_recorded_in_time() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM authorization_before(NEW.commit_by);
  RETURN NULL;
END
$$;
CREATE CONSTRAINT TRIGGER tokenization_decisions_in_time AFTER UPDATE ON tokenization_decisions
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW WHEN (OLD.state = 'deciding' AND NEW.state = 'decided')
  EXECUTE FUNCTION decision_recorded_in_time();
CREATE CONSTRAINT TRIGGER token_verification_attempts_in_time AFTER INSERT ON token_verification_attempts
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION decision_recorded_in_time();

-- Where the token reconciler stopped reading the processor's token change feed, per processor URL.
CREATE TABLE token_feed_cursors (
  source      text PRIMARY KEY,
  cursor      text NOT NULL,
  updated_at  timestamptz NOT NULL DEFAULT now()
);

-- Part C: a transaction made with a token; the partner setting of docs/tokens.md "Decisions".
ALTER TABLE card_transactions ADD COLUMN token_id text, ADD COLUMN wallet_provider text
  CHECK (wallet_provider IN ('apple_pay', 'google_pay', 'samsung_pay', 'merchant'));
ALTER TABLE partners ADD COLUMN tokenize_before_activation boolean NOT NULL DEFAULT false;

-- Part B: which requests the partner's decision endpoint is sent.
ALTER TABLE authorization_endpoints ADD COLUMN request_types text[] NOT NULL DEFAULT '{authorization.request}'
  CHECK (cardinality(request_types) >= 1 AND request_types <@ ARRAY['authorization.request', 'tokenization.request']);

-- Part C: the cascade's and the partner's token operations, through the outbox.
ALTER TABLE outbox_events DROP CONSTRAINT outbox_events_kind_check;
ALTER TABLE outbox_events ADD CONSTRAINT outbox_events_kind_check
  CHECK (kind IN ('processing.card_created', 'processing.status_update', 'processing.token_operation', 'processing.token_move'));

-- Part D: the three token events.
ALTER TABLE partner_events DROP CONSTRAINT partner_events_type_check;
ALTER TABLE partner_events ADD CONSTRAINT partner_events_type_check
  CHECK (type IN ('card.created', 'card.status_changed', 'card.updated', 'individual.created', 'transaction.created', 'transaction.updated',
                  'token.created', 'token.updated', 'token.verification_code'));
