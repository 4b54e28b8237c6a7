-- Completed requests made with an Idempotency-Key, kept for replay (docs/idempotency.md).
-- A row is written in the same transaction as the work it protects: it exists exactly when that
-- work committed. Scope is the account and mode; the key is the caller's.
CREATE TABLE idempotency_keys (
  account_id text NOT NULL REFERENCES accounts (id),
  mode text NOT NULL CHECK (mode IN ('test', 'live')),
  key text NOT NULL CHECK (length(key) BETWEEN 1 AND 255),
  -- SHA-256 of method, path and canonical body: the same key with another request is refused.
  fingerprint bytea NOT NULL,
  status integer NOT NULL,
  headers jsonb NOT NULL DEFAULT '{}'::jsonb,
  body bytea NOT NULL,
  created_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL,
  PRIMARY KEY (account_id, mode, key)
);
-- The purge job deletes the oldest expired rows in batches.
CREATE INDEX idempotency_keys_expiry_idx ON idempotency_keys (expires_at);
