-- Every row a charge writes (an order, a payment, its events, an idempotency claim, a refund, a
-- webhook delivery and its attempts) named its account through a foreign key, and each such check
-- takes a KEY SHARE lock on the one row of the merchant's account. Concurrent charges of one
-- merchant then share that lock through a multixact, which PostgreSQL writes onto the account row:
-- the hottest row in the database, rewritten for every insert (docs/performance.md measures it).
--
-- What those keys guarded is held another way: an account is never deleted (suspension is how an
-- account stops) and its id never changes, enforced below, and each of these rows takes its
-- account id from an authenticated key or from the parent row it belongs to (a payment from its
-- order, an event from the change it reports). Tables written rarely keep their foreign key.
ALTER TABLE orders DROP CONSTRAINT orders_account_id_fkey;
ALTER TABLE payments DROP CONSTRAINT payments_account_id_fkey;
ALTER TABLE events DROP CONSTRAINT events_account_id_fkey;
ALTER TABLE idempotency_keys DROP CONSTRAINT idempotency_keys_account_id_fkey;
ALTER TABLE refunds DROP CONSTRAINT refunds_account_id_fkey;
ALTER TABLE webhook_deliveries DROP CONSTRAINT webhook_deliveries_account_id_fkey;
ALTER TABLE webhook_attempts DROP CONSTRAINT webhook_attempts_account_id_fkey;
ALTER TABLE checkout_sessions DROP CONSTRAINT checkout_sessions_account_id_fkey;

CREATE FUNCTION accounts_are_kept() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'An account is never deleted and its id never changes; suspend it instead.'
    USING ERRCODE = 'restrict_violation';
END;
$$;

CREATE TRIGGER accounts_never_deleted BEFORE DELETE OR TRUNCATE ON accounts
  FOR EACH STATEMENT EXECUTE FUNCTION accounts_are_kept();
CREATE TRIGGER accounts_id_never_changes BEFORE UPDATE OF id ON accounts
  FOR EACH ROW WHEN (OLD.id IS DISTINCT FROM NEW.id) EXECUTE FUNCTION accounts_are_kept();
