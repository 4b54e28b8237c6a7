-- The dashboard's home page counts an account's failed payments of the last 30 days. An index of
-- every payment by creation time cost each payment start a second hot B-tree insert (the S2S
-- benchmark lost about 40 % of its throughput); failed payments only are indexed instead, when
-- they fail (that update changes an indexed column anyway).
DROP INDEX payments_created_idx;
CREATE INDEX payments_failed_idx ON payments (account_id, mode, created_at) WHERE status = 'failed';
