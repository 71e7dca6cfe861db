-- Sidequest schema, SQLite. Uuids are TEXT (hyphenated), times are INTEGER milliseconds since
-- the Unix epoch, booleans are INTEGER 0/1, JSON is TEXT. STRICT tables refuse mistyped values.
-- Keep in step with migrations/postgres/0001_init.sql: both backends run the same test suite.

CREATE TABLE users (
    id            TEXT    NOT NULL PRIMARY KEY,
    username      TEXT    NOT NULL UNIQUE,
    display_name  TEXT    NOT NULL,
    password_hash TEXT,
    is_gm         INTEGER NOT NULL CHECK (is_gm IN (0, 1)),
    active        INTEGER NOT NULL DEFAULT 1 CHECK (active IN (0, 1)),
    created_at    INTEGER NOT NULL
) STRICT;

CREATE TABLE scenarios (
    id         TEXT    NOT NULL PRIMARY KEY,
    owner_id   TEXT    NOT NULL REFERENCES users (id),
    title      TEXT    NOT NULL,
    version    INTEGER NOT NULL,
    created_at INTEGER NOT NULL
) STRICT;

CREATE INDEX scenarios_owner_title ON scenarios (owner_id, title);

CREATE TABLE scenario_nodes (
    scenario_id TEXT    NOT NULL REFERENCES scenarios (id) ON DELETE CASCADE,
    version     INTEGER NOT NULL,
    node_id     TEXT    NOT NULL,
    kind        TEXT    NOT NULL,
    title       TEXT    NOT NULL,
    published   INTEGER NOT NULL CHECK (published IN (0, 1)),
    public_text TEXT    NOT NULL,
    gm_text     TEXT    NOT NULL,
    PRIMARY KEY (scenario_id, version, node_id)
) STRICT;

CREATE TABLE assignments (
    id                 TEXT    NOT NULL PRIMARY KEY,
    scenario_id        TEXT    NOT NULL REFERENCES scenarios (id),
    source_version     INTEGER NOT NULL,
    gm_id              TEXT    NOT NULL REFERENCES users (id),
    player_id          TEXT    NOT NULL REFERENCES users (id),
    mode               TEXT    NOT NULL,
    language           TEXT    NOT NULL,
    character          TEXT    NOT NULL,
    brief              TEXT    NOT NULL,
    instructions       TEXT    NOT NULL,
    boundaries         TEXT    NOT NULL,
    return_condition   TEXT    NOT NULL,
    gm_notes           TEXT    NOT NULL,
    -- JSON array of node ids.
    published_node_ids TEXT    NOT NULL,
    auto_approve       INTEGER NOT NULL CHECK (auto_approve IN (0, 1)),
    status             TEXT    NOT NULL,
    version            INTEGER NOT NULL,
    memory             TEXT    NOT NULL,
    current_scene      TEXT,
    summary            TEXT,
    created_at         INTEGER NOT NULL,
    updated_at         INTEGER NOT NULL,
    -- Hash of the creating request, for idempotent REST creation (unused until that lands).
    creation_hash      TEXT
) STRICT;

CREATE INDEX assignments_gm ON assignments (gm_id);
CREATE INDEX assignments_player ON assignments (player_id);

CREATE TABLE play_tokens (
    id            INTEGER NOT NULL PRIMARY KEY,
    assignment_id TEXT    NOT NULL REFERENCES assignments (id) ON DELETE CASCADE,
    -- SHA-256 (hex) of the token; the token itself is never stored.
    digest        TEXT    NOT NULL UNIQUE,
    created_at    INTEGER NOT NULL,
    expires_at    INTEGER NOT NULL,
    revoked_at    INTEGER
) STRICT;

CREATE INDEX play_tokens_assignment ON play_tokens (assignment_id);

CREATE TABLE journal_events (
    assignment_id TEXT    NOT NULL REFERENCES assignments (id) ON DELETE CASCADE,
    version       INTEGER NOT NULL,
    kind          TEXT    NOT NULL,
    operation_id  TEXT,
    player_action TEXT,
    narration     TEXT,
    summary       TEXT,
    gm_private    TEXT,
    scene         TEXT,
    created_at    INTEGER NOT NULL,
    PRIMARY KEY (assignment_id, version)
) STRICT;

CREATE TABLE consequences (
    id            TEXT    NOT NULL PRIMARY KEY,
    assignment_id TEXT    NOT NULL REFERENCES assignments (id) ON DELETE CASCADE,
    version       INTEGER NOT NULL,
    -- Position within the turn that proposed it.
    seq           INTEGER NOT NULL,
    category      TEXT    NOT NULL,
    description   TEXT    NOT NULL,
    status        TEXT    NOT NULL,
    gm_note       TEXT,
    created_at    INTEGER NOT NULL,
    decided_at    INTEGER,
    UNIQUE (assignment_id, version, seq)
) STRICT;

CREATE TABLE receipts (
    assignment_id TEXT    NOT NULL REFERENCES assignments (id) ON DELETE CASCADE,
    operation_id  TEXT    NOT NULL,
    kind          TEXT    NOT NULL,
    args_hash     TEXT    NOT NULL,
    -- The original result, as JSON.
    result        TEXT    NOT NULL,
    version       INTEGER NOT NULL,
    created_at    INTEGER NOT NULL,
    PRIMARY KEY (assignment_id, operation_id)
) STRICT;
