-- Notifications the upstreams sent the gateway (docs/upstreams.md): one row per (upstream, id), so
-- that a notification the upstream sends again (it retries until a 2xx) is applied once.
CREATE TABLE upstream_notifications (
  upstream     text NOT NULL CHECK (upstream IN ('issuer', 'processing')),
  id           text NOT NULL CHECK (length(id) BETWEEN 1 AND 100),
  type         text NOT NULL,
  outcome      text NOT NULL,
  card_key     text,
  received_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (upstream, id)
);
CREATE INDEX upstream_notifications_received_idx ON upstream_notifications (received_at);
