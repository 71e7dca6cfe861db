-- One commit_play_turn, statement for statement as crates/sidequest/src/store/play.rs
-- (`commit_unchecked`) issues it for a turn with two consequences, on the path every turn of a
-- token its instance has seen live takes when the instance keeps the assignment's newest row
-- (store/states.rs; mcp/player.rs `commit`): the whole request is one statement, committed on
-- its own. The assignment's update holds only under its version, the absence of a receipt for
-- the operation and the play token's liveness (the token check of request-reads.sql, as a
-- condition: its digest, not revoked, not expired, the player and the GM active); the journal
-- event, the consequences and the receipt are inserted only if that update changed the row
-- (sqlkit's `Conn::write_guarded`). Each pgbench client reads its assignment's id and version
-- once (the \if; bench/run.sh passes -D a_version=0) and counts the version on, as the kept
-- row does. Earlier references: `git show 865293d:bench/turn.sql` (the same write without the
-- token condition, after a token check of its own, 2026-12-07 fifth session), `git show
-- fe119bc:bench/turn.sql` (the write after a state read, fourth session) and `git show
-- 7e92ffd:bench/turn.sql` (a transaction: BEGIN, the read with FOR UPDATE OF a, the writes,
-- COMMIT).
-- Run with `-M prepared` (sqlx prepares and caches every statement) and the -D variables
-- bench/run.sh passes (texts of the same sizes as loadgen's). pgbench client i works on seeded
-- assignment i and its token (bench/seed.sql), like loadgen's client i. The casts are
-- pgbench's: it sends its arguments untyped, sqlx sends each with its type.
\set op random(1, 9223372036854775806)
\if :a_version = 0
SELECT id AS a_id, version AS a_version FROM assignments
 WHERE id = '00000000-0000-4000-8000-' || lpad(:client_id::text, 12, '0') \gset
\endif
\set next :a_version + 1
WITH w0 AS (UPDATE assignments SET version = :next, status = 'active', memory = :memory,
       current_scene = :scene, summary = NULL, updated_at = :now
 WHERE id = :a_id AND version = :a_version AND NOT EXISTS (SELECT 1 FROM receipts
       WHERE assignment_id = :a_id AND operation_id = md5(:op::text)::uuid::text)
   AND EXISTS (SELECT 1 FROM play_tokens t JOIN users p ON p.id = assignments.player_id
       JOIN users g ON g.id = assignments.gm_id
       WHERE t.digest = lpad(:client_id::text, 64, '0') AND t.assignment_id = assignments.id
         AND t.revoked_at IS NULL AND t.expires_at > :now AND p.active AND g.active)
 RETURNING 1),
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
