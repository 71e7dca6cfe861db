-- The play-token check of PlayTokens (store/assignments.rs PLAY_TOKEN: the token, its
-- assignment's version, its player and GM), the statement a commit_play_turn request issues
-- before its write when its token is checked first: the token's first request on an instance,
-- or a turn the one-statement path (turn.sql) did not write. bench/run.sh prepends it to
-- turn.sql for the informative "a turn checked first" pgbench run.
SELECT t.assignment_id, a.player_id, a.gm_id, t.expires_at, (t.revoked_at IS NOT NULL) AS revoked,
       p.active AS player_active, g.active AS gm_active, a.language, a.scenario_id,
       a.source_version, a.version
  FROM play_tokens t
  JOIN assignments a ON a.id = t.assignment_id
  JOIN users p ON p.id = a.player_id
  JOIN users g ON g.id = a.gm_id
 WHERE t.digest = lpad(:client_id::text, 64, '0');
