-- Partner-wide card list (spec 4.3, GET /cards): filters on status and type, and a case-insensitive
-- substring search on the card mask, nickname and embossed name. Design and measurements at a
-- million cards: docs/card-search.md.

-- Trigram indexes for substring search. pg_trgm is a trusted extension: the database owner can
-- create it (PostgreSQL ≥ 13); the embedded database (PGlite) loads it in gateway/db/embedded.ts.
CREATE EXTENSION IF NOT EXISTS pg_trgm;

-- The searched text, lower-cased once when a row is written rather than on every row a search
-- reads: mask, nickname and embossed name, separated by U+001F (unit separator) so that a search
-- never matches across two fields (gateway/cards/card-search.ts rechecks each field on its own for
-- the odd search that contains U+001F itself).
ALTER TABLE cards ADD COLUMN search_text text NOT NULL
  GENERATED ALWAYS AS (lower(card_mask || E'\x1f' || coalesce(nickname, '') || E'\x1f' || coalesce(embossed_name, ''))) STORED;

-- LIKE '%…%' estimates come from this column's histogram: with the default 100 buckets a search
-- matching 2 % of a million cards was estimated at 100 rows and answered by reading and sorting all
-- of them (75 ms) instead of walking the newest cards (0.2 ms). 1000 buckets estimate it within 10 %.
ALTER TABLE cards ALTER COLUMN search_text SET STATISTICS 1000;

CREATE INDEX cards_search_text_trgm_idx ON cards USING gin (search_text gin_trgm_ops);

-- Newest first within a partner and a status (type included so that status + type counts are
-- index-only), and within a partner and a type. No filter uses cards_partner_created_idx (001).
CREATE INDEX cards_partner_status_created_idx ON cards (partner_id, status, created_at DESC, card_key) INCLUDE (type);
CREATE INDEX cards_partner_type_created_idx ON cards (partner_id, type, created_at DESC, card_key);
