-- One commit_play_turn write, statement for statement as crates/sidequest/src/store/play.rs
-- (`apply_held`) issues it for a turn with two consequences, on the path a turn takes whenever
-- its instance keeps the assignment's row of the version its token check read (store/states.rs:
-- every turn after an instance's first on an assignment). The token check
-- (bench/request-reads.sql, not part of this reference) has read the version, so the turn is one
-- statement committed on its own: the assignment's update under that version and the absence of
-- a receipt for the operation, and the journal event, the consequences and the receipt inserted
-- only if that update changed the row (sqlkit's `Conn::write_guarded`). Each pgbench client reads
-- its assignment's id and version once (the \if; bench/run.sh passes -D a_version=0) and counts
-- the version on, as its token check would read it. Earlier references: `git show
-- fe119bc:bench/turn.sql` (the same write after a state read without a lock, 2026-12-07
-- fourth session) and `git show 7e92ffd:bench/turn.sql` (a transaction: BEGIN, the read with
-- FOR UPDATE OF a, the writes, COMMIT).
-- Run with `-M prepared` (sqlx prepares and caches every statement) and the -D variables
-- bench/run.sh passes (texts of the same sizes as loadgen's). pgbench client i works on seeded
-- assignment i (bench/seed.sql), like loadgen's client i. The casts are pgbench's: it sends
-- its arguments untyped, sqlx sends each with its type.
\set op random(1, 9223372036854775806)
\if :a_version = 0
SELECT id AS a_id, version AS a_version FROM assignments
 WHERE id = '00000000-0000-4000-8000-' || lpad(:client_id::text, 12, '0') \gset
\endif
\set next :a_version + 1
WITH w0 AS (UPDATE assignments SET version = :next, status = 'active', memory = :memory,
       current_scene = :scene, summary = NULL, updated_at = :now
 WHERE id = :a_id AND version = :a_version AND NOT EXISTS (SELECT 1 FROM receipts
       WHERE assignment_id = :a_id AND operation_id = md5(:op::text)::uuid::text) RETURNING 1),
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
\set a_version :next
