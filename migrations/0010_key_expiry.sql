-- A rolled key keeps working until `expires_at` (the overlap its owner chose), then stops; a
-- revoked one stops at once (`revoked_at`).
ALTER TABLE api_keys ADD COLUMN expires_at timestamptz;
