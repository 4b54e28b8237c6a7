-- A checkout link starts at most 20 payments (CHECKOUT_MAX_ATTEMPTS, docs/checkout.md), however
-- many customers' posts arrive at once and on however many hosts. The page counts them before it
-- starts one; the database holds the rule: a payment inserted for a session serialises on the
-- session's row (FOR NO KEY UPDATE: the payments' foreign-key checks are not blocked) and is
-- refused as a check violation, named `payments_checkout_attempts`, when the session has 20.
-- Only payments of a checkout session pay for the trigger (its WHEN clause).

CREATE FUNCTION payments_checkout_attempts() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM 1 FROM checkout_sessions WHERE id = NEW.checkout_session_id FOR NO KEY UPDATE;
  -- A new snapshot: the payments of a post that held the row before this one are counted (and not
  -- the row itself, should a resumed insert find it there already).
  IF (SELECT count(*) FROM payments
       WHERE checkout_session_id = NEW.checkout_session_id AND id <> NEW.id) >= 20 THEN
    PERFORM refuse_broken_rule('payments', 'payments_checkout_attempts');
  END IF;
  RETURN NEW;
END;
$$;

CREATE TRIGGER payments_checkout_attempts BEFORE INSERT ON payments
  FOR EACH ROW WHEN (NEW.checkout_session_id IS NOT NULL) EXECUTE FUNCTION payments_checkout_attempts();
