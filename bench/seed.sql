-- Seeds the pgbench copy of the schema (migrated by `sidequest migrate`, demo users and scenario
-- from `sidequest demo --assignments 1`): :n assignments cloned from the demo one, with the
-- predictable ids turn.sql computes from pgbench's :client_id, and a live play token each whose
-- digest request-reads.sql computes the same way. bench/filler.sql follows (lib.sh
-- `seed_pgbench`): the filler rows and the ANALYZE the server's database gets too.
INSERT INTO assignments (id, scenario_id, source_version, gm_id, player_id, mode, language,
       character, brief, instructions, boundaries, return_condition, gm_notes, published_node_ids,
       auto_approve, status, version, memory, current_scene, summary, created_at, updated_at)
SELECT '00000000-0000-4000-8000-' || lpad(i::text, 12, '0'), scenario_id, source_version, gm_id,
       player_id, mode, language, character, brief, instructions, boundaries, return_condition,
       gm_notes, published_node_ids, auto_approve, status, 1, memory, current_scene, summary,
       created_at, updated_at
  FROM (SELECT * FROM assignments ORDER BY created_at LIMIT 1) AS demo,
       generate_series(0, :n - 1) AS i;
INSERT INTO play_tokens (assignment_id, digest, created_at, expires_at)
SELECT '00000000-0000-4000-8000-' || lpad(i::text, 12, '0'), lpad(i::text, 64, '0'), 0,
       9000000000000000
  FROM generate_series(0, :n - 1) AS i;
