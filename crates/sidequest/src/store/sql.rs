//! What the two SQL backends share beyond [`sqlkit`]: the mapping of its [`DbFailure`] into
//! [`StoreError`] (the one place database errors are translated; the classification itself is
//! sqlkit's), row decoding into domain records and the column lists both schemas agree on.
//! Statements and transactions stay in the backends.

use sqlkit::{Cols, DbFailure};

use super::{AuthorGrant, AuthorTokenInfo, SessionRecord, StoreError};
use crate::domain::wiki::WikiPage;
use crate::domain::{
    Assignment, Category, Consequence, ConsequenceStatus, EventKind, JournalEvent, Language, Mode,
    Node, OperationKind, PlayStatus, PlayTokenGrant, Receipt, Scenario, User,
};

impl From<DbFailure> for StoreError {
    fn from(failure: DbFailure) -> Self {
        match failure {
            DbFailure::NotFound => StoreError::NotFound,
            DbFailure::Conflict(message) => StoreError::Conflict(message),
            DbFailure::Unavailable(message) => StoreError::Unavailable(message),
            DbFailure::Internal(message) => StoreError::Internal(message),
            // `DbFailure` is non-exhaustive: a kind sqlkit adds later is a bug until mapped.
            other => StoreError::Internal(other.to_string()),
        }
    }
}

/// Through [`DbFailure`]. Only inserts and updates name other rows (nothing deletes a
/// referenced row), so its foreign-key rule holds here: a violated foreign key means the user,
/// scenario or page pointed at does not exist.
impl From<sqlx::Error> for StoreError {
    fn from(err: sqlx::Error) -> Self {
        DbFailure::from(err).into()
    }
}

impl From<sqlx::migrate::MigrateError> for StoreError {
    fn from(err: sqlx::migrate::MigrateError) -> Self {
        DbFailure::from(err).into()
    }
}

/// Parses a stored enum spelling with the domain's own `parse`.
fn stored<T>(text: String, parse: fn(&str) -> Option<T>, what: &str) -> Result<T, StoreError> {
    parse(&text).ok_or_else(|| StoreError::Internal(format!("stored {what} {text:?} is unknown")))
}

/// A JSON value as stored in a TEXT column.
pub(crate) fn json_text<T: serde::Serialize>(value: &T) -> Result<String, StoreError> {
    serde_json::to_string(value).map_err(|e| StoreError::Internal(format!("encoding JSON: {e}")))
}

fn from_json<T: serde::de::DeserializeOwned>(text: &str, what: &str) -> Result<T, StoreError> {
    serde_json::from_str(text).map_err(|e| StoreError::Internal(format!("stored {what}: {e}")))
}

/// The journal filter of a view: every event, or only the kinds the player sees
/// ([`EventKind::player_visible`]; a unit test keeps the two in step).
pub(crate) fn journal_filter(player_view: bool) -> &'static str {
    if player_view {
        "AND kind IN ('turn', 'finish')"
    } else {
        ""
    }
}

// Column lists, as macros so statements stay `&'static str` built with `concat!`.

macro_rules! user_columns {
    () => {
        "id, username, display_name, is_gm, active, created_at"
    };
}
macro_rules! scenario_columns {
    () => {
        "id, owner_id, title, version, created_at"
    };
}
macro_rules! node_columns {
    () => {
        "node_id, kind, title, published, public_text, gm_text"
    };
}
macro_rules! assignment_columns {
    () => {
        "id, scenario_id, source_version, gm_id, player_id, mode, language, character, brief, \
         instructions, boundaries, return_condition, gm_notes, published_node_ids, auto_approve, \
         status, version, memory, current_scene, summary, created_at, updated_at"
    };
}
macro_rules! event_columns {
    () => {
        "version, kind, operation_id, player_action, narration, summary, gm_private, scene, \
         created_at"
    };
}
macro_rules! consequence_columns {
    () => {
        "id, assignment_id, version, category, description, status, gm_note, created_at, \
         decided_at"
    };
}
macro_rules! receipt_columns {
    () => {
        "assignment_id, operation_id, kind, args_hash, result, version, created_at"
    };
}
macro_rules! author_token_columns {
    () => {
        "id, name, created_at, expires_at, revoked_at"
    };
}
macro_rules! wiki_columns {
    () => {
        "slug, title, body, version, updated_at"
    };
}
pub(crate) use {
    assignment_columns, author_token_columns, consequence_columns, event_columns, node_columns,
    receipt_columns, scenario_columns, user_columns, wiki_columns,
};

pub(crate) fn user(r: &impl Cols) -> Result<User, StoreError> {
    Ok(User {
        id: r.uuid("id")?,
        username: r.text("username")?,
        display_name: r.text("display_name")?,
        is_gm: r.flag("is_gm")?,
        active: r.flag("active")?,
        created_at: r.int("created_at")?,
    })
}

pub(crate) fn scenario(r: &impl Cols) -> Result<Scenario, StoreError> {
    Ok(Scenario {
        id: r.uuid("id")?,
        owner_id: r.uuid("owner_id")?,
        title: r.text("title")?,
        version: r.int("version")?,
        created_at: r.int("created_at")?,
    })
}

pub(crate) fn node(r: &impl Cols) -> Result<Node, StoreError> {
    Ok(Node {
        id: r.text("node_id")?,
        kind: r.text("kind")?,
        title: r.text("title")?,
        published: r.flag("published")?,
        public_text: r.text("public_text")?,
        gm_text: r.text("gm_text")?,
    })
}

pub(crate) fn assignment(r: &impl Cols) -> Result<Assignment, StoreError> {
    Ok(Assignment {
        id: r.uuid("id")?,
        scenario_id: r.uuid("scenario_id")?,
        source_version: r.int("source_version")?,
        gm_id: r.uuid("gm_id")?,
        player_id: r.uuid("player_id")?,
        mode: stored(r.text("mode")?, Mode::parse, "mode")?,
        language: stored(r.text("language")?, Language::parse, "language")?,
        character: r.text("character")?,
        brief: r.text("brief")?,
        instructions: r.text("instructions")?,
        boundaries: r.text("boundaries")?,
        return_condition: r.text("return_condition")?,
        gm_notes: r.text("gm_notes")?,
        published_node_ids: from_json(&r.text("published_node_ids")?, "published_node_ids")?,
        auto_approve: r.flag("auto_approve")?,
        status: stored(r.text("status")?, PlayStatus::parse, "play status")?,
        version: r.int("version")?,
        memory: r.text("memory")?,
        current_scene: r.opt_text("current_scene")?,
        summary: r.opt_text("summary")?,
        created_at: r.int("created_at")?,
        updated_at: r.int("updated_at")?,
    })
}

pub(crate) fn event(r: &impl Cols) -> Result<JournalEvent, StoreError> {
    Ok(JournalEvent {
        version: r.int("version")?,
        kind: stored(r.text("kind")?, EventKind::parse, "event kind")?,
        operation_id: r.opt_uuid("operation_id")?,
        player_action: r.opt_text("player_action")?,
        narration: r.opt_text("narration")?,
        summary: r.opt_text("summary")?,
        gm_private: r.opt_text("gm_private")?,
        scene: r.opt_text("scene")?,
        created_at: r.int("created_at")?,
    })
}

pub(crate) fn consequence(r: &impl Cols) -> Result<Consequence, StoreError> {
    Ok(Consequence {
        id: r.uuid("id")?,
        assignment_id: r.uuid("assignment_id")?,
        version: r.int("version")?,
        category: stored(r.text("category")?, Category::parse, "category")?,
        description: r.text("description")?,
        status: stored(
            r.text("status")?,
            ConsequenceStatus::parse,
            "consequence status",
        )?,
        gm_note: r.opt_text("gm_note")?,
        created_at: r.int("created_at")?,
        decided_at: r.opt_int("decided_at")?,
    })
}

pub(crate) fn receipt(r: &impl Cols) -> Result<Receipt, StoreError> {
    Ok(Receipt {
        assignment_id: r.uuid("assignment_id")?,
        operation_id: r.uuid("operation_id")?,
        kind: stored(r.text("kind")?, OperationKind::parse, "operation kind")?,
        args_hash: r.text("args_hash")?,
        result: from_json(&r.text("result")?, "receipt result")?,
        version: r.int("version")?,
        created_at: r.int("created_at")?,
    })
}

/// The columns of [`PLAY_TOKEN`].
pub(crate) fn grant(r: &impl Cols) -> Result<PlayTokenGrant, StoreError> {
    Ok(PlayTokenGrant {
        assignment_id: r.uuid("assignment_id")?,
        player_id: r.uuid("player_id")?,
        gm_id: r.uuid("gm_id")?,
        expires_at: r.int("expires_at")?,
        revoked: r.flag("revoked")?,
        player_active: r.flag("player_active")?,
        gm_active: r.flag("gm_active")?,
        language: stored(r.text("language")?, Language::parse, "language")?,
        scenario_id: r.uuid("scenario_id")?,
        source_version: r.int("source_version")?,
    })
}

/// A token joined to its assignment and both users; the same text on both backends.
pub(crate) const PLAY_TOKEN: &str = "SELECT t.assignment_id, a.player_id, a.gm_id, t.expires_at, \
     (t.revoked_at IS NOT NULL) AS revoked, p.active AS player_active, \
     g.active AS gm_active, a.language, a.scenario_id, a.source_version \
     FROM play_tokens t \
     JOIN assignments a ON a.id = t.assignment_id \
     JOIN users p ON p.id = a.player_id \
     JOIN users g ON g.id = a.gm_id \
     WHERE t.digest = $1";

/// A session joined to its user; the same text on both backends.
pub(crate) const SESSION: &str = "SELECT u.id, u.username, u.display_name, u.is_gm, u.active, \
     u.created_at, s.csrf_digest, s.expires_at \
     FROM sessions s JOIN users u ON u.id = s.user_id \
     WHERE s.digest = $1";

/// The columns of [`SESSION`].
pub(crate) fn session(r: &impl Cols) -> Result<SessionRecord, StoreError> {
    Ok(SessionRecord {
        user: user(r)?,
        csrf_digest: r.text("csrf_digest")?,
        expires_at: r.int("expires_at")?,
    })
}

/// An author token joined to its user; the same text on both backends.
pub(crate) const AUTHOR_TOKEN: &str = "SELECT t.id AS token_id, t.expires_at, \
     (t.revoked_at IS NOT NULL) AS revoked, u.id, u.username, u.display_name, u.is_gm, \
     u.active, u.created_at \
     FROM author_tokens t JOIN users u ON u.id = t.user_id \
     WHERE t.digest = $1";

/// The columns of [`AUTHOR_TOKEN`].
pub(crate) fn author_grant(r: &impl Cols) -> Result<AuthorGrant, StoreError> {
    Ok(AuthorGrant {
        token_id: r.uuid("token_id")?,
        user: user(r)?,
        expires_at: r.int("expires_at")?,
        revoked: r.flag("revoked")?,
    })
}

pub(crate) fn author_token(r: &impl Cols) -> Result<AuthorTokenInfo, StoreError> {
    Ok(AuthorTokenInfo {
        id: r.uuid("id")?,
        name: r.text("name")?,
        created_at: r.int("created_at")?,
        expires_at: r.int("expires_at")?,
        revoked_at: r.opt_int("revoked_at")?,
    })
}

pub(crate) fn wiki_page(r: &impl Cols) -> Result<WikiPage, StoreError> {
    Ok(WikiPage {
        slug: r.text("slug")?,
        title: r.text("title")?,
        body: r.text("body")?,
        version: r.int("version")?,
        updated_at: r.int("updated_at")?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn player_journal_filter_lists_exactly_the_player_visible_kinds() {
        let all = [
            EventKind::Turn,
            EventKind::Finish,
            EventKind::Review,
            EventKind::GmNote,
        ];
        let filter = journal_filter(true);
        for kind in all {
            let listed = filter.contains(&format!("'{}'", kind.as_str()));
            assert_eq!(listed, kind.player_visible(), "{kind:?}");
        }
        assert_eq!(journal_filter(false), "");
    }
}
