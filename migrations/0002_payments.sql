-- S2S net banking and wallet payments. A payment belongs to one order of the same account and mode.
CREATE TABLE payments (
  id text PRIMARY KEY,
  account_id text NOT NULL REFERENCES accounts (id),
  mode text NOT NULL CHECK (mode IN ('test', 'live')),
  order_id text NOT NULL REFERENCES orders (id),
  amount bigint NOT NULL CHECK (amount > 0),
  currency text NOT NULL,
  status text NOT NULL CHECK (status IN ('created', 'pending', 'captured', 'failed')),
  method text NOT NULL CHECK (method IN ('netbanking', 'wallet')),
  bank text,
  wallet text,
  -- The customer label of the bank or wallet when the payment was made (methods can change later).
  instrument_name text NOT NULL,
  email text NOT NULL,
  contact text NOT NULL,
  name text NOT NULL,
  description text,
  metadata jsonb NOT NULL DEFAULT '{}'::jsonb,
  return_url text NOT NULL,
  connector text NOT NULL,
  error_code text,
  error_reason text,
  -- HMAC of the single-use token on the authentication page; cleared when the token is used.
  auth_token_hash bytea,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  captured_at timestamptz,
  CHECK ((method = 'netbanking' AND bank IS NOT NULL AND wallet IS NULL)
      OR (method = 'wallet' AND wallet IS NOT NULL AND bank IS NULL)),
  CHECK (status = 'failed' OR error_code IS NULL),
  CHECK (status <> 'captured' OR captured_at IS NOT NULL)
);
-- At most one captured payment per order, whatever the code does.
CREATE UNIQUE INDEX payments_one_captured_per_order ON payments (order_id) WHERE status = 'captured';
CREATE INDEX payments_account_idx ON payments (account_id, mode, id DESC);
CREATE INDEX payments_order_idx ON payments (order_id, id DESC);
-- The expiry sweep looks only at untouched payments.
CREATE INDEX payments_expiry_idx ON payments (created_at) WHERE status = 'created';

-- The key a merchant uses to check the signature of the browser return POST, per account and mode.
CREATE TABLE return_signing_secrets (
  account_id text NOT NULL REFERENCES accounts (id),
  mode text NOT NULL CHECK (mode IN ('test', 'live')),
  secret text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (account_id, mode)
);
