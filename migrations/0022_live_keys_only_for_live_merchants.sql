-- A merchant a partner onboarded in test mode is a sandbox merchant: its simulated review activates
-- it, but it never holds a live key (docs/onboarding.md), whoever asks for one (the api-portal, the
-- dashboard's "Create key", an admin command). The rule is the database's: a live key for such an
-- account is refused as a check violation, named `api_keys_live_only_for_live_merchants`.
--
-- Live keys such an account already holds are revoked.

UPDATE api_keys AS k
   SET revoked_at = now()
  FROM merchant_profiles AS p
 WHERE p.account_id = k.account_id AND p.mode = 'test' AND k.mode = 'live' AND k.revoked_at IS NULL;

CREATE FUNCTION api_keys_keep_rules() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.mode = 'live'
     AND EXISTS (SELECT 1 FROM merchant_profiles WHERE account_id = NEW.account_id AND mode = 'test') THEN
    PERFORM refuse_broken_rule('api_keys', 'api_keys_live_only_for_live_merchants');
  END IF;
  RETURN NEW;
END;
$$;

CREATE TRIGGER api_keys_keep_rules BEFORE INSERT OR UPDATE OF mode, account_id ON api_keys
  FOR EACH ROW EXECUTE FUNCTION api_keys_keep_rules();
