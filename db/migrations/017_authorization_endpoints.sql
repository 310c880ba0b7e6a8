-- The partner's decision endpoint for real-time authorizations (docs/authorization-endpoint.md):
-- at most one per partner, which the gateway asks, signed, whether to approve a purchase
-- (gateway/authorizations/partner-endpoint.ts). A DELETE removes the row (its secrets cascade):
-- there is no delivery history to keep; the audit log keeps every change.
CREATE TABLE authorization_endpoints (
  id               text PRIMARY KEY CHECK (id ~ '^ae_[0-9a-f]{24}$'),
  partner_id       char(24) NOT NULL REFERENCES partners (id),
  url              text NOT NULL CHECK (length(url) <= 2048),
  timeout_ms       integer NOT NULL DEFAULT 1000 CHECK (timeout_ms BETWEEN 100 AND 1500),
  default_decision text NOT NULL DEFAULT 'decline' CHECK (default_decision IN ('approve', 'decline')),
  status           text NOT NULL DEFAULT 'enabled' CHECK (status IN ('enabled', 'disabled')),
  -- Who disabled it: the partner (it is not asked, as if not enrolled) or an operator through the
  -- admin API (its default decision applies, reason 'disabled'). NULL while enabled.
  disabled_by      text CHECK (disabled_by IN ('partner', 'operator')),
  created_at       timestamptz NOT NULL DEFAULT now(),
  updated_at       timestamptz NOT NULL DEFAULT now(),
  CHECK ((status = 'enabled') = (disabled_by IS NULL))
);
-- One endpoint per partner: a second POST is refused (409 authorization_endpoint_exists).
CREATE UNIQUE INDEX authorization_endpoints_partner_idx ON authorization_endpoints (partner_id);

-- Its signing secrets, in the form of webhook_endpoint_secrets (migrations 010 and 013) so that the
-- same code seals, opens, rotates and re-encrypts both (gateway/webhooks/secret-rows.ts): the
-- current one (expires_at NULL) and, for a rotation's overlap, the one it replaced. With
-- WEBHOOKS_SECRET_KEY a secret is AES-256-GCM sealed, bound to the endpoint id, and secret is NULL.
CREATE TABLE authorization_endpoint_secrets (
  id            bigserial PRIMARY KEY,
  endpoint_id   text NOT NULL REFERENCES authorization_endpoints (id) ON DELETE CASCADE,
  secret        text CHECK (secret ~ '^whsec_[A-Za-z0-9_-]{43,}$'),
  sealed_secret text CHECK (sealed_secret ~ '^v1:[0-9a-f]{16}:[A-Za-z0-9_-]{16}:[A-Za-z0-9_-]{43,}:[A-Za-z0-9_-]{22}$'),
  created_at    timestamptz NOT NULL DEFAULT now(),
  expires_at    timestamptz,                   -- NULL: current; rotated out: the end of the overlap
  CONSTRAINT authorization_endpoint_secrets_one_form CHECK ((secret IS NULL) <> (sealed_secret IS NULL))
);
CREATE INDEX authorization_endpoint_secrets_endpoint_idx ON authorization_endpoint_secrets (endpoint_id, id DESC);
