SET LOCAL lock_timeout = '5s';

-- The token operation the gateway has sent and not yet applied the answer of (docs/tokens.md,
-- "Who made a change"): {action, to, by, requestId, reason?, at}. The processor notifies the change
-- an operation made (upstreams.md 10.5), and that notification may arrive before the operation's
-- answer is applied: it is then applied as the operation (its `by`, its request id, its reason), so
-- that the change is one history entry and one event, whichever comes first. Cleared by the apply
-- that reaches `to`, or by the operation's refusal. A nullable column: no rewrite, no long lock.
ALTER TABLE tokens ADD COLUMN operation_pending jsonb CHECK (operation_pending IS NULL OR jsonb_typeof(operation_pending) = 'object');
