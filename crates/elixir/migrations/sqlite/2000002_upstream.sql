-- The upstream record (SURFACE §7.5): an append-only receipt of every fetch of the Clash
-- Royale API, the raw JSON of each 200 kept two hours for reprocessing (the gzipped archive
-- keeps every payload for good), the latest card catalogue, and the claims that make a
-- scheduled read happen once across instances.

CREATE TABLE upstream_receipts (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    -- The path template: /cards, /players/{tag}, ...
    endpoint TEXT NOT NULL,
    -- The tag the read was about; NULL for subject-less endpoints.
    subject TEXT,
    fetched_at BIGINT NOT NULL,
    -- NULL when no HTTP answer came.
    status BIGINT,
    -- The archive address of a 200's payload.
    payload_sha256 TEXT,
    -- How the budget let it through: recorder, live, live_borrowed or probe.
    admission TEXT NOT NULL
);
CREATE INDEX upstream_receipts_endpoint ON upstream_receipts (endpoint, fetched_at);

CREATE TABLE upstream_raw (
    payload_sha256 TEXT PRIMARY KEY,
    endpoint TEXT NOT NULL,
    subject TEXT,
    body TEXT NOT NULL,
    -- The latest fetch that returned this payload; rows older than two hours are purged.
    fetched_at BIGINT NOT NULL
);
CREATE INDEX upstream_raw_fetched ON upstream_raw (fetched_at);

-- One row: the catalogue normalized from the latest /cards payload.
CREATE TABLE cards_catalogue (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    catalogue TEXT NOT NULL,
    payload_sha256 TEXT NOT NULL,
    observed_at BIGINT NOT NULL
);

-- The latest claimed slot of each scheduled job (the /cards read of a game day).
CREATE TABLE poll_claims (
    job TEXT PRIMARY KEY,
    slot TEXT NOT NULL,
    owner TEXT NOT NULL,
    claimed_at BIGINT NOT NULL,
    done_at BIGINT
);
