-- An individual's ACTIVE cards in the order its card list answers them (newest first, ties by
-- card key), for `GET /individual/accounts/{id}/cards` (issue 33): the list reads its page and the
-- one row past it from this index, whatever the individual's other cards. The index it used,
-- cards_individual_idx (individual_id, created_at DESC), held every card of the individual: the
-- list read all of them (1,248 rows for one individual in issue 33's soak) to keep the active ones,
-- and sorted them by card key within a date.
--
-- Built in the migration's transaction: card writes wait for the build (about a second per
-- million cards); lock_timeout bounds the wait for the lock as in 022 (past 5 s the migration
-- fails whole and the next start tries again).
SET LOCAL lock_timeout = '5s';
CREATE INDEX cards_individual_active_idx ON cards (individual_id, created_at DESC, card_key) WHERE status = 'ACTIVE' AND individual_id IS NOT NULL;
