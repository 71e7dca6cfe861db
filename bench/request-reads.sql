-- The two statements a commit_play_turn request issues before its transaction, each on its own
-- pooled connection: the play-token lookup of PlayAuthenticator (store/sql.rs PLAY_TOKEN) and
-- PlayService::commit_turn's assignment read (Store::assignment). bench/run.sh prepends this
-- to turn.sql for the informative "whole request's SQL" pgbench run.
SELECT t.assignment_id, a.player_id, a.gm_id, t.expires_at, (t.revoked_at IS NOT NULL) AS revoked,
       p.active AS player_active, g.active AS gm_active, a.language
  FROM play_tokens t
  JOIN assignments a ON a.id = t.assignment_id
  JOIN users p ON p.id = a.player_id
  JOIN users g ON g.id = a.gm_id
 WHERE t.digest = lpad(:client_id::text, 64, '0');
SELECT id, scenario_id, source_version, gm_id, player_id, mode, language, character, brief,
       instructions, boundaries, return_condition, gm_notes, published_node_ids, auto_approve,
       status, version, memory, current_scene, summary, created_at, updated_at
  FROM assignments WHERE id = '00000000-0000-4000-8000-' || lpad(:client_id::text, 12, '0');
