-- Elixir's first schema. Versions start at 2_000_001 so they never collide with mcp-oauth's,
-- which share the database. Instants are milliseconds since the Unix epoch; ids are UUID text.

CREATE TABLE accounts (
    id TEXT PRIMARY KEY,
    email TEXT UNIQUE,
    tier TEXT NOT NULL DEFAULT 'member'
        CHECK (tier IN ('member', 'leader', 'family', 'partner', 'admin')),
    timezone TEXT NOT NULL DEFAULT 'UTC',
    primary_player_tag TEXT,
    created_at BIGINT NOT NULL
);

CREATE TABLE agents (
    id TEXT PRIMARY KEY,
    public_id TEXT NOT NULL UNIQUE,
    owner_account_id TEXT NOT NULL REFERENCES accounts (id),
    name TEXT NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('agent', 'integration')),
    suspended BOOLEAN NOT NULL DEFAULT FALSE,
    key_digest TEXT UNIQUE,
    -- Space-separated capabilities; empty means the five standard ones.
    key_scopes TEXT NOT NULL DEFAULT '',
    timezone TEXT,
    created_at BIGINT NOT NULL
);
CREATE INDEX agents_owner ON agents (owner_account_id);

CREATE TABLE feedback (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    account_id TEXT NOT NULL REFERENCES accounts (id),
    agent_id TEXT REFERENCES agents (id),
    principal_kind TEXT NOT NULL CHECK (principal_kind IN ('person', 'agent', 'integration')),
    on_behalf_of TEXT,
    category TEXT NOT NULL,
    message TEXT NOT NULL,
    context TEXT,
    request_id TEXT,
    status TEXT NOT NULL DEFAULT 'new'
        CHECK (status IN ('new', 'seen', 'planned', 'done', 'declined')),
    response TEXT,
    responded_at BIGINT,
    shipped_in TEXT,
    related_tools TEXT NOT NULL DEFAULT '[]',
    created_at BIGINT NOT NULL,
    delivered_at BIGINT
);
CREATE INDEX feedback_ledger ON feedback (account_id, agent_id, created_at);

CREATE TABLE audit (
    request_id TEXT PRIMARY KEY,
    account_id TEXT,
    agent_id TEXT,
    door TEXT NOT NULL,
    tool TEXT,
    arguments TEXT,
    response TEXT,
    error_code TEXT,
    duration_ms BIGINT NOT NULL,
    created_at BIGINT NOT NULL
);
CREATE INDEX audit_account ON audit (account_id, created_at);

CREATE TABLE refusals (
    credential_hint TEXT NOT NULL,
    address TEXT NOT NULL,
    day TEXT NOT NULL,
    door TEXT NOT NULL,
    reason TEXT NOT NULL,
    count BIGINT NOT NULL,
    last_at BIGINT NOT NULL,
    PRIMARY KEY (credential_hint, address, day)
);

CREATE TABLE usage_counters (
    subject TEXT NOT NULL,
    window_kind TEXT NOT NULL CHECK (window_kind IN ('hour', 'day')),
    window_start BIGINT NOT NULL,
    count BIGINT NOT NULL,
    PRIMARY KEY (subject, window_kind, window_start)
);
