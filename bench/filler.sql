-- Fills a benchmark database with :n more assignments, each with a live play token, none ever
-- used by a benchmark client, then refreshes the planner's statistics. Both sides of a
-- comparison get it: Sidequest's database (bench/lib.sh `fill`, after priming) and pgbench's
-- copy (`seed_pgbench`), so that both plan their statements on the same statistics, those of a
-- service with thousands of assignments: index scans. Without it the two differed by chance:
-- seed.sql analyzed pgbench's 65-row tables (the planner then scans them whole and hashes, about
-- twice PostgreSQL's CPU a read), and Sidequest's were analyzed whenever autovacuum came by,
-- mid-run or never. The filler's ids ('…-4000-9000-…') and digests ('f…') are apart from
-- seed.sql's and from any a server mints.
INSERT INTO assignments (id, scenario_id, source_version, gm_id, player_id, mode, language,
       character, brief, instructions, boundaries, return_condition, gm_notes, published_node_ids,
       auto_approve, status, version, memory, current_scene, summary, created_at, updated_at)
SELECT '00000000-0000-4000-9000-' || lpad(i::text, 12, '0'), scenario_id, source_version, gm_id,
       player_id, mode, language, character, brief, instructions, boundaries, return_condition,
       gm_notes, published_node_ids, auto_approve, status, 1, memory, current_scene, summary,
       created_at, updated_at
  FROM (SELECT * FROM assignments ORDER BY created_at LIMIT 1) AS demo,
       generate_series(0, :n - 1) AS i;
INSERT INTO play_tokens (assignment_id, digest, created_at, expires_at)
SELECT '00000000-0000-4000-9000-' || lpad(i::text, 12, '0'), 'f' || lpad(i::text, 63, '0'), 0,
       9000000000000000
  FROM generate_series(0, :n - 1) AS i;
ANALYZE;
