-- Clones :n assignments from a database's first (demo) one, each with a live play token, the
-- ids '00000000-0000-4000-:block-' and the index i (0 … :n - 1), the digests :'mark' then i,
-- zero-padded to 64 characters. Run by bench/lib.sh two ways:
--   - `seed_pgbench` (block 8000, no mark) on pgbench's copy of the schema (migrated by
--     `sidequest migrate`, demo users and scenario from `sidequest demo --assignments 1`): the
--     predictable ids turn.sql computes from pgbench's :client_id, and the digests
--     request-reads.sql computes the same way;
--   - `fill` (block 9000, mark 'f') on the server's database and pgbench's copy alike: rows no
--     client uses, apart from the seeded ones and from any a server mints, so that both
--     databases hold thousands of assignments; `fill` then runs ANALYZE.
INSERT INTO assignments (id, scenario_id, source_version, gm_id, player_id, mode, language,
       character, brief, instructions, boundaries, return_condition, gm_notes, published_node_ids,
       auto_approve, status, version, memory, current_scene, summary, created_at, updated_at)
SELECT '00000000-0000-4000-' || :'block' || '-' || lpad(i::text, 12, '0'), scenario_id,
       source_version, gm_id, player_id, mode, language, character, brief, instructions,
       boundaries, return_condition, gm_notes, published_node_ids, auto_approve, status, 1,
       memory, current_scene, summary, created_at, updated_at
  FROM (SELECT * FROM assignments ORDER BY created_at LIMIT 1) AS demo,
       generate_series(0, :n - 1) AS i;
INSERT INTO play_tokens (assignment_id, digest, created_at, expires_at)
SELECT '00000000-0000-4000-' || :'block' || '-' || lpad(i::text, 12, '0'),
       :'mark' || lpad(i::text, 64 - length(:'mark'), '0'), 0, 9000000000000000
  FROM generate_series(0, :n - 1) AS i;
