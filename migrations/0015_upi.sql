-- UPI payments (docs/payments.md, "UPI"): intent and QR (the same upi://pay link), and collect
-- where an account has it. A UPI payment has no bank or wallet; it has a flow, the customer's VPA
-- for collect, and its own deadline (`expires_at`, from the request's expiry_minutes).
ALTER TABLE payments DROP CONSTRAINT payments_method_check;
ALTER TABLE payments DROP CONSTRAINT payments_check;
ALTER TABLE payments ALTER COLUMN return_url DROP NOT NULL;
ALTER TABLE payments
  ADD COLUMN upi_flow text CHECK (upi_flow IN ('intent', 'qr', 'collect')),
  -- The customer's VPA a collect request went to (shown masked).
  ADD COLUMN upi_vpa text CHECK (upi_vpa IS NULL OR length(upi_vpa) BETWEEN 3 AND 100),
  -- The VPA that paid, when the provider tells it (shown masked).
  ADD COLUMN upi_payer_vpa text,
  -- When Kosh stops waiting for the customer: the payment fails with upi_expired (UPI only).
  ADD COLUMN expires_at timestamptz,
  -- A UPI payment may have no return URL: Kosh's UPI page then shows the outcome itself.
  ADD CONSTRAINT payments_return_url_check CHECK (return_url IS NOT NULL OR method = 'upi'),
  ADD CONSTRAINT payments_method_check CHECK (method IN ('netbanking', 'wallet', 'upi')),
  ADD CONSTRAINT payments_instrument_check CHECK (
       (method = 'netbanking' AND bank IS NOT NULL AND wallet IS NULL AND upi_flow IS NULL)
    OR (method = 'wallet' AND wallet IS NOT NULL AND bank IS NULL AND upi_flow IS NULL)
    OR (method = 'upi' AND bank IS NULL AND wallet IS NULL AND upi_flow IS NOT NULL AND expires_at IS NOT NULL
        AND (upi_vpa IS NOT NULL) = (upi_flow = 'collect'))),
  -- A UPI payment is always the reconciler's until it is final: its deadline is its own, not the
  -- expiry sweep's (which looks only at payments nobody needs to ask about).
  ADD CONSTRAINT payments_upi_reconciled CHECK (
    method <> 'upi' OR status NOT IN ('created', 'pending') OR next_sync_at IS NOT NULL);

-- Sandbox accounts take UPI intent and QR (not collect, which NPCI retired for most merchants on
-- 28 February 2026): existing test-mode methods are turned on as new ones are.
UPDATE account_methods
   SET methods = jsonb_set(methods, '{upi}',
         '{"intent": true, "collect": false, "payer_account_type": {"bank_account": true, "credit_card": false}}'::jsonb),
       updated_at = now()
 WHERE mode = 'test' AND methods IS NOT NULL
   AND methods -> 'upi' ->> 'intent' = 'false' AND methods -> 'upi' ->> 'collect' = 'false';
