-- An observation (`battle_players`) and its games (`battle_games`) are written only by the
-- ingest (store/record.rs `write_fresh`), in the transaction that first inserted their battle
-- row, and no code deletes a battle: every observation has its battle by construction. The
-- declared foreign keys checked that again for every row (a lookup of `battles` each) and made
-- SQLite keep a statement journal for every multi-row insert (docs/benchmarks.md, "Ingest
-- without foreign-key checks"). SQLite cannot drop a constraint, so both tables are rebuilt
-- as they were, without it, and their indexes made again; the test
-- `every_observation_has_its_battle` holds the invariant on both backends.
CREATE TABLE battle_players_rebuilt (
    player_tag TEXT NOT NULL,
    battle_id TEXT NOT NULL,
    battle_time BIGINT NOT NULL,
    mode TEXT NOT NULL,
    game_mode_id BIGINT,
    -- 'team' or 'opponent' in the stored body.
    side TEXT NOT NULL,
    outcome TEXT,
    crowns BIGINT,
    trophy_change BIGINT,
    deck_hash TEXT,
    opponent_tag TEXT,
    clan_tag TEXT,
    observed_at BIGINT NOT NULL,
    PRIMARY KEY (player_tag, battle_id)
);
INSERT INTO battle_players_rebuilt (player_tag, battle_id, battle_time, mode, game_mode_id,
    side, outcome, crowns, trophy_change, deck_hash, opponent_tag, clan_tag, observed_at)
SELECT player_tag, battle_id, battle_time, mode, game_mode_id, side, outcome, crowns,
    trophy_change, deck_hash, opponent_tag, clan_tag, observed_at
FROM battle_players;
DROP TABLE battle_players;
ALTER TABLE battle_players_rebuilt RENAME TO battle_players;
CREATE INDEX battle_players_time ON battle_players (player_tag, battle_time);
CREATE INDEX battle_players_clan ON battle_players (clan_tag, battle_time);
CREATE INDEX battle_players_battle ON battle_players (battle_id);
CREATE INDEX battle_players_window ON battle_players (battle_time, mode, player_tag, outcome, battle_id);

CREATE TABLE battle_games_rebuilt (
    player_tag TEXT NOT NULL,
    battle_id TEXT NOT NULL,
    round BIGINT NOT NULL,
    battle_time BIGINT NOT NULL,
    mode TEXT NOT NULL,
    -- The player's outcome of the game: 'win', 'loss', 'draw' or NULL (unknown).
    outcome TEXT,
    -- NULL when the deck is undisclosed (cards: []) or a boat defence list.
    deck_hash TEXT,
    PRIMARY KEY (player_tag, battle_id, round)
);
INSERT INTO battle_games_rebuilt (player_tag, battle_id, round, battle_time, mode, outcome,
    deck_hash)
SELECT player_tag, battle_id, round, battle_time, mode, outcome, deck_hash FROM battle_games;
DROP TABLE battle_games;
ALTER TABLE battle_games_rebuilt RENAME TO battle_games;
CREATE INDEX battle_games_window ON battle_games (battle_time, mode, deck_hash, player_tag, outcome);
CREATE INDEX battle_games_player ON battle_games (player_tag, battle_time, mode, deck_hash, outcome);
