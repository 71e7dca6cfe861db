-- The one statement of a get_play_context request whose version is unchanged (since issue 14):
-- the play-token check, which also reads the assignment's version; the rendered answer of that
-- version comes from the server's memory (crates/sidequest/src/mcp/answers.rs). A read after a
-- change adds one snapshot transaction (BEGIN, the assignment with its scenario's title, the
-- journal, the consequences, COMMIT) on the same connection, once per version. The reference
-- of the get_play_context PostgreSQL target. Same seeded copy and -D variables as turn.sql.
SELECT t.assignment_id, a.player_id, a.gm_id, t.expires_at, (t.revoked_at IS NOT NULL) AS revoked,
       p.active AS player_active, g.active AS gm_active, a.language, a.scenario_id,
       a.source_version, a.version
  FROM play_tokens t
  JOIN assignments a ON a.id = t.assignment_id
  JOIN users p ON p.id = a.player_id
  JOIN users g ON g.id = a.gm_id
 WHERE t.digest = lpad(:client_id::text, 64, '0');
