-- Sidequest schema, PostgreSQL. Uuids are TEXT (hyphenated, as in SQLite, so both backends
-- share one row mapping), times are BIGINT milliseconds since the Unix epoch, JSON is TEXT.
-- Node ids use the "C" collation so `ORDER BY node_id` matches SQLite's byte order.
-- Keep in step with migrations/sqlite/0001_init.sql: both backends run the same test suite.

CREATE TABLE users (
    id            TEXT    NOT NULL PRIMARY KEY,
    username      TEXT    NOT NULL UNIQUE,
    display_name  TEXT    NOT NULL,
    password_hash TEXT,
    is_gm         BOOLEAN NOT NULL,
    active        BOOLEAN NOT NULL DEFAULT TRUE,
    created_at    BIGINT  NOT NULL
);

CREATE TABLE scenarios (
    id         TEXT   NOT NULL PRIMARY KEY,
    owner_id   TEXT   NOT NULL REFERENCES users (id),
    title      TEXT   NOT NULL,
    version    BIGINT NOT NULL,
    created_at BIGINT NOT NULL
);

CREATE INDEX scenarios_owner_title ON scenarios (owner_id, title);

CREATE TABLE scenario_nodes (
    scenario_id TEXT    NOT NULL REFERENCES scenarios (id) ON DELETE CASCADE,
    version     BIGINT  NOT NULL,
    node_id     TEXT    COLLATE "C" NOT NULL,
    kind        TEXT    NOT NULL,
    title       TEXT    NOT NULL,
    published   BOOLEAN NOT NULL,
    public_text TEXT    NOT NULL,
    gm_text     TEXT    NOT NULL,
    PRIMARY KEY (scenario_id, version, node_id)
);

CREATE TABLE assignments (
    id                 TEXT    NOT NULL PRIMARY KEY,
    scenario_id        TEXT    NOT NULL REFERENCES scenarios (id),
    source_version     BIGINT  NOT NULL,
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
    auto_approve       BOOLEAN NOT NULL,
    status             TEXT    NOT NULL,
    version            BIGINT  NOT NULL,
    memory             TEXT    NOT NULL,
    current_scene      TEXT,
    summary            TEXT,
    created_at         BIGINT  NOT NULL,
    updated_at         BIGINT  NOT NULL,
    -- Hash of the creating request, for idempotent REST creation (unused until that lands).
    creation_hash      TEXT
);

CREATE INDEX assignments_gm ON assignments (gm_id);
CREATE INDEX assignments_player ON assignments (player_id);

CREATE TABLE play_tokens (
    id            BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    assignment_id TEXT   NOT NULL REFERENCES assignments (id) ON DELETE CASCADE,
    -- SHA-256 (hex) of the token; the token itself is never stored.
    digest        TEXT   NOT NULL UNIQUE,
    created_at    BIGINT NOT NULL,
    expires_at    BIGINT NOT NULL,
    revoked_at    BIGINT
);

CREATE INDEX play_tokens_assignment ON play_tokens (assignment_id);

CREATE TABLE journal_events (
    assignment_id TEXT   NOT NULL REFERENCES assignments (id) ON DELETE CASCADE,
    version       BIGINT NOT NULL,
    kind          TEXT   NOT NULL,
    operation_id  TEXT,
    player_action TEXT,
    narration     TEXT,
    summary       TEXT,
    gm_private    TEXT,
    scene         TEXT,
    created_at    BIGINT NOT NULL,
    PRIMARY KEY (assignment_id, version)
);

CREATE TABLE consequences (
    id            TEXT   NOT NULL PRIMARY KEY,
    assignment_id TEXT   NOT NULL REFERENCES assignments (id) ON DELETE CASCADE,
    version       BIGINT NOT NULL,
    -- Position within the turn that proposed it.
    seq           BIGINT NOT NULL,
    category      TEXT   NOT NULL,
    description   TEXT   NOT NULL,
    status        TEXT   NOT NULL,
    gm_note       TEXT,
    created_at    BIGINT NOT NULL,
    decided_at    BIGINT,
    UNIQUE (assignment_id, version, seq)
);

CREATE TABLE receipts (
    assignment_id TEXT   NOT NULL REFERENCES assignments (id) ON DELETE CASCADE,
    operation_id  TEXT   NOT NULL,
    kind          TEXT   NOT NULL,
    args_hash     TEXT   NOT NULL,
    -- The original result, as JSON.
    result        TEXT   NOT NULL,
    version       BIGINT NOT NULL,
    created_at    BIGINT NOT NULL,
    PRIMARY KEY (assignment_id, operation_id)
);
