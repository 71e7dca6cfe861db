-- One commit_play_turn write, statement for statement as crates/sidequest/src/store/play.rs
-- (`apply_held` → `read_state`, then `write_plan`) issues it for a turn with two consequences:
-- the assignment and its receipt for the operation read in one statement (no lock, no
-- transaction), then on PostgreSQL the whole write as one statement committed on its own —
-- the assignment's update under the version just read, and the journal event, the consequences
-- and the receipt inserted only if that update changed the row (sqlkit's
-- `Conn::write_guarded`). Until 2026-12-07 it was a transaction: BEGIN, the same read with
-- FOR UPDATE OF a, the writes unconditioned, COMMIT (`git show 7e92ffd:bench/turn.sql`).
-- Run with `-M prepared` (sqlx prepares and caches every statement) and the -D variables
-- bench/run.sh passes (texts of the same sizes as loadgen's). pgbench client i works on seeded
-- assignment i (bench/seed.sql), like loadgen's client i. The casts are pgbench's: it sends
-- its arguments untyped, sqlx sends each with its type.
\set op random(1, 9223372036854775806)
SELECT a.id, a.scenario_id, a.source_version, a.gm_id, a.player_id, a.mode, a.language,
       a.character, a.brief, a.instructions, a.boundaries, a.return_condition, a.gm_notes,
       a.published_node_ids, a.auto_approve, a.status, a.version, a.memory, a.current_scene,
       a.summary, a.created_at, a.updated_at, r.operation_id AS r_operation_id, r.kind AS r_kind,
       r.args_hash AS r_args_hash, r.result AS r_result, r.version AS r_version,
       r.created_at AS r_created_at
  FROM assignments a
  LEFT JOIN receipts r ON r.assignment_id = a.id AND r.operation_id = md5(:op::text)::uuid::text
 WHERE a.id = '00000000-0000-4000-8000-' || lpad(:client_id::text, 12, '0') \gset a_
\set next :a_version + 1
WITH w0 AS (UPDATE assignments SET version = :next, status = 'active', memory = :memory,
       current_scene = :scene, summary = NULL, updated_at = :now
 WHERE id = :a_id AND version = :a_version RETURNING 1),
w1 AS (INSERT INTO journal_events (assignment_id, version, kind, operation_id, player_action,
       narration, summary, gm_private, scene, created_at)
SELECT :a_id, :next::bigint, 'turn', md5(:op::text)::uuid::text, :action, :narration,
       NULL::text, NULL::text, :scene, :now::bigint
 WHERE EXISTS (SELECT 1 FROM w0) RETURNING 1),
w2 AS (INSERT INTO consequences (id, assignment_id, version, seq, category, description, status,
       gm_note, created_at, decided_at)
SELECT * FROM (VALUES
       (md5(:op::text || '-0')::uuid::text, :a_id, :next::bigint, 0::bigint, 'relationship',
        :desc0, 'pending', NULL::text, :now::bigint, NULL::bigint),
       (md5(:op::text || '-1')::uuid::text, :a_id, :next::bigint, 1::bigint, 'discovery',
        :desc1, 'pending', NULL::text, :now::bigint, NULL::bigint)) AS v
 WHERE EXISTS (SELECT 1 FROM w0) RETURNING 1),
w3 AS (INSERT INTO receipts (assignment_id, operation_id, kind, args_hash, result, version,
       created_at)
SELECT :a_id, md5(:op::text)::uuid::text, 'turn', :hash, :result, :next::bigint, :now::bigint
 WHERE EXISTS (SELECT 1 FROM w0) RETURNING 1)
SELECT (SELECT COUNT(*) FROM w0) AS n0, (SELECT COUNT(*) FROM w1) AS n1,
       (SELECT COUNT(*) FROM w2) AS n2, (SELECT COUNT(*) FROM w3) AS n3;
