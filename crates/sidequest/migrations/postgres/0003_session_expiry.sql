-- Expired sessions are deleted as new ones are created (create_session prunes by expiry).
CREATE INDEX sessions_expiry ON sessions (expires_at);
