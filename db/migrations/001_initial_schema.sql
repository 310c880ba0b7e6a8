-- Partner Gateway initial schema. Identifiers that partners see are 24-hex-char object ids.
-- Later issues fill users, onboardings, cards, history, audit and idempotency keys.

CREATE TABLE partners (
  id          char(24) PRIMARY KEY CHECK (id ~ '^[0-9a-f]{24}$'),
  name        text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
  issuer      text NOT NULL CHECK (length(issuer) BETWEEN 1 AND 500),
  status      text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'disabled')),
  processing_enabled boolean NOT NULL DEFAULT true,
  created_at  timestamptz NOT NULL DEFAULT now(),
  updated_at  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE partner_keys (
  partner_id  char(24) NOT NULL REFERENCES partners (id) ON DELETE CASCADE,
  kid         text NOT NULL CHECK (length(kid) BETWEEN 1 AND 200),
  public_key  text NOT NULL,
  status      text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'revoked')),
  created_at  timestamptz NOT NULL DEFAULT now(),
  revoked_at  timestamptz,
  PRIMARY KEY (partner_id, kid)
);

CREATE TABLE b2b_tenants (
  id          char(24) PRIMARY KEY CHECK (id ~ '^[0-9a-f]{24}$'),
  partner_id  char(24) NOT NULL REFERENCES partners (id) ON DELETE CASCADE,
  name        text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
  created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX b2b_tenants_partner_idx ON b2b_tenants (partner_id, created_at);

CREATE TABLE users (
  id          char(24) PRIMARY KEY CHECK (id ~ '^[0-9a-f]{24}$'),
  partner_id  char(24) NOT NULL REFERENCES partners (id),
  -- An individual onboarded through the API never logs into the operator's dashboard.
  dashboard_login_enabled boolean NOT NULL DEFAULT false,
  email       text NOT NULL,
  first_name  text NOT NULL,
  middle_name text,
  last_name   text NOT NULL,
  phone       text,
  created_at  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE individual_onboardings (
  id                 char(24) PRIMARY KEY CHECK (id ~ '^[0-9a-f]{24}$'),
  partner_id         char(24) NOT NULL REFERENCES partners (id),
  user_id            char(24) NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  client_id          text,
  baas_account_client_id bigint,
  personal_info      jsonb NOT NULL,
  address            jsonb NOT NULL,
  account_id         text,
  application_status text NOT NULL,
  dashboard_status   text NOT NULL,
  -- 'pending' while the account-creation upstream is being called: invisible to every read, and
  -- deleted (compensation) if the upstream fails; 'complete' once the upstream accepted it.
  provisioning       text NOT NULL DEFAULT 'pending' CHECK (provisioning IN ('pending', 'complete')),
  created_at         timestamptz NOT NULL DEFAULT now(),
  updated_at         timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX individual_onboardings_partner_idx ON individual_onboardings (partner_id, created_at DESC, id DESC)
  WHERE provisioning = 'complete';
CREATE INDEX individual_onboardings_pending_idx ON individual_onboardings (created_at) WHERE provisioning = 'pending';

CREATE TABLE cards (
  card_key          text PRIMARY KEY,
  partner_id        char(24) NOT NULL REFERENCES partners (id),
  owner_type        text NOT NULL CHECK (owner_type IN ('individual', 'b2b')),
  owner_id          char(24) NOT NULL,
  individual_id     char(24) REFERENCES individual_onboardings (id),
  tenant_id         char(24) REFERENCES b2b_tenants (id),
  card_mask         text NOT NULL,
  type              text NOT NULL CHECK (type IN ('virtual', 'physical')),
  status            text NOT NULL,
  status_code       text NOT NULL,
  currency          char(3) NOT NULL,
  product_code      text NOT NULL,
  holder_client_code text,
  exp_date          char(7) NOT NULL,
  embossed_name     text,
  nickname          text CHECK (length(nickname) <= 64),
  three_ds_phone    text CHECK (length(three_ds_phone) <= 32),
  created_at        timestamptz NOT NULL DEFAULT now(),
  updated_at        timestamptz NOT NULL DEFAULT now(),
  CHECK ((owner_type = 'individual') = (individual_id IS NOT NULL)),
  CHECK ((owner_type = 'b2b') = (tenant_id IS NOT NULL))
);
CREATE INDEX cards_partner_created_idx ON cards (partner_id, created_at DESC, card_key);
CREATE INDEX cards_individual_idx ON cards (individual_id, created_at DESC) WHERE individual_id IS NOT NULL;

CREATE TABLE card_status_history (
  id              bigserial PRIMARY KEY,
  card_key        text NOT NULL,
  partner_id      char(24) NOT NULL REFERENCES partners (id),
  individual_id   char(24) REFERENCES individual_onboardings (id),
  old_status      text,
  new_status      text NOT NULL,
  old_status_code text,
  new_status_code text NOT NULL,
  operation       text NOT NULL,
  reason          text,
  request_id      text,
  created_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX card_status_history_individual_idx ON card_status_history (individual_id, created_at DESC, id DESC);
CREATE INDEX card_status_history_card_idx ON card_status_history (card_key, created_at DESC, id DESC);

CREATE TABLE audit_log (
  id            bigserial PRIMARY KEY,
  partner_id    char(24) NOT NULL REFERENCES partners (id),
  individual_id char(24),
  tenant_id     char(24),
  operation     text NOT NULL,
  target_type   text NOT NULL,
  target_id     text NOT NULL,
  request_id    text,
  outcome       text NOT NULL CHECK (outcome IN ('success', 'failure')),
  details       jsonb NOT NULL DEFAULT '{}'::jsonb,
  created_at    timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX audit_log_individual_idx ON audit_log (individual_id, created_at DESC, id DESC);
CREATE INDEX audit_log_partner_idx ON audit_log (partner_id, created_at DESC, id DESC);

CREATE TABLE idempotency_keys (
  partner_id      char(24) NOT NULL REFERENCES partners (id),
  key             text NOT NULL CHECK (length(key) BETWEEN 1 AND 255),
  route           text NOT NULL,
  request_hash    text NOT NULL,
  state           text NOT NULL DEFAULT 'in_progress' CHECK (state IN ('in_progress', 'completed')),
  response_status integer,
  response_body   jsonb,
  created_at      timestamptz NOT NULL DEFAULT now(),
  expires_at      timestamptz NOT NULL,
  PRIMARY KEY (partner_id, key)
);
CREATE INDEX idempotency_keys_expiry_idx ON idempotency_keys (expires_at);
