-- An observation (`battle_players`) and its games (`battle_games`) are written only by the
-- ingest (store/record.rs `write_fresh`), in the transaction that first inserted or locked
-- their battle row, and no code deletes a battle: every observation has its battle by
-- construction. The declared foreign keys checked that again for every row, each check a
-- lookup of `battles` and a row lock taken through a trigger: about a fifth of PostgreSQL's
-- time in a bulk ingest (docs/benchmarks.md, "Ingest without foreign-key checks"). The keys
-- go; the test `every_observation_has_its_battle` holds the invariant on both backends.
ALTER TABLE battle_players DROP CONSTRAINT IF EXISTS battle_players_battle_id_fkey;
ALTER TABLE battle_games DROP CONSTRAINT IF EXISTS battle_games_battle_id_fkey;
