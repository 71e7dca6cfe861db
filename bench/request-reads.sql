-- The one statement a commit_play_turn request issues before its write: the play-token
-- check of PlayAuthenticator (store/assignments.rs PLAY_TOKEN; since issue 14 it also reads the
-- assignment's version, and the turn's read and write run on the same connection).
-- bench/run.sh prepends this to turn.sql for the informative "whole request's SQL" pgbench run.
SELECT t.assignment_id, a.player_id, a.gm_id, t.expires_at, (t.revoked_at IS NOT NULL) AS revoked,
       p.active AS player_active, g.active AS gm_active, a.language, a.scenario_id,
       a.source_version, a.version
  FROM play_tokens t
  JOIN assignments a ON a.id = t.assignment_id
  JOIN users p ON p.id = a.player_id
  JOIN users g ON g.id = a.gm_id
 WHERE t.digest = lpad(:client_id::text, 64, '0');
