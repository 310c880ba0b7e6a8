-- Transactional outbox: messages to the card processing system (card_created webhooks, status
-- updates) are written in the same transaction as the local change they announce, then delivered
-- after the commit and retried with backoff until the processing system accepts them.
CREATE TABLE outbox_events (
  id              bigserial PRIMARY KEY,
  kind            text NOT NULL CHECK (kind IN ('processing.card_created', 'processing.status_update')),
  payload         jsonb NOT NULL,
  partner_id      char(24) NOT NULL REFERENCES partners (id),
  request_id      text,
  attempts        integer NOT NULL DEFAULT 0,
  next_attempt_at timestamptz NOT NULL DEFAULT now(),
  delivered_at    timestamptz,
  failed_at       timestamptz,
  last_error      text,
  created_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX outbox_events_due_idx ON outbox_events (next_attempt_at, id) WHERE delivered_at IS NULL AND failed_at IS NULL;
