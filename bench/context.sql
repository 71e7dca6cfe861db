-- The four statements of one get_play_context request on PostgreSQL, as
-- crates/sidequest/src/store/play.rs issues them: the play-token lookup (its own pooled
-- connection), then on one connection (Store::context_snapshot) the assignment with its
-- scenario's title, the five newest player-visible journal events and the twenty newest
-- consequences. Informative: the SQL's own cost, without HTTP, JSON or the pool's pings. Same
-- seeded copy and -D variables as turn.sql.
SELECT t.assignment_id, a.player_id, a.gm_id, t.expires_at, (t.revoked_at IS NOT NULL) AS revoked,
       p.active AS player_active, g.active AS gm_active, a.language
  FROM play_tokens t
  JOIN assignments a ON a.id = t.assignment_id
  JOIN users p ON p.id = a.player_id
  JOIN users g ON g.id = a.gm_id
 WHERE t.digest = lpad(:client_id::text, 64, '0');
SELECT id, scenario_id, source_version, gm_id, player_id, mode, language, character, brief,
       instructions, boundaries, return_condition, gm_notes, published_node_ids, auto_approve,
       status, version, memory, current_scene, summary, created_at, updated_at,
       (SELECT s.title FROM scenarios s WHERE s.id = assignments.scenario_id) AS scenario_title
  FROM assignments WHERE id = '00000000-0000-4000-8000-' || lpad(:client_id::text, 12, '0')
\gset a_
SELECT version, kind, operation_id, player_action, narration, summary, gm_private, scene, created_at
  FROM journal_events WHERE assignment_id = :a_id AND kind IN ('turn', 'finish')
 ORDER BY version DESC LIMIT 5 OFFSET 0;
SELECT id, assignment_id, version, category, description, status, gm_note, created_at, decided_at
  FROM consequences WHERE assignment_id = :a_id ORDER BY version DESC, seq DESC LIMIT 20;
