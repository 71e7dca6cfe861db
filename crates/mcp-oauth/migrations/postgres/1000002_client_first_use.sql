-- A client is *used* once a consent issues it an authorization code. Until then it holds one
-- of the day's registration slots and is deleted by the purge an hour after registering.
-- Clients registered before this migration are taken as used (grandfathered).
ALTER TABLE oauth_clients ADD COLUMN first_used_at BIGINT;
UPDATE oauth_clients SET first_used_at = created_at;
CREATE INDEX oauth_clients_unused ON oauth_clients (created_at) WHERE first_used_at IS NULL;
