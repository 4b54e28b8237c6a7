-- The payment core that meets real providers: what the provider said is stored with the payment,
-- and every payment whose outcome is open has a next time to ask (`next_sync_at`), owned by the
-- payment-sync job (docs/payments.md, "Reconciliation").
ALTER TABLE payments
  -- The merchant's provider account the payment went through (null for the sandbox).
  ADD COLUMN connector_account_id text,
  -- The provider's own id for the payment (or its order) and its last raw status.
  ADD COLUMN provider_reference text,
  ADD COLUMN provider_status text,
  -- Where the browser goes next at the provider ({kind: redirect|form|sandbox|browser, …}); null
  -- until the provider answered the start of the payment.
  ADD COLUMN provider_next jsonb,
  -- Connector-owned details: the sandbox's recorded choice, a provider's order and payment ids.
  ADD COLUMN provider_data jsonb NOT NULL DEFAULT '{}'::jsonb,
  ADD COLUMN bank_reference text,
  ADD COLUMN fee bigint CHECK (fee IS NULL OR fee >= 0),
  ADD COLUMN tax bigint CHECK (tax IS NULL OR tax >= 0),
  -- When the customer acted (the move to pending): the pending timeout counts from here.
  ADD COLUMN pending_at timestamptz,
  -- When the bank authorised the money (also on a failed payment whose order another payment paid).
  ADD COLUMN authorised_at timestamptz,
  -- The bank took money Kosh could not capture (the order was paid by another payment): it goes back.
  ADD COLUMN refund_due boolean NOT NULL DEFAULT false,
  ADD COLUMN sync_attempts integer NOT NULL DEFAULT 0 CHECK (sync_attempts >= 0),
  -- When the reconciler asks the provider next; null when nothing is left to ask.
  ADD COLUMN next_sync_at timestamptz;

-- Payments left pending by earlier versions had no owner: the reconciler takes them now.
UPDATE payments SET pending_at = updated_at, next_sync_at = now() WHERE status = 'pending';

ALTER TABLE payments ADD CONSTRAINT payments_pending_at_check CHECK (status <> 'pending' OR pending_at IS NOT NULL);
ALTER TABLE payments ADD CONSTRAINT payments_refund_due_check
  CHECK (NOT refund_due OR (status = 'failed' AND authorised_at IS NOT NULL));

CREATE INDEX payments_sync_idx ON payments (next_sync_at) WHERE next_sync_at IS NOT NULL;
-- The expiry sweep fails untouched payments that nobody needs to be asked about; the others are
-- asked once more by the reconciler before they expire.
DROP INDEX payments_expiry_idx;
CREATE INDEX payments_expiry_idx ON payments (created_at) WHERE status = 'created' AND next_sync_at IS NULL;
