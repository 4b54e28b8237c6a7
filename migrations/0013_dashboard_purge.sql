-- The dashboard purge job deletes expired sessions and failed logins past the throttle window in
-- small batches; these indexes let each batch find its rows without reading the whole table.
CREATE INDEX dashboard_sessions_last_seen_idx ON dashboard_sessions (last_seen_at);
CREATE INDEX dashboard_sessions_created_idx ON dashboard_sessions (created_at);
CREATE INDEX dashboard_login_failures_failed_at_idx ON dashboard_login_failures (failed_at);
