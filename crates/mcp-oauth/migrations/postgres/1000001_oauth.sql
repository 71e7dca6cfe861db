-- mcp-oauth schema. Versions start at 1_000_001 so they never collide with a product's own
-- migrations in the shared _sqlx_migrations table. Secrets are stored only as hashes.

CREATE TABLE oauth_clients (
    client_id       TEXT PRIMARY KEY,
    client_name     TEXT NOT NULL,
    redirect_uris   TEXT NOT NULL,          -- JSON array
    grant_types     TEXT NOT NULL,          -- JSON array
    registered_from TEXT NOT NULL,
    created_at      BIGINT NOT NULL,
    last_used_at    BIGINT NOT NULL
);
CREATE INDEX oauth_clients_last_used ON oauth_clients (last_used_at);

CREATE TABLE oauth_pending (
    id                TEXT PRIMARY KEY,
    csrf_hash         TEXT NOT NULL,
    client_id         TEXT NOT NULL,
    client_name       TEXT NOT NULL,
    redirect_uri      TEXT NOT NULL,
    state             TEXT,
    code_challenge    TEXT NOT NULL,
    resource          TEXT NOT NULL,
    requested_scope   TEXT,
    signed_in_account TEXT,
    email             TEXT,
    created_at        BIGINT NOT NULL,
    expires_at        BIGINT NOT NULL,
    done_at           BIGINT
);
CREATE INDEX oauth_pending_expires ON oauth_pending (expires_at);

CREATE TABLE oauth_email_codes (
    pending_id TEXT PRIMARY KEY,
    email      TEXT NOT NULL,
    code_hash  TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL,
    attempts   BIGINT NOT NULL DEFAULT 0,
    used_at    BIGINT
);

CREATE TABLE oauth_sessions (
    id_hash    TEXT PRIMARY KEY,
    account_id TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL
);
CREATE INDEX oauth_sessions_expires ON oauth_sessions (expires_at);

CREATE TABLE oauth_auth_codes (
    code_hash      TEXT PRIMARY KEY,
    client_id      TEXT NOT NULL,
    client_name    TEXT NOT NULL,
    redirect_uri   TEXT NOT NULL,
    code_challenge TEXT NOT NULL,
    resource       TEXT NOT NULL,
    account_id     TEXT NOT NULL,
    subject_kind   TEXT NOT NULL,
    subject_id     TEXT NOT NULL,
    personal       BOOLEAN NOT NULL,
    scopes         TEXT NOT NULL,
    created_at     BIGINT NOT NULL,
    expires_at     BIGINT NOT NULL,
    used_at        BIGINT,
    replayed_at    BIGINT,
    grant_id       TEXT
);
CREATE INDEX oauth_auth_codes_expires ON oauth_auth_codes (expires_at);

CREATE TABLE oauth_grants (
    id           TEXT PRIMARY KEY,
    client_id    TEXT NOT NULL,
    client_name  TEXT NOT NULL,
    resource     TEXT NOT NULL,
    account_id   TEXT NOT NULL,
    subject_kind TEXT NOT NULL,
    subject_id   TEXT NOT NULL,
    personal     BOOLEAN NOT NULL,
    scopes       TEXT NOT NULL,
    created_at   BIGINT NOT NULL,
    updated_at   BIGINT NOT NULL,
    last_used_at BIGINT NOT NULL,
    revoked_at   BIGINT
);
CREATE INDEX oauth_grants_account ON oauth_grants (account_id);

CREATE TABLE oauth_access_tokens (
    token_hash TEXT PRIMARY KEY,
    grant_id   TEXT NOT NULL REFERENCES oauth_grants (id) ON DELETE CASCADE,
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL
);
CREATE INDEX oauth_access_tokens_grant ON oauth_access_tokens (grant_id);
CREATE INDEX oauth_access_tokens_expires ON oauth_access_tokens (expires_at);

CREATE TABLE oauth_refresh_tokens (
    token_hash     TEXT PRIMARY KEY,
    grant_id       TEXT NOT NULL REFERENCES oauth_grants (id) ON DELETE CASCADE,
    created_at     BIGINT NOT NULL,
    expires_at     BIGINT NOT NULL,
    rotated_at     BIGINT,
    successor_hash TEXT
);
CREATE INDEX oauth_refresh_tokens_grant ON oauth_refresh_tokens (grant_id);
CREATE INDEX oauth_refresh_tokens_expires ON oauth_refresh_tokens (expires_at);

CREATE TABLE oauth_rate_counters (
    bucket       TEXT NOT NULL,
    window_start BIGINT NOT NULL,
    hits         BIGINT NOT NULL,
    PRIMARY KEY (bucket, window_start)
);

CREATE TABLE oauth_refusals (
    credential TEXT NOT NULL,
    address    TEXT NOT NULL,
    day        BIGINT NOT NULL,
    reason     TEXT NOT NULL,
    hits       BIGINT NOT NULL,
    last_at    BIGINT NOT NULL,
    PRIMARY KEY (credential, address, day, reason)
);
