-- The meta tools' daily rollups (store/meta_reads.rs): a whole-corpus window reads its whole
-- UTC days from these (about days × decks × players rows) and only its partial edge days from
-- battle_games and battle_players. Written at ingest beside the games they count; filled here
-- from the rows already stored.

-- The games of each player with each deck per UTC day (battle_time ÷ 86,400,000) and mode.
CREATE TABLE meta_days (
    utc_day BIGINT NOT NULL,
    mode TEXT NOT NULL,
    -- '' for an undisclosed deck (battle_games.deck_hash NULL): a key cannot be NULL.
    deck_hash TEXT NOT NULL,
    player_tag TEXT NOT NULL,
    games BIGINT NOT NULL,
    wins BIGINT NOT NULL,
    losses BIGINT NOT NULL,
    draws BIGINT NOT NULL,
    PRIMARY KEY (utc_day, mode, deck_hash, player_tag)
);

-- The recorded battles per UTC day and mode, and how many of them an observation decided
-- (a win or a loss): the corpus population's battles_in_window and decided_battles.
CREATE TABLE meta_battle_days (
    utc_day BIGINT NOT NULL,
    mode TEXT NOT NULL,
    battles BIGINT NOT NULL,
    decided BIGINT NOT NULL,
    PRIMARY KEY (utc_day, mode)
);

INSERT INTO meta_days (utc_day, mode, deck_hash, player_tag, games, wins, losses, draws)
SELECT battle_time / 86400000, mode, COALESCE(deck_hash, ''), player_tag, COUNT(*),
    SUM(CASE WHEN outcome = 'win' THEN 1 ELSE 0 END),
    SUM(CASE WHEN outcome = 'loss' THEN 1 ELSE 0 END),
    SUM(CASE WHEN outcome = 'draw' THEN 1 ELSE 0 END)
FROM battle_games
GROUP BY battle_time / 86400000, mode, COALESCE(deck_hash, ''), player_tag;

INSERT INTO meta_battle_days (utc_day, mode, battles, decided)
SELECT utc_day, mode, COUNT(*), SUM(decided) FROM (
    SELECT battle_id, MIN(battle_time) / 86400000 AS utc_day, MIN(mode) AS mode,
        MAX(CASE WHEN outcome IN ('win', 'loss') THEN 1 ELSE 0 END) AS decided
    FROM battle_players GROUP BY battle_id
) x
GROUP BY utc_day, mode;

-- One-off fills that need the record's rules (Rust, not SQL), run by the store's migrate
-- after these statements and marked done there: 'battle_games' fills the games of
-- observations recorded before migration 2000005 from their stored battles.
CREATE TABLE elixir_backfills (
    name TEXT PRIMARY KEY,
    -- The observations it filled; NULL while it is pending.
    filled BIGINT
);
INSERT INTO elixir_backfills (name, filled) VALUES ('battle_games', NULL);
