-- Hosted checkout sessions (docs/checkout.md): one link per order where the customer picks a
-- method; every payment it starts is an ordinary payment of the same core, which records the
-- session it came from. A session is `open` until the order is paid (`completed`, with the
-- captured payment) or it runs out (`expired`); both moves are compare-and-set from `open`.
CREATE TABLE checkout_sessions (
  id text PRIMARY KEY,
  account_id text NOT NULL REFERENCES accounts (id),
  mode text NOT NULL CHECK (mode IN ('test', 'live')),
  order_id text NOT NULL REFERENCES orders (id),
  return_url text NOT NULL CHECK (length(return_url) BETWEEN 1 AND 2000),
  -- { name, email, contact } when the merchant gave them; asked on the page otherwise.
  customer jsonb CHECK (customer IS NULL OR jsonb_typeof(customer) = 'object'),
  methods text[] NOT NULL CHECK (
    cardinality(methods) BETWEEN 1 AND 3 AND methods <@ ARRAY['upi', 'netbanking', 'wallet']::text[]),
  status text NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'completed', 'expired')),
  -- The payment that paid the order: set exactly when the session is completed.
  payment_id text REFERENCES payments (id),
  expires_at timestamptz NOT NULL,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  CONSTRAINT checkout_sessions_completed_check CHECK ((status = 'completed') = (payment_id IS NOT NULL)),
  CONSTRAINT checkout_sessions_expiry_check CHECK (expires_at > created_at),
  -- The target of payments' (checkout_session_id, order_id): a payment's session is for its order.
  CONSTRAINT checkout_sessions_order_key UNIQUE (id, order_id)
);
-- The merchant's fetch, tenant-scoped.
CREATE INDEX checkout_sessions_account_idx ON checkout_sessions (account_id, mode, id DESC);
-- The completion and expiry sweep look only at open sessions (few: each lives at most a day).
CREATE INDEX checkout_sessions_open_idx ON checkout_sessions (expires_at) WHERE status = 'open';
CREATE INDEX checkout_sessions_open_order_idx ON checkout_sessions (order_id) WHERE status = 'open';

-- A payment started from a session records it; the session must be for the payment's order.
ALTER TABLE payments
  ADD COLUMN checkout_session_id text,
  ADD CONSTRAINT payments_checkout_session_fkey FOREIGN KEY (checkout_session_id, order_id)
    REFERENCES checkout_sessions (id, order_id);
CREATE INDEX payments_checkout_session_idx ON payments (checkout_session_id) WHERE checkout_session_id IS NOT NULL;
