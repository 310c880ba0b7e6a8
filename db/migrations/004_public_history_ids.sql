-- Partners saw the bigserial of audit_log and card_status_history as an entry's `_id`: one
-- sequence for the whole platform, so a new partner's first entry ("75") told how many entries
-- every other partner had made. Entries now carry a public id in the object-id style (4 bytes of
-- seconds, 8 random bytes: gateway/ids.ts), written by the gateway; the bigserial stays internal
-- (primary key, and the tie-breaker of the newest-first order after created_at).
--
-- Rows written before this migration get a random public id too: their creation second, then
-- 8 bytes of a v4 UUID (bytes 9 to 15 and byte 0, which carry no version or variant bits).
ALTER TABLE audit_log ADD COLUMN public_id char(24);
ALTER TABLE card_status_history ADD COLUMN public_id char(24);

UPDATE audit_log a SET public_id = lpad(to_hex(floor(extract(epoch FROM a.created_at))::bigint), 8, '0') || substr(r.h, 19, 14) || substr(r.h, 1, 2)
  FROM (SELECT id, replace(gen_random_uuid()::text, '-', '') AS h FROM audit_log) r
  WHERE r.id = a.id;
UPDATE card_status_history c SET public_id = lpad(to_hex(floor(extract(epoch FROM c.created_at))::bigint), 8, '0') || substr(r.h, 19, 14) || substr(r.h, 1, 2)
  FROM (SELECT id, replace(gen_random_uuid()::text, '-', '') AS h FROM card_status_history) r
  WHERE r.id = c.id;

-- The default (same shape) serves an instance still on the previous version during a rolling
-- deploy, which inserts entries without a public id; this version always writes its own.
ALTER TABLE audit_log ALTER COLUMN public_id SET NOT NULL,
  ALTER COLUMN public_id SET DEFAULT (lpad(to_hex(floor(extract(epoch FROM now()))::bigint), 8, '0') || substr(replace(gen_random_uuid()::text, '-', ''), 19, 14) || substr(replace(gen_random_uuid()::text, '-', ''), 1, 2)),
  ADD CONSTRAINT audit_log_public_id_check CHECK (public_id ~ '^[0-9a-f]{24}$');
ALTER TABLE card_status_history ALTER COLUMN public_id SET NOT NULL,
  ALTER COLUMN public_id SET DEFAULT (lpad(to_hex(floor(extract(epoch FROM now()))::bigint), 8, '0') || substr(replace(gen_random_uuid()::text, '-', ''), 19, 14) || substr(replace(gen_random_uuid()::text, '-', ''), 1, 2)),
  ADD CONSTRAINT card_status_history_public_id_check CHECK (public_id ~ '^[0-9a-f]{24}$');
CREATE UNIQUE INDEX audit_log_public_id_idx ON audit_log (public_id);
CREATE UNIQUE INDEX card_status_history_public_id_idx ON card_status_history (public_id);
