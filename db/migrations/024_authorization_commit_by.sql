-- The authorization decision's fence as an absolute instant (docs/authorizations.md, "Deadline"):
-- a recording commits only if its check runs by the instant the gateway sent with it, `p_commit_by`,
-- read on the database's own clock (clock_timestamp()), whenever the statement arrived.
--
-- Migration 023's authorization_recorded_in_time counted its budget from the start of the
-- statement's own transaction: a statement held on the network (a link that stalls, then releases
-- its packets) started its transaction only when it arrived, seconds after the gateway had answered
-- 503 and the processor had applied its stand-in, and still committed a decision nobody was told.
-- An instant does not depend on when the statement arrives. The gateway sends its answer-by less a
-- reserve for the commit and its acknowledgement, less the bound on the skew between its clock and
-- the database's (gateway/authorizations/decide.ts, `commitByOf`): a commit whose check passed is
-- acknowledged before the gateway's answer is due, by either clock.
--
-- Kept from 023: the check is the last thing the recording statement does, it raises PGW01 (the
-- gateway reads it as "too late": nothing recorded) when the claim was not this request's any more,
-- and it sets lock_timeout to what is left, so the card's velocity-ledger lock, taken at COMMIT by
-- the deferred triggers, is waited for only until the instant too.
--
-- migration 021's and 023's functions stay for an instance of the previous version still running
-- during a rolling deploy; this version does not call them.
CREATE FUNCTION authorization_recorded_by(p_inserted bigint, p_fenced bigint, p_commit_by timestamptz) RETURNS boolean
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  v_left_ms double precision := extract(epoch FROM p_commit_by - clock_timestamp()) * 1000;
BEGIN
  IF p_inserted > 0 AND (p_fenced = 0 OR v_left_ms < 0) THEN
    RAISE EXCEPTION 'authorization decision not recorded: claim lost or past its commit-by instant' USING ERRCODE = 'PGW01';
  END IF;
  PERFORM set_config('lock_timeout', greatest(1, floor(v_left_ms))::bigint::text || 'ms', true);
  RETURN true;
END
$$;

-- The same fence for the statements that write a decision row without a transaction (an unknown
-- card's decision, the claim marked decided with what a transaction already says): raises PGW01
-- past `p_commit_by` on the database's clock, true otherwise. Called in the statement's WHERE, so
-- that it runs when the statement does, whenever that is.
CREATE FUNCTION authorization_before(p_commit_by timestamptz) RETURNS boolean
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  IF clock_timestamp() > p_commit_by THEN
    RAISE EXCEPTION 'authorization decision not recorded: past its commit-by instant' USING ERRCODE = 'PGW01';
  END IF;
  RETURN true;
END
$$;

-- Milliseconds left until `p_commit_by` on the database's clock, at least 1: the velocity gate's
-- lock_timeout, computed when the statement runs rather than when it was sent.
CREATE FUNCTION authorization_ms_left(p_commit_by timestamptz) RETURNS integer
LANGUAGE sql VOLATILE AS $$
  SELECT greatest(1, least(2147483647, floor(extract(epoch FROM p_commit_by - clock_timestamp()) * 1000)))::integer
$$;
