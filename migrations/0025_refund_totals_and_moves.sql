-- Money rules the code kept with compare-and-set statements, now held by the database too, so that
-- a write that breaks one is refused whoever sends it (a new code path, an operator's psql):
--
-- 1. A refund agrees with its payment: the same account, mode, order and currency.
-- 2. A payment's amount_refunded is exactly the sum of its refunds that have not failed, at every
--    commit (a deferred check: the counter and the refund row move in one transaction).
-- 3. Statuses move only along the transition tables (src/modules/*/…transitions.ts): a captured
--    payment stays captured, a paid order stays paid, a processed or failed refund stays so.
-- 4. What a row is about never changes: the account, mode, order, amount and currency of an order,
--    a payment or a refund.
--
-- Rules 3 and 4 are in each trigger's WHEN condition, which PostgreSQL evaluates in the row's
-- update without calling a function; the function only raises, for a write that breaks the rule.
-- They fire only when a guarded column is in the statement's SET list (UPDATE OF), and after the
-- row rules of 0021 (BEFORE triggers fire in the order of their names), so a payment or an order
-- that breaks one of those is named by it; a refund's own rules are CHECK constraints, checked
-- after every BEFORE trigger. Errors are check_violation (23514), naming the rule as the constraint.

CREATE FUNCTION refuse_rule_from_trigger() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM refuse_broken_rule(TG_TABLE_NAME, TG_ARGV[0]);
  RETURN NULL;
END;
$$;

-- 1. A refund agrees with its payment.
CREATE FUNCTION refunds_match_payment() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NOT EXISTS (
    SELECT 1 FROM payments p
     WHERE p.id = NEW.payment_id AND p.account_id = NEW.account_id AND p.mode = NEW.mode
       AND p.order_id = NEW.order_id AND p.currency = NEW.currency
  ) THEN
    PERFORM refuse_broken_rule(TG_TABLE_NAME, 'refunds_match_payment');
  END IF;
  RETURN NEW;
END;
$$;
CREATE TRIGGER refunds_match_payment BEFORE INSERT ON refunds
  FOR EACH ROW EXECUTE FUNCTION refunds_match_payment();

-- 2. A payment's refunds add up to its amount_refunded, checked when the transaction commits.
CREATE FUNCTION payments_refunds_add_up() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  pid text;
  counted bigint;
  refunded bigint;
BEGIN
  IF TG_TABLE_NAME = 'payments' THEN
    pid := NEW.id;
  ELSIF TG_OP = 'DELETE' THEN
    pid := OLD.payment_id;
  ELSE
    pid := NEW.payment_id;
  END IF;
  -- One statement, so one snapshot: under READ COMMITTED two statements could see another
  -- transaction's refund and its counting on either side of its commit.
  SELECT p.amount_refunded,
         (SELECT coalesce(sum(r.amount), 0) FROM refunds r WHERE r.payment_id = pid AND r.status <> 'failed')
    INTO counted, refunded
    FROM payments p WHERE p.id = pid;
  IF counted IS DISTINCT FROM refunded THEN
    RAISE EXCEPTION 'payment % counts % refunded; its refunds that have not failed add up to %',
      pid, counted, refunded
      USING ERRCODE = 'check_violation', TABLE = 'payments', CONSTRAINT = 'payments_refunds_add_up';
  END IF;
  RETURN NULL;
END;
$$;
CREATE CONSTRAINT TRIGGER refunds_add_up AFTER INSERT OR UPDATE OF status, amount, payment_id OR DELETE ON refunds
  DEFERRABLE INITIALLY DEFERRED
  FOR EACH ROW EXECUTE FUNCTION payments_refunds_add_up();
CREATE CONSTRAINT TRIGGER payments_refunds_add_up AFTER UPDATE OF amount_refunded ON payments
  DEFERRABLE INITIALLY DEFERRED
  FOR EACH ROW WHEN (OLD.amount_refunded IS DISTINCT FROM NEW.amount_refunded)
  EXECUTE FUNCTION payments_refunds_add_up();
CREATE CONSTRAINT TRIGGER payments_refunds_add_up_new AFTER INSERT ON payments
  DEFERRABLE INITIALLY DEFERRED
  FOR EACH ROW WHEN (NEW.amount_refunded <> 0)
  EXECUTE FUNCTION payments_refunds_add_up();

-- 3. Statuses move only along the transition tables.
CREATE TRIGGER payments_status_moves BEFORE UPDATE OF status ON payments
  FOR EACH ROW WHEN (OLD.status IS DISTINCT FROM NEW.status AND (OLD.status, NEW.status) NOT IN (
    ('created', 'pending'), ('created', 'captured'), ('created', 'failed'),
    ('pending', 'captured'), ('pending', 'failed'),
    ('failed', 'captured')))
  EXECUTE FUNCTION refuse_rule_from_trigger('payments_status_moves');
CREATE TRIGGER orders_status_moves BEFORE UPDATE OF status ON orders
  FOR EACH ROW WHEN (OLD.status IS DISTINCT FROM NEW.status AND (OLD.status, NEW.status) NOT IN (
    ('created', 'attempted'), ('attempted', 'paid')))
  EXECUTE FUNCTION refuse_rule_from_trigger('orders_status_moves');
CREATE TRIGGER refunds_status_moves BEFORE UPDATE OF status ON refunds
  FOR EACH ROW WHEN (OLD.status IS DISTINCT FROM NEW.status AND (OLD.status, NEW.status) NOT IN (
    ('pending', 'processed'), ('pending', 'failed')))
  EXECUTE FUNCTION refuse_rule_from_trigger('refunds_status_moves');

-- 4. What a row is about never changes.
CREATE TRIGGER orders_unchanged_identity BEFORE UPDATE OF account_id, mode, amount, currency ON orders
  FOR EACH ROW WHEN ((OLD.account_id, OLD.mode, OLD.amount, OLD.currency)
                     IS DISTINCT FROM (NEW.account_id, NEW.mode, NEW.amount, NEW.currency))
  EXECUTE FUNCTION refuse_rule_from_trigger('orders_unchanged_identity');
CREATE TRIGGER payments_unchanged_identity BEFORE UPDATE OF account_id, mode, order_id, amount, currency ON payments
  FOR EACH ROW WHEN ((OLD.account_id, OLD.mode, OLD.order_id, OLD.amount, OLD.currency)
                     IS DISTINCT FROM (NEW.account_id, NEW.mode, NEW.order_id, NEW.amount, NEW.currency))
  EXECUTE FUNCTION refuse_rule_from_trigger('payments_unchanged_identity');
CREATE TRIGGER refunds_unchanged_identity BEFORE UPDATE OF account_id, mode, payment_id, order_id, amount, currency ON refunds
  FOR EACH ROW WHEN ((OLD.account_id, OLD.mode, OLD.payment_id, OLD.order_id, OLD.amount, OLD.currency)
                     IS DISTINCT FROM (NEW.account_id, NEW.mode, NEW.payment_id, NEW.order_id, NEW.amount, NEW.currency))
  EXECUTE FUNCTION refuse_rule_from_trigger('refunds_unchanged_identity');
