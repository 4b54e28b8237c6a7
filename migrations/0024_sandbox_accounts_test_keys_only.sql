-- The sandbox partner and merchant Kosh creates on its first start (`accounts.sandbox`) are the
-- test credentials the README hands out: they never hold a live key, whoever asks for one (the
-- dashboard's "Create key" in live mode, the api-portal, an admin command). Live payments are taken
-- by accounts created for them (`kosh partner create`, `kosh merchant create`, the api-portal with
-- a live partner key). A live key for a sandbox account is refused as a check violation, named
-- `api_keys_test_only_for_sandbox_accounts`; the rule of migration 0022 stays as it was.
--
-- Live keys such an account already holds are revoked.

UPDATE api_keys AS k
   SET revoked_at = now()
  FROM accounts AS a
 WHERE a.id = k.account_id AND a.sandbox AND k.mode = 'live' AND k.revoked_at IS NULL;

CREATE OR REPLACE FUNCTION api_keys_keep_rules() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.mode = 'live' THEN
    IF EXISTS (SELECT 1 FROM merchant_profiles WHERE account_id = NEW.account_id AND mode = 'test') THEN
      PERFORM refuse_broken_rule('api_keys', 'api_keys_live_only_for_live_merchants');
    END IF;
    IF EXISTS (SELECT 1 FROM accounts WHERE id = NEW.account_id AND sandbox) THEN
      PERFORM refuse_broken_rule('api_keys', 'api_keys_test_only_for_sandbox_accounts');
    END IF;
  END IF;
  RETURN NEW;
END;
$$;
