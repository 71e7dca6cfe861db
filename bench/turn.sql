-- One commit_play_turn transaction, statement for statement as
-- crates/sidequest/src/store/play.rs (`apply` → `apply_locked` → `write_plan`) issues it
-- for a turn with two consequences. Run with `-M prepared` (sqlx prepares and caches every
-- statement) and the -D variables bench/run.sh passes (texts of the same sizes as loadgen's).
-- pgbench client i works on seeded assignment i (bench/seed.sql), like loadgen's client i.
\set op random(1, 9223372036854775806)
BEGIN;
SELECT id, scenario_id, source_version, gm_id, player_id, mode, language, character, brief,
       instructions, boundaries, return_condition, gm_notes, published_node_ids, auto_approve,
       status, version, memory, current_scene, summary, created_at, updated_at
  FROM assignments WHERE id = '00000000-0000-4000-8000-' || lpad(:client_id::text, 12, '0')
  FOR UPDATE \gset a_
\set next :a_version + 1
SELECT assignment_id, operation_id, kind, args_hash, result, version, created_at
  FROM receipts WHERE assignment_id = :a_id AND operation_id = md5(:op::text)::uuid::text;
UPDATE assignments SET version = :next, status = 'active', memory = :memory,
       current_scene = :scene, summary = NULL, updated_at = :now
 WHERE id = :a_id AND version = :a_version;
INSERT INTO journal_events (assignment_id, version, kind, operation_id, player_action, narration,
       summary, gm_private, scene, created_at)
VALUES (:a_id, :next, 'turn', md5(:op::text)::uuid::text, :action, :narration, NULL, NULL,
       :scene, :now);
INSERT INTO consequences (id, assignment_id, version, seq, category, description, status,
       gm_note, created_at, decided_at)
VALUES (md5(:op::text || '-0')::uuid::text, :a_id, :next, 0, 'relationship', :desc0, 'pending',
       NULL, :now, NULL);
INSERT INTO consequences (id, assignment_id, version, seq, category, description, status,
       gm_note, created_at, decided_at)
VALUES (md5(:op::text || '-1')::uuid::text, :a_id, :next, 1, 'discovery', :desc1, 'pending',
       NULL, :now, NULL);
INSERT INTO receipts (assignment_id, operation_id, kind, args_hash, result, version, created_at)
VALUES (:a_id, md5(:op::text)::uuid::text, 'turn', :hash, :result, :next, :now);
COMMIT;
