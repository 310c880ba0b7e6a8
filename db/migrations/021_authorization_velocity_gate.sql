-- The authorization decision's recording in one statement (gateway/authorizations/decide.ts,
-- docs/performance.md "Run H"): the card's decision lock and the velocity count used to need a
-- statement of their own, sent with a BEGIN, because a statement's snapshot is taken when it starts,
-- before it waits for a lock. A VOLATILE function's statements each take a fresh snapshot at READ
-- COMMITTED (PostgreSQL, "Function Volatility Categories"), so this function, called first in the
-- recording statement, takes the card's lock and then counts what the lock's previous holder
-- committed, as the separate statement did. The caller writes only when `passed`.
--
-- p_lock_timeout_ms: how long the card's lock (and the statement's later locks) may be waited for.
-- p_windows: the velocity windows in seconds; p_count_limits and p_amount_limits, per window, the
-- most approved authorizations and amount already counted that still let this purchase pass (null:
-- no such rule). What is counted is spend-controls.ts's velocityQuery: the card's approved
-- authorizations (PURCHASE, WITHDRAWAL) still PENDING or SETTLED, created after the window's start
-- (card_transactions_velocity_idx).
CREATE FUNCTION authorization_velocity_gate(
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
  SELECT array_agg(v.c ORDER BY v.i), array_agg(v.a ORDER BY v.i),
         bool_and((p_count_limits[v.i] IS NULL OR v.c <= p_count_limits[v.i]) AND (p_amount_limits[v.i] IS NULL OR v.a <= p_amount_limits[v.i]))
    INTO counts, amounts, passed
    FROM (
      SELECT w.i, count(t.created_at) AS c, coalesce(sum(t.amount), 0) AS a
        FROM unnest(p_windows) WITH ORDINALITY AS w(secs, i)
        LEFT JOIN (
          SELECT created_at, amount FROM card_transactions
           WHERE partner_id = p_partner_id AND card_key = p_card_key
             AND created_at > p_at - make_interval(secs => (SELECT max(s) FROM unnest(p_windows) AS s))
             AND status IN ('PENDING', 'SETTLED') AND type IN ('PURCHASE', 'WITHDRAWAL') AND (history -> 0 ->> 'kind') = 'authorization'
        ) t ON t.created_at > p_at - make_interval(secs => w.secs)
       GROUP BY w.i
    ) v;
END
$$;

-- Called last in the recording statement, once the transaction, its event, the claim's fenced update
-- and the audit entry are written: a new transaction whose claim was not this request's any more
-- (another took it over) or that is past its deadline (the transaction's start plus p_budget_ms, on
-- the database's clock) raises, and the whole statement is rolled back: nothing stands that the
-- processor will not be answered. SQLSTATE PGW01 (the gateway reads it as "too late").
-- The transaction's start, not the statement's: in the extended protocol the server sets
-- statement_timestamp() again at each message, and the Bind of a prepared statement is where its
-- tables' locks are taken (waited for behind a migration's or an index build's lock), so a statement
-- could wait there past its deadline and still pass; the implicit transaction starts before that wait.
CREATE FUNCTION authorization_recorded_in_time(p_inserted bigint, p_fenced bigint, p_budget_ms double precision) RETURNS boolean
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  IF p_inserted > 0 AND (p_fenced = 0 OR clock_timestamp() > transaction_timestamp() + make_interval(secs => p_budget_ms / 1000)) THEN
    RAISE EXCEPTION 'authorization decision not recorded: claim lost or past its deadline' USING ERRCODE = 'PGW01';
  END IF;
  RETURN true;
END
$$;
