//! The floor under a commit (`loadgen baseline --turn`): a bare axum handler that takes
//! loadgen's or bench/wrk-commit.lua's `commit_play_turn` request, parses its arguments into a
//! typed struct, and writes the turn with bench/turn.sql's one statement (the update guarded
//! by the version, the operation's absence and the play token's liveness; the journal event,
//! the two consequences and the receipt) on sqlkit's pool, then answers with the new version.
//! `get_play_context` is answered with the assignment's version only. It has no JSON-RPC door,
//! no schema check, no replay of a receipt, no audit line, no read cache: what is left is the
//! least a server between an HTTP client and PostgreSQL must do for a turn, so Sidequest's
//! commit rate over this handler's says how much of the gap to pgbench is the server's own.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use axum::body::Bytes;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use sha2::{Digest, Sha256};
use sqlkit::Cols;
use uuid::Uuid;

/// bench/turn.sql's statement, with the arguments bound as sqlx binds Sidequest's.
const TURN: &str = "WITH w0 AS (UPDATE assignments SET version = $3, status = 'active', \
    memory = $4, current_scene = $5, summary = NULL, updated_at = $6 \
    WHERE id = $1 AND version = $2 AND NOT EXISTS (SELECT 1 FROM receipts \
    WHERE assignment_id = $1 AND operation_id = $7) \
    AND EXISTS (SELECT 1 FROM play_tokens t JOIN users p ON p.id = assignments.player_id \
    JOIN users g ON g.id = assignments.gm_id WHERE t.digest = $8 \
    AND t.assignment_id = assignments.id AND t.revoked_at IS NULL AND t.expires_at > $6 \
    AND p.active AND g.active) RETURNING 1), \
    w1 AS (INSERT INTO journal_events (assignment_id, version, kind, operation_id, \
    player_action, narration, summary, gm_private, scene, created_at) \
    SELECT $1, $3, 'turn', $7, $9, $10, NULL, NULL, $5, $6 \
    WHERE EXISTS (SELECT 1 FROM w0) RETURNING 1), \
    w2 AS (INSERT INTO consequences (id, assignment_id, version, seq, category, description, \
    status, gm_note, created_at, decided_at) SELECT * FROM (VALUES \
    ($11, $1, $3, 0::bigint, $12, $13, 'pending', NULL::text, $6, NULL::bigint), \
    ($14, $1, $3, 1::bigint, $15, $16, 'pending', NULL::text, $6, NULL::bigint)) AS v \
    WHERE EXISTS (SELECT 1 FROM w0) RETURNING 1), \
    w3 AS (INSERT INTO receipts (assignment_id, operation_id, kind, args_hash, result, \
    version, created_at) SELECT $1, $7, 'turn', $17, $18, $3, $6 \
    WHERE EXISTS (SELECT 1 FROM w0) RETURNING 1) \
    SELECT (SELECT COUNT(*) FROM w0) AS n0";

/// The token's assignment and its version (a read, and the first turn of a token).
const ASSIGNMENT: &str = "SELECT a.id, a.version FROM play_tokens t \
    JOIN assignments a ON a.id = t.assignment_id WHERE t.digest = $1";

#[derive(Deserialize)]
struct Call {
    id: i64,
    params: Params,
}

#[derive(Deserialize)]
struct Params {
    name: String,
    #[serde(default)]
    arguments: Turn,
}

/// A turn's arguments; a read's `{}` leaves them empty.
#[derive(Deserialize, Default)]
#[serde(default)]
struct Turn {
    operation_id: String,
    expected_version: i64,
    player_action: String,
    narration: String,
    memory_markdown: String,
    current_scene: String,
    consequences: Vec<Consequence>,
}

#[derive(Deserialize, Default)]
struct Consequence {
    category: String,
    description: String,
}

/// What the handler shares: the pool, the answer's size, and each token's assignment id
/// (Sidequest keeps it with the token too).
#[derive(Clone)]
pub struct Floor {
    db: sqlkit::Db,
    body_bytes: usize,
    assignments: Arc<Mutex<HashMap<String, Arc<str>>>>,
}

impl Floor {
    pub fn new(db: sqlkit::Db, body_bytes: usize) -> Self {
        Self {
            db,
            body_bytes,
            assignments: Arc::default(),
        }
    }

    /// One request: a turn written, or a read's version.
    pub async fn handle(self, headers: HeaderMap, request: Bytes) -> Response {
        let Ok(call) = serde_json::from_slice::<Call>(&request) else {
            return StatusCode::BAD_REQUEST.into_response();
        };
        let digest = crate::baseline::token_digest(&headers);
        let outcome = if call.params.name == "commit_play_turn" {
            self.turn(&digest, &call.params.arguments, &request).await
        } else {
            self.version(&digest)
                .await
                .map(|(_, version)| Some(version))
        };
        match outcome {
            Ok(Some(version)) => self.answer(call.id, version, false),
            Ok(None) => self.answer(call.id, 0, true),
            Err(status) => status.into_response(),
        }
    }

    /// The token's assignment: remembered, or read (on the token's first request).
    async fn assignment(&self, digest: &str) -> Result<Arc<str>, StatusCode> {
        let known = self
            .assignments
            .lock()
            .ok()
            .and_then(|m| m.get(digest).cloned());
        match known {
            Some(assignment) => Ok(assignment),
            None => self.version(digest).await.map(|(assignment, _)| assignment),
        }
    }

    /// Reads the token's assignment and version, remembering the assignment.
    async fn version(&self, digest: &str) -> Result<(Arc<str>, i64), StatusCode> {
        let row = sqlkit::sql(ASSIGNMENT)
            .bind(digest)
            .fetch_optional(&self.db)
            .await
            .map_err(|_| StatusCode::SERVICE_UNAVAILABLE)?;
        let Some(row) = row else {
            return Err(StatusCode::UNAUTHORIZED);
        };
        let id = row.text("id").map_err(|_| StatusCode::BAD_GATEWAY)?;
        let version = row.int("version").map_err(|_| StatusCode::BAD_GATEWAY)?;
        let id: Arc<str> = Arc::from(id);
        if let Ok(mut m) = self.assignments.lock() {
            m.insert(digest.to_owned(), id.clone());
        }
        Ok((id, version))
    }

    /// Writes the turn; `None` when its guard held it back (a stale version, a repeated
    /// operation, a dead token).
    async fn turn(
        &self,
        digest: &str,
        turn: &Turn,
        request: &[u8],
    ) -> Result<Option<i64>, StatusCode> {
        let assignment = self.assignment(digest).await?;
        let next = turn.expected_version + 1;
        let now = mcp_door::Clock::now_millis(&mcp_door::SystemClock);
        let ids = [Uuid::new_v4().to_string(), Uuid::new_v4().to_string()];
        let [c0, c1] = [0, 1].map(|i| turn.consequences.get(i));
        let (Some(c0), Some(c1)) = (c0, c1) else {
            return Err(StatusCode::UNPROCESSABLE_ENTITY);
        };
        let result = format!(
            r#"{{"session_id":"{assignment}","version":{next},"consequences":[{{"id":"{}","status":"pending","category":"{}"}},{{"id":"{}","status":"pending","category":"{}"}}]}}"#,
            ids[0], c0.category, ids[1], c1.category
        );
        let hash = hex::encode(Sha256::digest(request));
        let row = sqlkit::sql(TURN)
            .bind(&*assignment)
            .bind(turn.expected_version)
            .bind(next)
            .bind(turn.memory_markdown.as_str())
            .bind(turn.current_scene.as_str())
            .bind(now)
            .bind(turn.operation_id.as_str())
            .bind(digest)
            .bind(turn.player_action.as_str())
            .bind(turn.narration.as_str())
            .bind(ids[0].as_str())
            .bind(c0.category.as_str())
            .bind(c0.description.as_str())
            .bind(ids[1].as_str())
            .bind(c1.category.as_str())
            .bind(c1.description.as_str())
            .bind(hash.as_str())
            .bind(result.as_str())
            .fetch_one(&self.db)
            .await
            .map_err(|_| StatusCode::SERVICE_UNAVAILABLE)?;
        let written = row.int("n0").map_err(|_| StatusCode::BAD_GATEWAY)?;
        Ok((written == 1).then_some(next))
    }

    fn answer(&self, id: i64, version: i64, is_error: bool) -> Response {
        let body = answer(id, version, is_error, self.body_bytes);
        ([(header::CONTENT_TYPE, "application/json")], body).into_response()
    }
}

/// A tool result of `bytes` bytes (or its bare shell, when that is longer) with the request's
/// id and the version in its structured content.
fn answer(id: i64, version: i64, is_error: bool, bytes: usize) -> String {
    let shell = format!(
        r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":[{{"type":"text","text":""}}],"structuredContent":{{"version":{version}}},"isError":{is_error}}}}}"#
    );
    crate::baseline::padded(&shell, bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The answer is what loadgen's check and bench/wrk-commit.lua read: the request's id
    /// first, the version in the structured content, `isError` as told, at the asked size.
    #[test]
    fn the_answer_carries_the_id_and_version_at_the_asked_size() {
        let ok = answer(7, 12, false, 1380);
        assert_eq!(ok.len(), 1380);
        assert!(ok.starts_with(r#"{"jsonrpc":"2.0","id":7,"#));
        assert_eq!(
            crate::workload::check(200, ok.as_bytes()),
            Ok(crate::workload::Success { version: Some(12) })
        );
        let refused = answer(3, 0, true, 10);
        assert!(refused.contains(r#""isError":true"#));
        assert!(crate::workload::check(200, refused.as_bytes()).is_err());
    }

    /// A read's empty arguments and a turn's both parse into the typed request.
    #[test]
    fn reads_and_turns_parse() {
        let read: Call = serde_json::from_str(
            r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"get_play_context","arguments":{}}}"#,
        )
        .unwrap();
        assert_eq!(
            (read.id, read.params.name.as_str()),
            (4, "get_play_context")
        );
        let body = crate::workload::TurnTexts::new(2, "harbor").commit(9);
        let turn: Call = serde_json::from_slice(&body).unwrap();
        assert_eq!(turn.params.name, "commit_play_turn");
        assert_eq!(turn.params.arguments.expected_version, 9);
        assert_eq!(turn.params.arguments.consequences.len(), 2);
        assert_eq!(turn.params.arguments.memory_markdown.chars().count(), 2048);
    }
}
