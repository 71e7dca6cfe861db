-- A login attempt reserves its failure rows before its password is checked, in one write
-- transaction per attempt (store::Store::reserve_login_attempt): it locks a row of
-- login_locks per key, counts, and inserts one login_failures row per key, whose ids it
-- returns so that the right password can delete exactly them again.
-- Keep in step with migrations/sqlite/0004_login_reservations.sql.

ALTER TABLE login_failures ADD COLUMN id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY;

-- One row per lock slot (a hash of the key, at most domain::login::LOCK_SLOTS rows), taken
-- with an upsert so even a key never seen before has a row to lock. Rows are never deleted:
-- a row some transaction may be locking is never pruned under it.
CREATE TABLE login_locks (
    slot BIGINT NOT NULL PRIMARY KEY,
    at   BIGINT NOT NULL
);
