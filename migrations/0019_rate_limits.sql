-- Rate limits for the whole deployment (docs/rate-limits.md): one token bucket per API key and
-- one failure window per client address, shared by every process on every host. A process takes
-- a small lease of tokens at a time, so most requests never come here.
--
-- UNLOGGED: a counter lost in a crash or a failover only lets a key start again with a full
-- bucket (what an idle key has anyway); in exchange the writes skip the WAL.
CREATE UNLOGGED TABLE rate_limit_buckets (
  key text PRIMARY KEY,
  tokens double precision NOT NULL CHECK (tokens >= 0),
  -- The tokens the last lease handed out (what the statement that took them returns).
  granted integer NOT NULL CHECK (granted >= 0),
  refilled_at timestamptz NOT NULL
);

CREATE UNLOGGED TABLE auth_failure_windows (
  address text PRIMARY KEY,
  failures integer NOT NULL CHECK (failures > 0),
  ends_at timestamptz NOT NULL
);
CREATE INDEX auth_failure_windows_ends_idx ON auth_failure_windows (ends_at);
CREATE INDEX rate_limit_buckets_refilled_idx ON rate_limit_buckets (refilled_at);
