-- Webhook endpoints and the deliveries of partner events to them (docs/webhooks.md). emitEvent
-- (gateway/outbox/partner-events.ts) writes, in the change's own transaction, one delivery per
-- enabled endpoint of the partner subscribed to the event's type; the dispatcher
-- (gateway/webhooks/dispatcher.ts) claims due deliveries with a lease, sends without holding a
-- transaction, and records every attempt.
CREATE TABLE webhook_endpoints (
  id           text PRIMARY KEY CHECK (id ~ '^we_[0-9a-f]{24}$'),
  partner_id   char(24) NOT NULL REFERENCES partners (id),
  url          text NOT NULL CHECK (length(url) <= 2048),
  events       text[] NOT NULL DEFAULT '{*}',  -- '*': every type, future ones included
  description  text CHECK (length(description) <= 500),
  status       text NOT NULL DEFAULT 'enabled' CHECK (status IN ('enabled', 'disabled')),
  consecutive_failures integer NOT NULL DEFAULT 0,
  last_attempt_at timestamptz,
  created_at   timestamptz NOT NULL DEFAULT now(),
  updated_at   timestamptz NOT NULL DEFAULT now(),
  deleted_at   timestamptz                     -- DELETE is soft: the attempts stay for operators
);
CREATE INDEX webhook_endpoints_partner_idx ON webhook_endpoints (partner_id, created_at) WHERE deleted_at IS NULL;

-- The signing secrets of an endpoint: the current one (expires_at NULL) and, for the rotation
-- overlap, the one it replaced. Stored as they are: HMAC signing needs the secret itself, so it
-- cannot be hashed, and a key kept beside the database on the same host would protect little
-- more (docs/webhooks.md). Never logged, never answered after its creation or rotation.
CREATE TABLE webhook_endpoint_secrets (
  id           bigserial PRIMARY KEY,
  endpoint_id  text NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
  secret       text NOT NULL CHECK (secret ~ '^whsec_[A-Za-z0-9_-]{43,}$'),
  created_at   timestamptz NOT NULL DEFAULT now(),
  expires_at   timestamptz                     -- NULL: current; rotated out: the end of the overlap
);
CREATE INDEX webhook_endpoint_secrets_endpoint_idx ON webhook_endpoint_secrets (endpoint_id, id DESC);

CREATE TABLE webhook_deliveries (
  id           bigserial PRIMARY KEY,
  event_seq    bigint NOT NULL REFERENCES partner_events (seq) ON DELETE CASCADE,
  endpoint_id  text NOT NULL REFERENCES webhook_endpoints (id),
  ordering_key text,                           -- the event's cardKey (NULL for resends): one open delivery per (endpoint, card) is sent at a time
  -- pending: due at next_attempt_at; in_flight: claimed until lease_until (a dead sender's claim
  -- is taken over after it); delivered; failed: the retry window is over; cancelled: endpoint deleted
  state        text NOT NULL CHECK (state IN ('pending', 'in_flight', 'delivered', 'failed', 'cancelled')),
  attempts     integer NOT NULL DEFAULT 0,
  next_attempt_at timestamptz NOT NULL DEFAULT now(),
  lease_until  timestamptz,
  resend       boolean NOT NULL DEFAULT false,
  created_at   timestamptz NOT NULL DEFAULT now(),  -- the retry window counts from here
  finished_at  timestamptz
);
CREATE INDEX webhook_deliveries_ready_idx ON webhook_deliveries (endpoint_id, next_attempt_at, id) WHERE state = 'pending';
CREATE INDEX webhook_deliveries_lease_idx ON webhook_deliveries (endpoint_id, lease_until) WHERE state = 'in_flight';
CREATE INDEX webhook_deliveries_chain_idx ON webhook_deliveries (endpoint_id, ordering_key, id) WHERE state IN ('pending', 'in_flight');
CREATE INDEX webhook_deliveries_event_idx ON webhook_deliveries (event_seq);

CREATE TABLE webhook_attempts (
  id           bigserial PRIMARY KEY,
  delivery_id  bigint NOT NULL REFERENCES webhook_deliveries (id) ON DELETE CASCADE,
  endpoint_id  text NOT NULL,
  event_id     text NOT NULL,
  event_type   text NOT NULL,
  attempt      integer NOT NULL,
  attempted_at timestamptz NOT NULL,
  duration_ms  integer,
  http_status  integer,
  error        text CHECK (error IN ('timeout', 'connection', 'target_refused', 'redirect', 'interrupted', 'http_status')),
  outcome      text NOT NULL CHECK (outcome IN ('delivered', 'retrying', 'failed')),
  next_retry_at timestamptz                    -- NULL: delivered or given up
);
CREATE INDEX webhook_attempts_endpoint_idx ON webhook_attempts (endpoint_id, id DESC);
