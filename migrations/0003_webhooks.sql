-- Webhook endpoints: where an account's events are sent. Deleted endpoints are kept (deleted_at) so
-- the delivery log of past events still names them.
CREATE TABLE webhook_endpoints (
  id text PRIMARY KEY,
  account_id text NOT NULL REFERENCES accounts (id),
  mode text NOT NULL CHECK (mode IN ('test', 'live')),
  url text NOT NULL,
  description text,
  -- A JSON array of event types; ["*"] means every type.
  enabled_events jsonb NOT NULL,
  enabled boolean NOT NULL DEFAULT true,
  disabled_reason text,
  -- Kept readable because every delivery is signed with it (Standard Webhooks uses HMAC).
  secret text NOT NULL,
  previous_secret text,
  previous_secret_expires_at timestamptz,
  -- Start of the current run of failed attempts; cleared by a success.
  failing_since timestamptz,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  deleted_at timestamptz
);
CREATE INDEX webhook_endpoints_account_idx ON webhook_endpoints (account_id, mode, id DESC) WHERE deleted_at IS NULL;

-- Events not yet turned into deliveries. The fan-out job clears the mark.
ALTER TABLE events ADD COLUMN fanned_out_at timestamptz;
CREATE INDEX events_fan_out_idx ON events (id) WHERE fanned_out_at IS NULL;
CREATE INDEX events_type_idx ON events (account_id, mode, type, id DESC);

-- One delivery per (event, endpoint); each try is a row of webhook_attempts.
CREATE TABLE webhook_deliveries (
  id text PRIMARY KEY,
  account_id text NOT NULL REFERENCES accounts (id),
  mode text NOT NULL CHECK (mode IN ('test', 'live')),
  event_id text NOT NULL REFERENCES events (id),
  endpoint_id text NOT NULL REFERENCES webhook_endpoints (id),
  status text NOT NULL CHECK (status IN ('pending', 'succeeded', 'failed')),
  attempt_count integer NOT NULL DEFAULT 0,
  next_attempt_at timestamptz,
  -- A worker that claimed the delivery owns it until locked_until; after that anyone may retry it.
  locked_until timestamptz,
  lease_token text,
  last_attempt_at timestamptz,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  UNIQUE (event_id, endpoint_id),
  CHECK (status <> 'pending' OR next_attempt_at IS NOT NULL)
);
CREATE INDEX webhook_deliveries_due_idx ON webhook_deliveries (next_attempt_at) WHERE status = 'pending';
CREATE INDEX webhook_deliveries_endpoint_idx ON webhook_deliveries (endpoint_id) WHERE status = 'pending';
CREATE INDEX webhook_deliveries_unsuccessful_idx ON webhook_deliveries (event_id) WHERE status <> 'succeeded';

CREATE TABLE webhook_attempts (
  id text PRIMARY KEY,
  delivery_id text NOT NULL REFERENCES webhook_deliveries (id),
  account_id text NOT NULL REFERENCES accounts (id),
  mode text NOT NULL CHECK (mode IN ('test', 'live')),
  attempted_at timestamptz NOT NULL,
  url text NOT NULL,
  status_code integer,
  latency_ms integer NOT NULL,
  response_body text,
  error text,
  succeeded boolean NOT NULL
);
CREATE INDEX webhook_attempts_delivery_idx ON webhook_attempts (delivery_id, id);
