-- The meta tools' index (SURFACE §2.4 battles_meta_decks and battles_meta_cards, §3.4): the
-- games a recorded player's side of a battle counts as in deck and card rows, and each
-- distinct deck once. Written with the observation (store/meta_reads.rs), so a segment's
-- decks are one GROUP BY over plain columns instead of a parse of every stored body.

-- One row per game of an observation: a battle that is not a duel is one game (round 0); a
-- duel is one game per round (1, 2, 3), with the round's deck and outcome.
CREATE TABLE battle_games (
    player_tag TEXT NOT NULL,
    battle_id TEXT NOT NULL REFERENCES battles (battle_id),
    round BIGINT NOT NULL,
    battle_time BIGINT NOT NULL,
    mode TEXT NOT NULL,
    -- The player's outcome of the game: 'win', 'loss', 'draw' or NULL (unknown).
    outcome TEXT,
    -- NULL when the deck is undisclosed (cards: []) or a boat defence list.
    deck_hash TEXT,
    PRIMARY KEY (player_tag, battle_id, round)
);
-- Covers the whole-corpus aggregation (window and mode, then the grouped columns).
CREATE INDEX battle_games_window ON battle_games (battle_time, mode, deck_hash, player_tag, outcome);

-- Each distinct deck, as its first game showed it.
CREATE TABLE decks (
    deck_hash TEXT PRIMARY KEY,
    -- The "<id>:<form>" keys sorted bytewise and joined by ',' (as the hash reads them).
    card_keys TEXT NOT NULL,
    -- JSON [{id, name, form, elixir}] in card_keys order.
    cards TEXT NOT NULL,
    -- JSON {id, name} of the tower troop; NULL when none was reported (war battles).
    tower_troop TEXT
);

-- The population of a window (players, battles, decided battles) reads observations by time;
-- covering, so the whole-corpus count never visits the table.
CREATE INDEX battle_players_window ON battle_players (battle_time, mode, player_tag, outcome, battle_id);
