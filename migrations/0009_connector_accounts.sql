-- A merchant's own account at a payment provider: where its live payments go (docs/connectors.md).
-- The secret credentials are one AES-256-GCM ciphertext (the key ring's `enc:v1:<kid>:…`, bound
-- to the connector account's and the merchant's ids); only their last four characters are kept in
-- the clear, to tell them apart.
CREATE TABLE connector_accounts (
  id text PRIMARY KEY,
  account_id text NOT NULL REFERENCES accounts (id),
  connector text NOT NULL CHECK (connector IN ('cashfree', 'razorpay')),
  status text NOT NULL CHECK (status IN ('active', 'disabled')),
  public_credentials jsonb NOT NULL,
  secret_credentials text NOT NULL CHECK (starts_with(secret_credentials, 'enc:v1:')),
  secret_hints jsonb NOT NULL,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  disabled_at timestamptz,
  CHECK ((status = 'disabled') = (disabled_at IS NOT NULL))
);
-- One active provider account per merchant decides where its live payments go.
CREATE UNIQUE INDEX connector_accounts_one_active ON connector_accounts (account_id) WHERE status = 'active';
CREATE INDEX connector_accounts_account_idx ON connector_accounts (account_id, id DESC);

-- A provider's webhook events already applied, by the provider's event id: a redelivery is skipped.
CREATE TABLE provider_webhook_events (
  connector_account_id text NOT NULL,
  event_id text NOT NULL,
  received_at timestamptz NOT NULL,
  PRIMARY KEY (connector_account_id, event_id)
);
