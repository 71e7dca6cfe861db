-- The games of a list of players over a window (a clan's or an explicit list's meta reads,
-- store/meta_reads.rs), read through an index led by the player: `battle_games_window` is led
-- by the time, so a PostgreSQL plan over it walks the whole window once per member (or scans
-- the table), which took 1.4-2.7 s for a clan of 15 at 1.1 M games. Covers what the grouping
-- reads.
CREATE INDEX battle_games_player ON battle_games (player_tag, battle_time, mode, deck_hash, outcome);
