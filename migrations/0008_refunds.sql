-- Refunds: money given back on a captured payment (or, automatically, on a failed one whose bank
-- authorised it after another payment paid the order). A refund is its own object; the payment
-- keeps its status and only counts what is being or was given back (docs/refunds.md).
CREATE TABLE refunds (
  id text PRIMARY KEY,
  account_id text NOT NULL REFERENCES accounts (id),
  mode text NOT NULL CHECK (mode IN ('test', 'live')),
  payment_id text NOT NULL REFERENCES payments (id),
  order_id text NOT NULL REFERENCES orders (id),
  amount bigint NOT NULL CHECK (amount > 0),
  currency text NOT NULL,
  status text NOT NULL CHECK (status IN ('pending', 'processed', 'failed')),
  speed text NOT NULL CHECK (speed IN ('normal', 'instant')),
  receipt text CHECK (receipt IS NULL OR length(receipt) BETWEEN 1 AND 40),
  metadata jsonb NOT NULL DEFAULT '{}'::jsonb,
  -- Made by Kosh, not the merchant: the return of a late authorisation on a paid order.
  automatic boolean NOT NULL DEFAULT false,
  error_code text,
  error_reason text,
  connector text NOT NULL,
  connector_account_id text,
  provider_reference text,
  provider_status text,
  provider_data jsonb NOT NULL DEFAULT '{}'::jsonb,
  -- When the provider acknowledged the refund request; until then the reconciler (re)sends it,
  -- always with the refund's id as the provider's idempotency key.
  submitted_at timestamptz,
  sync_attempts integer NOT NULL DEFAULT 0 CHECK (sync_attempts >= 0),
  next_sync_at timestamptz,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  processed_at timestamptz,
  CHECK (status = 'failed' OR error_code IS NULL),
  CHECK ((status = 'processed') = (processed_at IS NOT NULL))
);
-- A merchant's receipt names one refund per account and mode.
CREATE UNIQUE INDEX refunds_receipt_key ON refunds (account_id, mode, receipt) WHERE receipt IS NOT NULL;
CREATE INDEX refunds_account_idx ON refunds (account_id, mode, id DESC);
CREATE INDEX refunds_payment_idx ON refunds (payment_id, id DESC);
CREATE INDEX refunds_sync_idx ON refunds (next_sync_at) WHERE next_sync_at IS NOT NULL;

-- What the payment's non-failed refunds add up to, moved in the same transaction as each refund
-- is recorded (up) or fails (down), with a compare-and-set on the sum: it can never pass the
-- captured amount, whatever runs at once.
ALTER TABLE payments ADD COLUMN amount_refunded bigint NOT NULL DEFAULT 0;
ALTER TABLE payments ADD CONSTRAINT payments_amount_refunded_check
  CHECK (amount_refunded >= 0 AND amount_refunded <= amount);
ALTER TABLE payments ADD CONSTRAINT payments_refunded_only_taken_money_check
  CHECK (amount_refunded = 0 OR status = 'captured' OR refund_due);
-- The refund job finds payments whose money is owed back.
CREATE INDEX payments_refund_due_idx ON payments (id) WHERE refund_due;
