-- A login attempt reserves its failure rows before its password is checked, in one write
-- transaction per attempt (store::Store::reserve_login_attempt): it locks a row of
-- login_locks per key, counts, and inserts one login_failures row per key, whose ids it
-- returns so that the right password can delete exactly them again.
-- Keep in step with migrations/postgres/0004_login_reservations.sql.

-- SQLite cannot add a primary key to a table: rebuild it with one (an alias of the rowid).
CREATE TABLE login_failures_with_id (
    id  INTEGER PRIMARY KEY,
    key TEXT    NOT NULL,
    at  INTEGER NOT NULL
) STRICT;

INSERT INTO login_failures_with_id (key, at) SELECT key, at FROM login_failures;
DROP TABLE login_failures;
ALTER TABLE login_failures_with_id RENAME TO login_failures;
CREATE INDEX login_failures_key_at ON login_failures (key, at);
CREATE INDEX login_failures_at ON login_failures (at);

-- One row per lock slot (a hash of the key, at most domain::login::LOCK_SLOTS rows), taken
-- with an upsert so even a key never seen before has a row to lock. SQLite's write lock
-- already serializes reservations; the row keeps the statements the same as PostgreSQL's.
CREATE TABLE login_locks (
    slot INTEGER NOT NULL PRIMARY KEY,
    at   INTEGER NOT NULL
) STRICT;
