-- Webhook endpoint secrets encrypted at rest (docs/webhooks.md, "Storage of secrets"). With
-- WEBHOOKS_SECRET_KEY set, a secret is kept in sealed_secret as AES-256-GCM ciphertext,
-- "v1:<key id>:<iv>:<ciphertext>:<tag>" (base64url; the endpoint id is its additional authenticated
-- data, gateway/webhooks/secret-box.ts) and secret is NULL; the gateway encrypts the plaintext rows
-- at start. Without the key, secret holds the plaintext as before. Each row has exactly one of them.
ALTER TABLE webhook_endpoint_secrets ALTER COLUMN secret DROP NOT NULL;
ALTER TABLE webhook_endpoint_secrets
  ADD COLUMN sealed_secret text CHECK (sealed_secret ~ '^v1:[0-9a-f]{16}:[A-Za-z0-9_-]{16}:[A-Za-z0-9_-]{43,}:[A-Za-z0-9_-]{22}$'),
  ADD CONSTRAINT webhook_endpoint_secrets_one_form CHECK ((secret IS NULL) <> (sealed_secret IS NULL));

-- A delivery whose signing secrets cannot be read (sealed under a key not configured, or not
-- authentic) is held and retried, never sent unsigned: its attempts say so.
ALTER TABLE webhook_attempts DROP CONSTRAINT webhook_attempts_error_check;
ALTER TABLE webhook_attempts
  ADD CONSTRAINT webhook_attempts_error_check CHECK (error IN ('timeout', 'connection', 'target_refused', 'redirect', 'interrupted', 'http_status', 'secret_unavailable'));
