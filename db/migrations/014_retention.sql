-- Retention (docs/events.md "Retention", docs/webhooks.md, docs/upstreams.md section 9): every
-- instance deletes, in batches, the partner events past WEBHOOKS_EVENT_RETENTION_DAYS (their
-- deliveries and attempts cascade), the webhook endpoints deleted longer ago than that with what is
-- left of their deliveries, and the upstream notifications past NOTIFICATIONS_RETENTION_DAYS
-- (upstream_notifications_received_idx, migration 011).
--
-- The cascade partner_events -> webhook_deliveries -> webhook_attempts looked each deleted
-- delivery's attempts up by delivery_id, which had no index: one batch of 5,000 events with 10,000
-- deliveries and 80,000 attempts took 80.9 s of the PostgreSQL backend's CPU, 0.17 s with this index.
CREATE INDEX webhook_attempts_delivery_idx ON webhook_attempts (delivery_id);
-- Removing an endpoint checks (foreign key) and deletes its deliveries by endpoint_id, which only
-- partial indexes (open deliveries) covered: each endpoint removed scanned the whole table (10
-- endpoints over 400,000 deliveries: 0.7 to 1.1 s of CPU; with the index, 0.01 s). Its upkeep: about
-- 11 to 16 us of CPU per delivery written, claimed and finished (the same 400,000, one insert and two
-- updates each: 26.2 and 29.0 s without, 32.4 and 33.4 s with, in two runs).
CREATE INDEX webhook_deliveries_endpoint_idx ON webhook_deliveries (endpoint_id);
CREATE INDEX webhook_endpoints_deleted_idx ON webhook_endpoints (deleted_at) WHERE deleted_at IS NOT NULL;
