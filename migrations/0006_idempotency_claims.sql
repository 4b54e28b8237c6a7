-- An Idempotency-Key is claimed before its request's work runs: a row in state 'started', committed
-- on its own, so a duplicate in flight sees it (409) on every database, and no connection is held
-- while the work waits on anything. The attempt that holds the claim completes it with the stored
-- response; an attempt that died leaves a claim whose lock runs out (locked_until), and a retry
-- takes it over. `seed` makes the ids a claimed request creates the same on every attempt, so a
-- retry after a crash finds what the dead attempt committed instead of creating it again.
ALTER TABLE idempotency_keys
  ADD COLUMN state text NOT NULL DEFAULT 'completed' CHECK (state IN ('started', 'completed')),
  ADD COLUMN attempt text,
  ADD COLUMN locked_until timestamptz,
  ADD COLUMN seed bytea;
ALTER TABLE idempotency_keys ALTER COLUMN state DROP DEFAULT;
ALTER TABLE idempotency_keys ALTER COLUMN status DROP NOT NULL;
ALTER TABLE idempotency_keys ALTER COLUMN body DROP NOT NULL;
ALTER TABLE idempotency_keys ADD CONSTRAINT idempotency_keys_claim_check CHECK (
  (state = 'started' AND attempt IS NOT NULL AND locked_until IS NOT NULL AND seed IS NOT NULL)
  OR (state = 'completed' AND status IS NOT NULL AND body IS NOT NULL)
);
