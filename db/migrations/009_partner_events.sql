-- Partner events (the event log; docs/events.md). An event is written in the transaction of the
-- change that causes it (gateway/outbox/partner-events.ts, emitEvent): a rollback removes both, so
-- there is no change without its event and no event without its change. `payload` holds the
-- envelope's exact JSON bytes, answered as they are by GET /events and, later, signed and sent to
-- webhook endpoints. Rows older than WEBHOOKS_EVENT_RETENTION_DAYS (30) are deleted.
CREATE TABLE partner_events (
  seq          bigserial PRIMARY KEY,  -- commit order per card (emitEvent's lock); the log's cursors encode it
  id           text NOT NULL UNIQUE CHECK (id ~ '^evt_[0-9a-f]{24}$'),
  partner_id   char(24) NOT NULL REFERENCES partners (id),
  type         text NOT NULL CHECK (type IN ('card.created', 'card.status_changed', 'card.updated', 'individual.created', 'transaction.created')),
  ordering_key text,                   -- the cardKey; NULL: an event with no order to keep
  payload      text NOT NULL,
  request_id   text,
  created_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX partner_events_log_idx ON partner_events (partner_id, seq DESC);
CREATE INDEX partner_events_type_idx ON partner_events (partner_id, type, seq DESC);
CREATE INDEX partner_events_retention_idx ON partner_events (created_at);

-- Who asked for the status change a card is marked due for (an issuer call that ended without
-- knowing whether the issuer applied it): when card-sync then finds the card at that code, the
-- change is the partner's and its event says so; any other code is the issuer's own change.
ALTER TABLE cards
  ADD COLUMN issuer_check_source text CHECK (issuer_check_source IN ('partner', 'operator')),
  ADD COLUMN issuer_check_target text;
