-- Convergence of our card records with the issuer (docs/reliability.md, "Cards converge with the
-- issuer"). `issuer_check_due`: an operation on the card ended without knowing whether the issuer
-- applied it (a status change that timed out, a replace whose follow-up read failed); the next
-- access to the card and the card reconciler read the issuer's card first. `replaced_from`: the
-- retired cardKey of a replacement recorded before the new card was read (its mask, history, audit
-- and card_created webhook are written once it is). `issuer_checked_at`: the reconciler's last read.
ALTER TABLE cards
  ADD COLUMN issuer_check_due boolean NOT NULL DEFAULT false,
  ADD COLUMN issuer_checked_at timestamptz,
  ADD COLUMN replaced_from text;

-- Only the cards with something pending: the reconciler reads nothing else, and the index stays small.
CREATE INDEX cards_issuer_sync_idx ON cards (issuer_checked_at NULLS FIRST, card_key) WHERE issuer_check_due AND status_code <> 'S4';
