-- The rules every order and payment row keeps (its mode, amounts, state, instrument, refunds and
-- UPI deadline) were CHECK constraints. PostgreSQL rebuilds a table's CHECK constraints from their
-- stored text and plans them again in every statement that writes one of its rows (ExecRelCheck,
-- once per statement), and `payments` has eighteen: measured inside PostgreSQL, about 38 µs of each
-- payment insert or update (73-77 µs with them, 35-46 with this trigger), and a charge writes its
-- payment three times and its order three times (docs/performance.md, "The rows' rules in a
-- trigger").
--
-- A PL/pgSQL trigger holds the same rules, planned once per connection. The database still refuses
-- a row that breaks one, whoever writes it: with the same SQLSTATE (23514, check_violation), the
-- rule's former constraint name as the error's constraint, and the same treatment of NULL (a rule
-- that evaluates to NULL holds, as a CHECK's does). Each CASE arm is the former constraint's
-- expression; the first rule broken is named.
--
-- A new rule for these two tables belongs in their function, not in a CHECK constraint.

CREATE FUNCTION refuse_broken_rule(relation text, rule text) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'new row for relation "%" violates check constraint "%"', relation, rule
    USING ERRCODE = 'check_violation', TABLE = relation, CONSTRAINT = rule;
END;
$$;

CREATE FUNCTION payments_keep_rules() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  broken text := CASE
    WHEN NOT (NEW.mode IN ('test', 'live')) THEN 'payments_mode_check'
    WHEN NOT (NEW.amount > 0) THEN 'payments_amount_check'
    WHEN NOT (NEW.status IN ('created', 'pending', 'captured', 'failed')) THEN 'payments_status_check'
    WHEN NOT (NEW.method IN ('netbanking', 'wallet', 'upi')) THEN 'payments_method_check'
    WHEN NOT (
         (NEW.method = 'netbanking' AND NEW.bank IS NOT NULL AND NEW.wallet IS NULL AND NEW.upi_flow IS NULL)
      OR (NEW.method = 'wallet' AND NEW.wallet IS NOT NULL AND NEW.bank IS NULL AND NEW.upi_flow IS NULL)
      OR (NEW.method = 'upi' AND NEW.bank IS NULL AND NEW.wallet IS NULL AND NEW.upi_flow IS NOT NULL
          AND NEW.expires_at IS NOT NULL AND (NEW.upi_vpa IS NOT NULL) = (NEW.upi_flow = 'collect')))
      THEN 'payments_instrument_check'
    WHEN NOT (NEW.status = 'failed' OR NEW.error_code IS NULL) THEN 'payments_check1'
    WHEN NOT (NEW.status <> 'captured' OR NEW.captured_at IS NOT NULL) THEN 'payments_check2'
    WHEN NOT (NEW.status <> 'pending' OR NEW.pending_at IS NOT NULL) THEN 'payments_pending_at_check'
    WHEN NOT (NEW.fee IS NULL OR NEW.fee >= 0) THEN 'payments_fee_check'
    WHEN NOT (NEW.tax IS NULL OR NEW.tax >= 0) THEN 'payments_tax_check'
    WHEN NOT (NEW.sync_attempts >= 0) THEN 'payments_sync_attempts_check'
    WHEN NOT (NOT NEW.refund_due OR (NEW.status = 'failed' AND NEW.authorised_at IS NOT NULL))
      THEN 'payments_refund_due_check'
    WHEN NOT (NEW.amount_refunded >= 0 AND NEW.amount_refunded <= NEW.amount) THEN 'payments_amount_refunded_check'
    WHEN NOT (NEW.amount_refunded = 0 OR NEW.status = 'captured' OR NEW.refund_due)
      THEN 'payments_refunded_only_taken_money_check'
    WHEN NOT (NEW.return_url IS NOT NULL OR NEW.method = 'upi') THEN 'payments_return_url_check'
    WHEN NOT (NEW.upi_flow IN ('intent', 'qr', 'collect')) THEN 'payments_upi_flow_check'
    WHEN NOT (NEW.upi_vpa IS NULL OR length(NEW.upi_vpa) BETWEEN 3 AND 100) THEN 'payments_upi_vpa_check'
    WHEN NOT (NEW.method <> 'upi' OR NEW.status NOT IN ('created', 'pending') OR NEW.next_sync_at IS NOT NULL)
      THEN 'payments_upi_reconciled'
  END;
BEGIN
  IF broken IS NOT NULL THEN
    PERFORM refuse_broken_rule(TG_TABLE_NAME, broken);
  END IF;
  RETURN NEW;
END;
$$;

CREATE FUNCTION orders_keep_rules() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  broken text := CASE
    WHEN NOT (NEW.mode IN ('test', 'live')) THEN 'orders_mode_check'
    WHEN NOT (NEW.amount > 0) THEN 'orders_amount_check'
    WHEN NOT (NEW.status IN ('created', 'attempted', 'paid')) THEN 'orders_status_check'
    WHEN NOT (NEW.amount_paid >= 0 AND NEW.amount_paid <= NEW.amount) THEN 'orders_check'
    WHEN NOT (NEW.status <> 'paid' OR NEW.amount_paid = NEW.amount) THEN 'orders_check1'
  END;
BEGIN
  IF broken IS NOT NULL THEN
    PERFORM refuse_broken_rule(TG_TABLE_NAME, broken);
  END IF;
  RETURN NEW;
END;
$$;

CREATE TRIGGER payments_keep_rules BEFORE INSERT OR UPDATE ON payments
  FOR EACH ROW EXECUTE FUNCTION payments_keep_rules();
CREATE TRIGGER orders_keep_rules BEFORE INSERT OR UPDATE ON orders
  FOR EACH ROW EXECUTE FUNCTION orders_keep_rules();

ALTER TABLE payments
  DROP CONSTRAINT payments_mode_check,
  DROP CONSTRAINT payments_amount_check,
  DROP CONSTRAINT payments_status_check,
  DROP CONSTRAINT payments_method_check,
  DROP CONSTRAINT payments_instrument_check,
  DROP CONSTRAINT payments_check1,
  DROP CONSTRAINT payments_check2,
  DROP CONSTRAINT payments_pending_at_check,
  DROP CONSTRAINT payments_fee_check,
  DROP CONSTRAINT payments_tax_check,
  DROP CONSTRAINT payments_sync_attempts_check,
  DROP CONSTRAINT payments_refund_due_check,
  DROP CONSTRAINT payments_amount_refunded_check,
  DROP CONSTRAINT payments_refunded_only_taken_money_check,
  DROP CONSTRAINT payments_return_url_check,
  DROP CONSTRAINT payments_upi_flow_check,
  DROP CONSTRAINT payments_upi_vpa_check,
  DROP CONSTRAINT payments_upi_reconciled;

ALTER TABLE orders
  DROP CONSTRAINT orders_mode_check,
  DROP CONSTRAINT orders_amount_check,
  DROP CONSTRAINT orders_status_check,
  DROP CONSTRAINT orders_check,
  DROP CONSTRAINT orders_check1;
