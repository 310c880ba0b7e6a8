-- Spend controls (docs/spend-controls.md): what a partner allows its cards to spend, enforced by the
-- gateway's authorization decisions. One row per partner default (card_key NULL) and per card that
-- has controls of its own; `controls` is the object the partner PUT (validated by the
-- `spend-controls` schema). `PUT {}` deletes the row: no row is no control.
--
-- The card's row follows its card: a replacement moves the card record to a new card_key (ON
-- UPDATE CASCADE); a card that is deleted takes its controls with it.
CREATE TABLE spend_controls (
  partner_id  char(24) NOT NULL REFERENCES partners (id) ON DELETE CASCADE,
  card_key    text REFERENCES cards (card_key) ON UPDATE CASCADE ON DELETE CASCADE,
  controls    jsonb NOT NULL CHECK (jsonb_typeof(controls) = 'object'),
  updated_at  timestamptz NOT NULL DEFAULT now(),
  -- One default per partner (card_key NULL) and one row per card.
  CONSTRAINT spend_controls_scope_key UNIQUE NULLS NOT DISTINCT (partner_id, card_key)
);

-- Velocity (gateway/authorizations/spend-controls.ts, checkVelocity) sums the card's approved
-- authorizations that still hold money (PENDING, SETTLED) over its longest window. This partial index
-- holds only those rows, with their amount, so that the count is an index-only range scan of the
-- card's last 30 days whatever its declined, reversed, expired, force-posted and refund rows.
CREATE INDEX card_transactions_velocity_idx ON card_transactions (partner_id, card_key, created_at) INCLUDE (amount)
  WHERE status IN ('PENDING', 'SETTLED') AND type IN ('PURCHASE', 'WITHDRAWAL') AND (history -> 0 ->> 'kind') = 'authorization';
