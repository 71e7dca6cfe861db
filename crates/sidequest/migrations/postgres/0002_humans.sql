-- Sidequest schema for people at a browser and authoring tools, PostgreSQL: sessions, login
-- throttling, editable scenario drafts, author tokens and the GM's campaign wiki.
-- Node ids and slugs use the "C" collation so `ORDER BY` matches SQLite's byte order.
-- Keep in step with migrations/sqlite/0002_humans.sql: both backends run the same test suite.

CREATE TABLE sessions (
    -- SHA-256 (hex) of the cookie value and of the CSRF token; neither is stored.
    digest      TEXT   NOT NULL PRIMARY KEY,
    user_id     TEXT   NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    csrf_digest TEXT   NOT NULL,
    created_at  BIGINT NOT NULL,
    expires_at  BIGINT NOT NULL
);

CREATE INDEX sessions_user ON sessions (user_id);

-- One row per failed login; `key` is a username or an address. Rows older than a day are
-- pruned as new ones arrive (hence the index on `at` alone).
CREATE TABLE login_failures (
    key TEXT   NOT NULL,
    at  BIGINT NOT NULL
);

CREATE INDEX login_failures_key_at ON login_failures (key, at);
CREATE INDEX login_failures_at ON login_failures (at);

-- The editable nodes of a scenario; publishing copies them into scenario_nodes as the next
-- source version.
CREATE TABLE scenario_draft_nodes (
    scenario_id TEXT    NOT NULL REFERENCES scenarios (id) ON DELETE CASCADE,
    node_id     TEXT    COLLATE "C" NOT NULL,
    kind        TEXT    NOT NULL,
    title       TEXT    NOT NULL,
    published   BOOLEAN NOT NULL,
    public_text TEXT    NOT NULL,
    gm_text     TEXT    NOT NULL,
    PRIMARY KEY (scenario_id, node_id)
);

-- Scenarios created before drafts existed start editable from their latest version.
INSERT INTO scenario_draft_nodes
    (scenario_id, node_id, kind, title, published, public_text, gm_text)
SELECT n.scenario_id, n.node_id, n.kind, n.title, n.published, n.public_text, n.gm_text
FROM scenario_nodes n
JOIN scenarios s ON s.id = n.scenario_id AND s.version = n.version;

CREATE TABLE author_tokens (
    id         TEXT   NOT NULL PRIMARY KEY,
    user_id    TEXT   NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    name       TEXT   NOT NULL,
    -- SHA-256 (hex) of the token; the token itself is never stored.
    digest     TEXT   NOT NULL UNIQUE,
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL,
    revoked_at BIGINT
);

CREATE INDEX author_tokens_user ON author_tokens (user_id);

-- The current version of each page of a GM's private wiki.
CREATE TABLE wiki_pages (
    owner_id   TEXT   NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    slug       TEXT   COLLATE "C" NOT NULL,
    title      TEXT   NOT NULL,
    body       TEXT   NOT NULL,
    version    BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    PRIMARY KEY (owner_id, slug)
);

-- Every version of every page, the current one included.
CREATE TABLE wiki_page_versions (
    owner_id   TEXT   NOT NULL,
    slug       TEXT   COLLATE "C" NOT NULL,
    version    BIGINT NOT NULL,
    title      TEXT   NOT NULL,
    body       TEXT   NOT NULL,
    updated_at BIGINT NOT NULL,
    PRIMARY KEY (owner_id, slug, version),
    FOREIGN KEY (owner_id, slug) REFERENCES wiki_pages (owner_id, slug) ON DELETE CASCADE
);

-- No index for listing a user's assignments newest first: the gm and player indexes of 0001
-- find one user's rows, and sorting those few is cheaper than keeping an index on created_at.
