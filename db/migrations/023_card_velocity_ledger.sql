-- Velocity counts from a per-card ledger of prefix sums (docs/spend-controls.md, "Speed"), instead
-- of a range scan of the card's rows in card_transactions_velocity_idx: that scan grew with the
-- card's history in the window (about 1 ms of PostgreSQL CPU per decision for a card with 300 to
-- 500 authorizations, twice per decision with a decision endpoint: the claim's pre-check and the
-- gate). Here a window's count and amount are two index lookups whatever the card's history.
--
-- What is counted does not change: the card's rows of card_transactions for which P holds,
--   P(row) = status IN ('PENDING', 'SETTLED') AND type IN ('PURCHASE', 'WITHDRAWAL')
--            AND (history -> 0 ->> 'kind') = 'authorization'
-- (the predicate of migration 016's partial index, card_velocity_counted below), created after the
-- window's start (at - window), with their current amount; no upper bound.
--
-- The ledger: one entry per counted row, keyed (partner_id, card_key, created_at, transaction_id),
-- with the row's amount and the prefix sums cum_count, cum_amount over the card's entries in key
-- order, relative to an arbitrary base: only differences are read, so entries can be pruned from the
-- old end. A window's count (card_velocity_counts): e = the card's first entry created after the
-- window's start, last = the card's last entry; no e: 0 and 0; else count = last.cum_count -
-- e.cum_count + 1, amount = last.cum_amount - e.cum_amount + e.amount.
--
-- Maintenance: deferred constraint triggers on card_transactions (card_velocity_ledger_write), one
-- per event so that a WHEN clause queues only the writes that change what is counted (most rows of a
-- bulk seed, every decline, and a clearing that keeps the amount queue nothing). Each applies, at
-- COMMIT, the row's change: an amount change of a counted row (its entry and every later entry's
-- cum_amount), or the removal of the old row's entry and/or the addition of the new row's (every
-- later entry's sums shifted). An addition first prunes the card's entries created more than 32
-- days before now() (the longest window is 30 days), and rows created before that are not added.
--
-- Writers of one card's entries are serialized by a row lock: the card's row of
-- card_velocity_locks, taken FOR UPDATE (inserted on the card's first entry) by the trigger's first
-- statement; each statement after it takes a fresh snapshot (READ COMMITTED, which the trigger
-- requires, as authorization_velocity_gate does), so it sees every entry the lock's previous
-- holder wrote. A row lock rather than pg_advisory_xact_lock: advisory locks take a slot each in
-- the server's shared lock table (max_locks_per_transaction x max_connections, 6,400 by default),
-- and one transaction that writes many cards' counted rows (scripts/seed-transactions.ts inserts
-- 100,000 rows over 20,000 cards per statement) would fail its commit with "out of shared memory";
-- a row lock is a mark on the row.
--
-- Why deferred: the trigger runs at COMMIT, after every statement of the transaction, so the card's
-- ledger lock is the last lock a transaction takes, and while holding it a transaction waits for
-- nothing but entries of that card, which only the holder of that lock writes. No deadlock is
-- possible with what the writers take before (the decision's recording statement: the card's
-- 'auth:' lock, the transaction's 'txn:' lock, the event ordering lock, row locks; a notification's
-- applyTransaction: 'txn:', its reads, the event ordering lock). This relies on every writer of
-- card_transactions writing one row per database transaction, or rows of one card, as they all do
-- (checked when this was written): the decision's recording statement (one row,
-- gateway/authorizations/decide.ts), applyTransaction (one row per transaction: notifications,
-- the reconciler and the simulations, gateway/transactions/projection.ts). The one exception is
-- scripts/seed-transactions.ts (a bench tool: one statement of 100,000 rows on a quiet database),
-- whose commit takes the locks of many cards in its rows' order; two such writers at once could
-- deadlock (PostgreSQL then cancels one). A row moved to another card locks both cards in key order.
-- Never SET CONSTRAINTS ... IMMEDIATE on these triggers: the lock would no longer be last.
--
-- Why the gate still counts what the card's previous decision approved: the recording statement
-- holds the card's 'auth:' lock until its transaction ends, and its COMMIT, deferred triggers
-- included, completes before that lock is released; the next decision's gate takes the lock and
-- only then counts with a fresh snapshot, which sees the whole commit: the row and its entry. A
-- row written by another path (a notification's reversal) is counted by the gate as soon as its
-- commit is visible, its entry with it, as the row was by the scan before.
--
-- Reach: windows are counted exactly as long as their start is no more than 32 days before now()
-- (30 days before a purchase's `at` when `at` is at most 2 days old, as a processor's authorization
-- is). Known limit: an authorization whose `at` lies more than 2 days in the past has its 30-day
-- window under-counted by the authorizations created more than 32 days before now, which may have
-- been pruned (the scan counted them).
--
-- The lock: card_transactions is locked against writers while the tables, triggers and the
-- backfill are made, so no row changes between the backfill's read and the triggers; and against
-- readers too, from the start, for the index drop at the end: a lock that allowed reads (SHARE ROW
-- EXCLUSIVE) and was raised for the drop would wait for a notification's transaction that read
-- card_transactions (applyTransaction reads the row, then writes it) while that transaction waits
-- for this one to write: a deadlock. lock_timeout bounds the wait for the lock, as in 022: after
-- 5 s the migration fails, rolls back whole, and the next start tries it again. The backfill reads
-- the counted rows of the last 32 days only: the whole migration took 0.85 s on the bench's seed of
-- 1,000,000 transactions (72,522 entries over 19,441 cards), so reads wait about that long.
SET LOCAL lock_timeout = '5s';
LOCK TABLE card_transactions IN ACCESS EXCLUSIVE MODE;

-- Whether a row of card_transactions is counted (P above).
CREATE FUNCTION card_velocity_counted(p_status text, p_type text, p_history jsonb) RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT coalesce(p_status IN ('PENDING', 'SETTLED') AND p_type IN ('PURCHASE', 'WITHDRAWAL') AND (p_history -> 0 ->> 'kind') = 'authorization', false)
$$;

CREATE TABLE card_velocity_ledger (
  partner_id     char(24) NOT NULL,
  card_key       text NOT NULL,
  created_at     timestamptz NOT NULL,
  transaction_id text NOT NULL,
  amount         numeric(20, 4) NOT NULL,
  cum_count      bigint NOT NULL,
  cum_amount     numeric NOT NULL,
  PRIMARY KEY (partner_id, card_key, created_at, transaction_id)
);

-- One row per card that has had a ledger entry: its lock (see above). Never deleted but by a
-- TRUNCATE of card_transactions.
CREATE TABLE card_velocity_locks (
  partner_id char(24) NOT NULL,
  card_key   text NOT NULL,
  PRIMARY KEY (partner_id, card_key)
);

-- Per window (p_windows: seconds; i: its position), the card's counted rows created after p_at less
-- the window, and their amount (numeric with 4 decimals, 0 for none): two index lookups per window,
-- the last entry shared. STABLE: it counts in its caller's snapshot (the gate's statement after the
-- card's lock, the claim's statement), and, a single SELECT in SQL, is inlined into its caller's plan.
CREATE FUNCTION card_velocity_counts(p_partner_id text, p_card_key text, p_at timestamptz, p_windows integer[])
RETURNS TABLE (i bigint, n bigint, amount numeric)
LANGUAGE sql STABLE AS $$
  WITH last AS MATERIALIZED (
    SELECT l.cum_count, l.cum_amount FROM card_velocity_ledger l
     WHERE l.partner_id = p_partner_id::bpchar AND l.card_key = p_card_key
     ORDER BY l.created_at DESC, l.transaction_id DESC LIMIT 1
  )
  SELECT w.i, coalesce(last.cum_count - e.cum_count + 1, 0), coalesce(round(last.cum_amount - e.cum_amount + e.amount, 4), 0)
    FROM unnest(p_windows) WITH ORDINALITY AS w (secs, i)
    LEFT JOIN LATERAL (
      SELECT f.cum_count, f.cum_amount, f.amount FROM card_velocity_ledger f
       WHERE f.partner_id = p_partner_id::bpchar AND f.card_key = p_card_key AND f.created_at > p_at - make_interval(secs => w.secs)
       ORDER BY f.created_at, f.transaction_id LIMIT 1
    ) AS e ON true
    LEFT JOIN last ON true
$$;

-- Takes the card's ledger lock: its row of card_velocity_locks FOR UPDATE, inserted when the card
-- has none (a concurrent insert of the same row waits for this transaction, then finds it).
CREATE FUNCTION card_velocity_lock(p_partner_id bpchar, p_card_key text) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
  LOOP
    PERFORM 1 FROM card_velocity_locks WHERE partner_id = p_partner_id AND card_key = p_card_key FOR UPDATE;
    IF FOUND THEN
      RETURN;
    END IF;
    INSERT INTO card_velocity_locks (partner_id, card_key) VALUES (p_partner_id, p_card_key) ON CONFLICT DO NOTHING;
    IF FOUND THEN
      RETURN;
    END IF;
  END LOOP;
END
$$;

-- Removes a row's entry (when it has one: an entry pruned already is not there), and takes its
-- contribution out of every later entry's sums. Under the card's ledger lock.
CREATE FUNCTION card_velocity_ledger_remove(p_partner_id bpchar, p_card_key text, p_created_at timestamptz, p_id text) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
  v_amount numeric;
BEGIN
  DELETE FROM card_velocity_ledger
   WHERE partner_id = p_partner_id AND card_key = p_card_key AND created_at = p_created_at AND transaction_id = p_id
  RETURNING amount INTO v_amount;
  IF FOUND THEN
    UPDATE card_velocity_ledger SET cum_count = cum_count - 1, cum_amount = cum_amount - v_amount
     WHERE partner_id = p_partner_id AND card_key = p_card_key AND (created_at, transaction_id) > (p_created_at, p_id);
  END IF;
END
$$;

-- Adds a row's entry: first prunes the card's entries older than p_cutoff; the entry's sums
-- continue its predecessor's (none: its successor's less the successor's own contribution; none
-- either: 0), and every later entry's sums take its contribution. An entry after the card's last
-- (authorizations arrive in time order) needs neither the predecessor's lookup nor the shift: the
-- last entry's sums, read first, are the predecessor's. Under the card's ledger lock.
CREATE FUNCTION card_velocity_ledger_add(p_partner_id bpchar, p_card_key text, p_created_at timestamptz, p_id text, p_amount numeric, p_cutoff timestamptz) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
  v_count bigint;
  v_amount numeric;
  v_last_at timestamptz;
  v_last_id text;
BEGIN
  IF p_created_at < p_cutoff THEN
    RETURN;
  END IF;
  DELETE FROM card_velocity_ledger WHERE partner_id = p_partner_id AND card_key = p_card_key AND created_at < p_cutoff;
  SELECT l.created_at, l.transaction_id, l.cum_count, l.cum_amount INTO v_last_at, v_last_id, v_count, v_amount FROM card_velocity_ledger l
   WHERE l.partner_id = p_partner_id AND l.card_key = p_card_key
   ORDER BY l.created_at DESC, l.transaction_id DESC LIMIT 1;
  IF NOT FOUND OR (v_last_at, v_last_id) < (p_created_at, p_id) THEN
    INSERT INTO card_velocity_ledger (partner_id, card_key, created_at, transaction_id, amount, cum_count, cum_amount)
    VALUES (p_partner_id, p_card_key, p_created_at, p_id, p_amount, coalesce(v_count, 0) + 1, coalesce(v_amount, 0) + p_amount);
    RETURN;
  END IF;
  LOOP
    SELECT l.cum_count, l.cum_amount INTO v_count, v_amount FROM card_velocity_ledger l
     WHERE l.partner_id = p_partner_id AND l.card_key = p_card_key AND (l.created_at, l.transaction_id) < (p_created_at, p_id)
     ORDER BY l.created_at DESC, l.transaction_id DESC LIMIT 1;
    IF NOT FOUND THEN
      SELECT l.cum_count - 1, l.cum_amount - l.amount INTO v_count, v_amount FROM card_velocity_ledger l
       WHERE l.partner_id = p_partner_id AND l.card_key = p_card_key AND (l.created_at, l.transaction_id) > (p_created_at, p_id)
       ORDER BY l.created_at, l.transaction_id LIMIT 1;
      IF NOT FOUND THEN
        v_count := 0;
        v_amount := 0;
      END IF;
    END IF;
    INSERT INTO card_velocity_ledger (partner_id, card_key, created_at, transaction_id, amount, cum_count, cum_amount)
    VALUES (p_partner_id, p_card_key, p_created_at, p_id, p_amount, v_count + 1, v_amount + p_amount)
    ON CONFLICT DO NOTHING;
    EXIT WHEN FOUND;
    -- An entry of this row already (never expected: the row was not counted before): replaced.
    PERFORM card_velocity_ledger_remove(p_partner_id, p_card_key, p_created_at, p_id);
  END LOOP;
  UPDATE card_velocity_ledger SET cum_count = cum_count + 1, cum_amount = cum_amount + p_amount
   WHERE partner_id = p_partner_id AND card_key = p_card_key AND (created_at, transaction_id) > (p_created_at, p_id);
END
$$;

-- The deferred trigger's function, at COMMIT, for one write of one row (see above). The WHEN
-- clauses of the triggers already left out the writes that change nothing counted.
--
-- enable_seqscan off for its statements and those of the functions it calls: each reads or writes
-- one card's entries by the primary key, and PL/pgSQL keeps a generic plan per statement for the
-- life of a connection. Planned while the ledger looked empty or tiny (a new database, statistics
-- taken on a small ledger), that plan scans the whole ledger; a commit that writes many entries
-- (a bulk insert: no statistics change within it) would then scan it once per entry (measured: a
-- 20,000-row insert of 20 cards took 8.9 s on a new database, 1.5 s with it).
CREATE FUNCTION card_velocity_ledger_write() RETURNS trigger
LANGUAGE plpgsql SET enable_seqscan = off AS $$
DECLARE
  v_cutoff timestamptz := now() - interval '32 days';
  v_old boolean := false;
  v_new boolean := false;
  v_delta numeric;
BEGIN
  -- Under REPEATABLE READ or SERIALIZABLE the statements below would read the ledger in the
  -- transaction's snapshot, not what the lock's previous holder committed, and corrupt its sums.
  IF current_setting('transaction_isolation') <> 'read committed' THEN
    RAISE EXCEPTION 'a write of card_transactions needs READ COMMITTED (its velocity ledger), not %', current_setting('transaction_isolation') USING ERRCODE = 'PGW02';
  END IF;
  IF TG_OP <> 'INSERT' THEN
    v_old := card_velocity_counted(OLD.status, OLD.type, OLD.history);
  END IF;
  IF TG_OP <> 'DELETE' THEN
    v_new := card_velocity_counted(NEW.status, NEW.type, NEW.history) AND NEW.created_at >= v_cutoff;
  END IF;
  IF NOT v_old AND NOT v_new THEN
    RETURN NULL;
  END IF;
  -- The card's lock first; a row moved to another card (never done today) locks both, in key order.
  IF v_old AND v_new AND (OLD.partner_id, OLD.card_key) <> (NEW.partner_id, NEW.card_key) THEN
    IF (OLD.partner_id, OLD.card_key) < (NEW.partner_id, NEW.card_key) THEN
      PERFORM card_velocity_lock(OLD.partner_id, OLD.card_key);
      PERFORM card_velocity_lock(NEW.partner_id, NEW.card_key);
    ELSE
      PERFORM card_velocity_lock(NEW.partner_id, NEW.card_key);
      PERFORM card_velocity_lock(OLD.partner_id, OLD.card_key);
    END IF;
  ELSIF v_old THEN
    PERFORM card_velocity_lock(OLD.partner_id, OLD.card_key);
  ELSE
    PERFORM card_velocity_lock(NEW.partner_id, NEW.card_key);
  END IF;
  IF v_old AND v_new AND (OLD.partner_id, OLD.card_key, OLD.created_at, OLD.id) = (NEW.partner_id, NEW.card_key, NEW.created_at, NEW.id) THEN
    -- Counted before and after, same entry: its amount (a partial reversal), in its sums and every later one's.
    SELECT NEW.amount - l.amount INTO v_delta FROM card_velocity_ledger l
     WHERE l.partner_id = NEW.partner_id AND l.card_key = NEW.card_key AND l.created_at = NEW.created_at AND l.transaction_id = NEW.id;
    IF NOT FOUND THEN
      PERFORM card_velocity_ledger_add(NEW.partner_id, NEW.card_key, NEW.created_at, NEW.id, NEW.amount, v_cutoff);
    ELSIF v_delta <> 0 THEN
      UPDATE card_velocity_ledger
         SET cum_amount = cum_amount + v_delta,
             amount = CASE WHEN (created_at, transaction_id) = (NEW.created_at, NEW.id) THEN NEW.amount ELSE amount END
       WHERE partner_id = NEW.partner_id AND card_key = NEW.card_key AND (created_at, transaction_id) >= (NEW.created_at, NEW.id);
    END IF;
    RETURN NULL;
  END IF;
  IF v_old THEN
    PERFORM card_velocity_ledger_remove(OLD.partner_id, OLD.card_key, OLD.created_at, OLD.id);
  END IF;
  IF v_new THEN
    PERFORM card_velocity_ledger_add(NEW.partner_id, NEW.card_key, NEW.created_at, NEW.id, NEW.amount, v_cutoff);
  END IF;
  RETURN NULL;
END
$$;

-- One trigger per event, for its WHEN clause (evaluated at the write, not deferred: a write for
-- which it is false is never queued). Rows created more than 32 days ago are never added.
CREATE CONSTRAINT TRIGGER card_transactions_velocity_insert AFTER INSERT ON card_transactions
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW
  WHEN (card_velocity_counted(NEW.status, NEW.type, NEW.history) AND NEW.created_at >= now() - interval '32 days')
  EXECUTE FUNCTION card_velocity_ledger_write();
CREATE CONSTRAINT TRIGGER card_transactions_velocity_update AFTER UPDATE ON card_transactions
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW
  WHEN ((card_velocity_counted(OLD.status, OLD.type, OLD.history)
         OR (card_velocity_counted(NEW.status, NEW.type, NEW.history) AND NEW.created_at >= now() - interval '32 days'))
        AND (card_velocity_counted(OLD.status, OLD.type, OLD.history) <> card_velocity_counted(NEW.status, NEW.type, NEW.history)
             OR (OLD.partner_id, OLD.card_key, OLD.created_at, OLD.id, OLD.amount) IS DISTINCT FROM (NEW.partner_id, NEW.card_key, NEW.created_at, NEW.id, NEW.amount)))
  EXECUTE FUNCTION card_velocity_ledger_write();
CREATE CONSTRAINT TRIGGER card_transactions_velocity_delete AFTER DELETE ON card_transactions
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW
  WHEN (card_velocity_counted(OLD.status, OLD.type, OLD.history))
  EXECUTE FUNCTION card_velocity_ledger_write();

-- A TRUNCATE of card_transactions (tests, a development database) empties the ledger too.
CREATE FUNCTION card_velocity_ledger_truncate() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  TRUNCATE card_velocity_ledger, card_velocity_locks;
  RETURN NULL;
END
$$;
CREATE TRIGGER card_transactions_velocity_truncate AFTER TRUNCATE ON card_transactions
  FOR EACH STATEMENT EXECUTE FUNCTION card_velocity_ledger_truncate();

-- The backfill: the counted rows of the last 32 days, their sums per card in key order.
INSERT INTO card_velocity_ledger (partner_id, card_key, created_at, transaction_id, amount, cum_count, cum_amount)
SELECT partner_id, card_key, created_at, id, amount,
       row_number() OVER card_order, sum(amount) OVER card_order
  FROM card_transactions
 WHERE status IN ('PENDING', 'SETTLED') AND type IN ('PURCHASE', 'WITHDRAWAL') AND (history -> 0 ->> 'kind') = 'authorization'
   AND created_at >= now() - interval '32 days'
WINDOW card_order AS (PARTITION BY partner_id, card_key ORDER BY created_at, id ROWS UNBOUNDED PRECEDING);
-- No ANALYZE here: on an empty ledger (a new database) it would record an empty table, and plans
-- cached from it would scan the ledger until autovacuum's first ANALYZE; never analyzed, the
-- planner assumes at least 10 pages and uses the primary key.

-- The gate of migration 021, same signature and contract (READ COMMITTED, lock_timeout, the card's
-- decision lock, then the count with a fresh snapshot), counting from the ledger.
CREATE OR REPLACE FUNCTION authorization_velocity_gate(
  p_lock_key text,
  p_lock_timeout_ms integer,
  p_partner_id text,
  p_card_key text,
  p_at timestamptz,
  p_windows integer[],
  p_count_limits bigint[],
  p_amount_limits numeric[],
  OUT passed boolean,
  OUT counts bigint[],
  OUT amounts numeric[]
) LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  -- The count below sees the lock's previous holder's commit only at READ COMMITTED (a fresh
  -- snapshot per statement); under REPEATABLE READ or SERIALIZABLE it would count the statement's
  -- snapshot and over-approve without an error. Refused rather than trusted to the server's default.
  IF current_setting('transaction_isolation') <> 'read committed' THEN
    RAISE EXCEPTION 'authorization_velocity_gate needs READ COMMITTED, not %', current_setting('transaction_isolation') USING ERRCODE = 'PGW02';
  END IF;
  PERFORM set_config('lock_timeout', greatest(1, p_lock_timeout_ms)::text || 'ms', true);
  PERFORM pg_advisory_xact_lock(hashtextextended('auth:' || p_lock_key, 0));
  passed := true;
  counts := '{}';
  amounts := '{}';
  IF coalesce(array_length(p_windows, 1), 0) = 0 THEN
    RETURN;
  END IF;
  -- The windows as an array of four elements (the rules name at most four distinct windows), not
  -- the parameter itself: the planner counts the rows of unnest(ARRAY[a, b, c, d]) as 4 in a
  -- generic plan too, while for unnest(p_windows) it guesses 10, and a generic plan costed for 10
  -- windows loses to a custom one: PL/pgSQL then plans the statement again at each call, parsing
  -- the inlined card_velocity_counts each time (measured: 390 µs per gate instead of 40).
  IF array_length(p_windows, 1) <= 4 THEN
    SELECT array_agg(v.n ORDER BY v.i), array_agg(v.amount ORDER BY v.i),
           bool_and((p_count_limits[v.i] IS NULL OR v.n <= p_count_limits[v.i]) AND (p_amount_limits[v.i] IS NULL OR v.amount <= p_amount_limits[v.i]))
      INTO counts, amounts, passed
      FROM card_velocity_counts(p_partner_id, p_card_key, p_at, ARRAY[p_windows[1], p_windows[2], p_windows[3], p_windows[4]]) AS v
     WHERE v.i <= array_length(p_windows, 1);
  ELSE
    SELECT array_agg(v.n ORDER BY v.i), array_agg(v.amount ORDER BY v.i),
           bool_and((p_count_limits[v.i] IS NULL OR v.n <= p_count_limits[v.i]) AND (p_amount_limits[v.i] IS NULL OR v.amount <= p_amount_limits[v.i]))
      INTO counts, amounts, passed
      FROM card_velocity_counts(p_partner_id, p_card_key, p_at, p_windows) AS v;
  END IF;
END
$$;

-- Nothing reads migration 016's partial index any more (the backfill above was its last reader),
-- and every insert of a counted row and every change of one's status paid for it.
DROP INDEX card_transactions_velocity_idx;

-- The card's ledger lock is taken at COMMIT (the deferred triggers), after this check has passed,
-- under the lock_timeout the gate set for the whole budget: a commit that waited there for a busy
-- card's ledger (a notification shifting its entries) could land after the gateway answered 503.
-- So the check also sets lock_timeout to what is left of the budget: a wait past it fails the
-- commit (55P03, "too late": nothing recorded) before the answer is due.
CREATE OR REPLACE FUNCTION authorization_recorded_in_time(p_inserted bigint, p_fenced bigint, p_budget_ms double precision) RETURNS boolean
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  v_left_ms double precision := p_budget_ms - extract(epoch FROM clock_timestamp() - transaction_timestamp()) * 1000;
BEGIN
  IF p_inserted > 0 AND (p_fenced = 0 OR v_left_ms < 0) THEN
    RAISE EXCEPTION 'authorization decision not recorded: claim lost or past its deadline' USING ERRCODE = 'PGW01';
  END IF;
  PERFORM set_config('lock_timeout', greatest(1, floor(v_left_ms))::bigint::text || 'ms', true);
  RETURN true;
END
$$;
