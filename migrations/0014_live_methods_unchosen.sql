-- A merchant's live banks and wallets that its partner has never chosen are stored as NULL: the
-- merchant then offers every bank and wallet of the Kosh catalogue that its connector takes. The
-- partner's first change (PATCH /v1/api-portal/merchants/<mid>/methods/) stores a choice, which
-- holds from then on. Test mode always holds a choice (the sandbox catalogue at first).
ALTER TABLE account_methods ALTER COLUMN methods DROP NOT NULL;
ALTER TABLE account_methods ADD CONSTRAINT account_methods_test_chosen CHECK (methods IS NOT NULL OR mode = 'live');

-- Live rows left as their merchant's creation wrote them (in the same transaction, so with the
-- account's own timestamp, and empty) were never chosen: they offered nothing until now.
UPDATE account_methods m SET methods = NULL
  FROM accounts a
 WHERE a.id = m.account_id
   AND m.mode = 'live'
   AND m.updated_at = a.created_at
   AND m.methods -> 'netbanking' = '{}'::jsonb
   AND m.methods -> 'wallet' = '{}'::jsonb;
