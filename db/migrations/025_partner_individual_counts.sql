-- The exact number of a partner's individuals (the individual list's `count`, spec 4.2), kept in
-- the same transaction as every change it counts, instead of `count(*)` over the partner's
-- complete onboardings at each list call, which grew with the partner's individuals (0.49 to
-- 4.15 ms per call in issue 33's soak, and 100,000 rows read per call at 100,000 individuals).
--
-- What is counted: the partner's rows of individual_onboardings with provisioning = 'complete'
-- (what the list shows). Each statement that inserts, updates or deletes onboardings adds, per
-- partner, the complete rows it made less the complete rows it unmade, once per statement
-- (statement-level triggers reading their transition tables, so a bulk insert costs one counter
-- write per partner, not one per row). The change commits or rolls back with the rows: a failed
-- onboarding (pending, then deleted by its compensation) never counts, and a completion rolled back
-- takes its increment with it.
--
-- Slots: a partner's count is the sum of up to 16 rows; each connection adds to the slot of its
-- backend pid (modulo 16), so concurrent creations of one partner, on the connections of a pool or
-- of several instances, do not queue on one row's lock until their commits. Reading it is an
-- index lookup of at most 16 rows, whatever the partner's size.
--
-- The migration locks individual_onboardings against writes (SHARE ROW EXCLUSIVE: reads go on)
-- while it counts what exists and creates the triggers, so no change falls between the two; the
-- count reads the partial index of complete onboardings (about 20 ms per 100,000). lock_timeout
-- bounds the wait for a writer's transaction as in 022: past it the migration fails whole and the
-- next start tries again.
SET LOCAL lock_timeout = '5s';
LOCK TABLE individual_onboardings IN SHARE ROW EXCLUSIVE MODE;

CREATE TABLE partner_individual_counts (
  partner_id char(24) NOT NULL,
  slot       smallint NOT NULL CHECK (slot BETWEEN 0 AND 15),
  n          bigint NOT NULL,
  PRIMARY KEY (partner_id, slot)
);

INSERT INTO partner_individual_counts (partner_id, slot, n)
SELECT partner_id, 0, count(*) FROM individual_onboardings WHERE provisioning = 'complete' GROUP BY partner_id;

-- One function for the three triggers: each branch names only the transition tables its event has
-- (PL/pgSQL plans a statement when it first runs, so the others are never planned for it).
CREATE FUNCTION partner_individual_counts_change() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO partner_individual_counts AS c (partner_id, slot, n)
    SELECT partner_id, pg_backend_pid() % 16, count(*) FROM new_rows WHERE provisioning = 'complete'
     GROUP BY partner_id ORDER BY partner_id
    ON CONFLICT (partner_id, slot) DO UPDATE SET n = c.n + EXCLUDED.n;
  ELSIF TG_OP = 'UPDATE' THEN
    INSERT INTO partner_individual_counts AS c (partner_id, slot, n)
    SELECT partner_id, pg_backend_pid() % 16, sum(delta) FROM (
      SELECT partner_id, 1 AS delta FROM new_rows WHERE provisioning = 'complete'
      UNION ALL
      SELECT partner_id, -1 FROM old_rows WHERE provisioning = 'complete'
    ) AS changed GROUP BY partner_id HAVING sum(delta) <> 0 ORDER BY partner_id
    ON CONFLICT (partner_id, slot) DO UPDATE SET n = c.n + EXCLUDED.n;
  ELSE
    INSERT INTO partner_individual_counts AS c (partner_id, slot, n)
    SELECT partner_id, pg_backend_pid() % 16, -count(*) FROM old_rows WHERE provisioning = 'complete'
     GROUP BY partner_id ORDER BY partner_id
    ON CONFLICT (partner_id, slot) DO UPDATE SET n = c.n + EXCLUDED.n;
  END IF;
  RETURN NULL;
END
$$;

CREATE TRIGGER partner_individual_counts_insert AFTER INSERT ON individual_onboardings
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION partner_individual_counts_change();
CREATE TRIGGER partner_individual_counts_update AFTER UPDATE ON individual_onboardings
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION partner_individual_counts_change();
CREATE TRIGGER partner_individual_counts_delete AFTER DELETE ON individual_onboardings
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION partner_individual_counts_change();
