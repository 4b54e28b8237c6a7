-- Settings the service generates for itself (for example the API-secret pepper when none is configured).
CREATE TABLE settings (
  name text PRIMARY KEY,
  value text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);

-- Merchants take payments; partners onboard merchants they own.
CREATE TABLE accounts (
  id text PRIMARY KEY,
  kind text NOT NULL CHECK (kind IN ('merchant', 'partner')),
  name text NOT NULL,
  status text NOT NULL CHECK (status IN ('created', 'under_review', 'needs_clarification', 'activated', 'suspended')),
  partner_id text REFERENCES accounts (id),
  sandbox boolean NOT NULL DEFAULT false,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  CHECK (partner_id IS NULL OR kind = 'merchant')
);
CREATE INDEX accounts_partner_idx ON accounts (partner_id, id) WHERE partner_id IS NOT NULL;

-- The public api_key is the primary key; the secret is kept only as HMAC-SHA256(pepper, secret).
CREATE TABLE api_keys (
  api_key text PRIMARY KEY,
  account_id text NOT NULL REFERENCES accounts (id),
  mode text NOT NULL CHECK (mode IN ('test', 'live')),
  secret_hash bytea NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  revoked_at timestamptz,
  CHECK (api_key LIKE 'key_' || mode || '_%')
);
CREATE INDEX api_keys_account_idx ON api_keys (account_id, mode);

-- The methods object (seed §2.3) per account and mode, as served by GET /v1/payments/methods/.
CREATE TABLE account_methods (
  account_id text NOT NULL REFERENCES accounts (id),
  mode text NOT NULL CHECK (mode IN ('test', 'live')),
  methods jsonb NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (account_id, mode)
);

CREATE TABLE orders (
  id text PRIMARY KEY,
  account_id text NOT NULL REFERENCES accounts (id),
  mode text NOT NULL CHECK (mode IN ('test', 'live')),
  amount bigint NOT NULL CHECK (amount > 0),
  currency text NOT NULL,
  status text NOT NULL CHECK (status IN ('created', 'attempted', 'paid')),
  receipt text,
  metadata jsonb NOT NULL DEFAULT '{}'::jsonb,
  return_url text,
  return_method text NOT NULL DEFAULT 'POST',
  amount_paid bigint NOT NULL DEFAULT 0 CHECK (amount_paid >= 0 AND amount_paid <= amount),
  bank_details jsonb,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  CHECK (status <> 'paid' OR amount_paid = amount)
);
-- Ids sort by creation time: newest-first keyset pagination per tenant.
CREATE INDEX orders_account_idx ON orders (account_id, mode, id DESC);

-- Every state change writes its event row in the same transaction (the webhook outbox).
CREATE TABLE events (
  id text PRIMARY KEY,
  account_id text NOT NULL REFERENCES accounts (id),
  mode text NOT NULL CHECK (mode IN ('test', 'live')),
  type text NOT NULL,
  payload jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX events_account_idx ON events (account_id, mode, id DESC);
