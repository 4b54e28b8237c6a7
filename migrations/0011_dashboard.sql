-- Dashboard users (one account each), their sessions and the login throttle.
CREATE TABLE dashboard_users (
  id text PRIMARY KEY,
  account_id text NOT NULL REFERENCES accounts (id),
  email text NOT NULL UNIQUE CHECK (email = lower(email) AND length(email) BETWEEN 3 AND 254),
  password_hash text NOT NULL CHECK (password_hash LIKE 'scrypt$%'),
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX dashboard_users_account_idx ON dashboard_users (account_id);

-- A session is stored as the SHA-256 of its cookie's token; the mode is what the user is looking at.
CREATE TABLE dashboard_sessions (
  token_hash bytea PRIMARY KEY CHECK (length(token_hash) = 32),
  user_id text NOT NULL REFERENCES dashboard_users (id) ON DELETE CASCADE,
  mode text NOT NULL CHECK (mode IN ('test', 'live')),
  created_at timestamptz NOT NULL,
  last_seen_at timestamptz NOT NULL CHECK (last_seen_at >= created_at)
);
CREATE INDEX dashboard_sessions_user_idx ON dashboard_sessions (user_id);

-- Failed logins per client address, counted over a window to throttle password guessing.
CREATE TABLE dashboard_login_failures (
  address text NOT NULL,
  failed_at timestamptz NOT NULL
);
CREATE INDEX dashboard_login_failures_idx ON dashboard_login_failures (address, failed_at);

-- A payment's timeline: its events, found by the payment id they carry.
CREATE INDEX events_payment_idx ON events (account_id, mode, (payload #>> '{payment,id}'), id)
  WHERE payload ? 'payment';

-- The dashboard's home page: captured volume per day, and attempts in the same days.
CREATE INDEX payments_captured_idx ON payments (account_id, mode, captured_at) WHERE status = 'captured';
CREATE INDEX payments_created_idx ON payments (account_id, mode, created_at);

-- An endpoint's recent deliveries (the dashboard's webhooks page).
CREATE INDEX webhook_deliveries_endpoint_recent_idx ON webhook_deliveries (endpoint_id, id DESC);
