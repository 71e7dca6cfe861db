//! The JSON of the campaign service's answers, written once for both doors that show them: the
//! REST API (`http/`) answers it as the body, the author door (`mcp/author`) as the tool's
//! `structuredContent` and text. What each answer holds, and who may see it, is the campaign
//! service's; the player door's own answers are rendered in `mcp/player.rs`.

use serde_json::{Value, json};

use crate::campaign::{
    AssignmentDetail, AssignmentJournal, AssignmentOverview, AssignmentView, AuthorTokenIssued,
    AuthorTokenRevoked, NodeDeleted, PendingReview, PlayTokenIssued, PlayTokenRevoked, Published,
    Role, ScenarioDetail, WikiHit,
};
use crate::domain::time::{iso8601, iso8601_opt};
use crate::domain::wiki::WikiPage;
use crate::domain::{Consequence, Node, Scenario};
use crate::store::{Applied, AuthorTokenInfo};

/// The play door's path, where a play token is used.
const PLAY_PATH: &str = "/play/mcp";
/// The author door's path, where an author token is used.
const AUTHOR_PATH: &str = "/mcp";

/// One assignment as its caller sees it: `gm_notes` only for its GM.
pub fn assignment(view: &AssignmentView) -> Value {
    let a = &view.assignment;
    let mut v = json!({
        "id": a.id,
        "scenario_id": a.scenario_id,
        "scenario_title": view.scenario_title,
        "source_version": a.source_version,
        "gm_id": a.gm_id,
        "player_id": a.player_id,
        "mode": a.mode.as_str(),
        "language": a.language.as_str(),
        "character": a.character,
        "brief": a.brief,
        "instructions": a.instructions,
        "boundaries": a.boundaries,
        "return_condition": a.return_condition,
        "published_node_ids": a.published_node_ids,
        "auto_approve": a.auto_approve,
        "status": a.status.as_str(),
        "version": a.version,
        "current_scene": a.current_scene,
        "summary": a.summary,
        "created_at": iso8601(a.created_at),
        "updated_at": iso8601(a.updated_at),
        "role": match view.role { Role::Gm => "gm", Role::Player => "player" },
    });
    if view.role == Role::Gm {
        v["gm_notes"] = Value::String(a.gm_notes.clone());
    }
    v
}

/// A list of assignments.
pub fn assignments(items: &[AssignmentView]) -> Value {
    json!({"items": items.iter().map(assignment).collect::<Vec<_>>()})
}

/// One assignment with its pending count.
pub fn assignment_detail(detail: &AssignmentDetail) -> Value {
    let mut v = assignment(&detail.view);
    v["pending_consequences"] = json!(detail.pending_consequences);
    v
}

/// One assignment with its pending count and every consequence (the author door's
/// `get_assignment`).
pub fn assignment_overview(overview: &AssignmentOverview) -> Value {
    let mut v = assignment_detail(&overview.detail);
    v["consequences"] = consequence_list(&overview.consequences);
    v
}

/// A new play token, shown once.
pub fn play_token_issued(issued: &PlayTokenIssued) -> Value {
    json!({
        "assignment_id": issued.assignment_id,
        "token": issued.token,
        "expires_at": iso8601(issued.expires_at),
        "mcp_path": PLAY_PATH,
    })
}

/// How many play tokens a revocation ended.
pub fn play_token_revoked(revoked: &PlayTokenRevoked) -> Value {
    json!({"assignment_id": revoked.assignment_id, "revoked": revoked.revoked})
}

/// A journal page: review events' GM-private text and operation ids only for the GM.
pub fn journal(page: &AssignmentJournal) -> Value {
    let gm_view = page.role == Role::Gm;
    json!({
        "total": page.total,
        "offset": page.offset,
        "limit": page.limit,
        "entries": page.entries.iter().map(|e| {
            let mut v = json!({
                "version": e.version, "kind": e.kind.as_str(), "created_at": iso8601(e.created_at),
                "player_action": e.player_action, "narration": e.narration, "summary": e.summary, "scene": e.scene,
            });
            if gm_view {
                v["gm_private"] = json!(e.gm_private);
                v["operation_id"] = json!(e.operation_id);
            }
            v
        }).collect::<Vec<_>>(),
    })
}

/// Consequences with their decisions, as a JSON array.
fn consequence_list(items: &[Consequence]) -> Value {
    Value::Array(
        items
            .iter()
            .map(|c| {
                json!({
                    "id": c.id, "version": c.version, "category": c.category.as_str(), "description": c.description,
                    "status": c.status.as_str(), "gm_note": c.gm_note, "decided_at": iso8601_opt(c.decided_at),
                })
            })
            .collect(),
    )
}

/// Every consequence of an assignment.
pub fn consequences(items: &[Consequence]) -> Value {
    json!({"items": consequence_list(items)})
}

/// A review's receipt: the stored answer with this call's `replayed` flag (the same answer
/// the player door gives for its operations).
pub fn review(applied: Applied) -> Value {
    crate::service::receipt_result(applied)
}

/// A scenario without its nodes.
pub fn scenario(s: &Scenario) -> Value {
    json!({"id": s.id, "title": s.title, "version": s.version, "created_at": iso8601(s.created_at)})
}

/// A GM's scenarios.
pub fn scenarios(list: &[Scenario]) -> Value {
    json!({"items": list.iter().map(scenario).collect::<Vec<_>>()})
}

/// One node, GM text included (only its scenario's owner reads nodes here).
pub fn node(n: &Node) -> Value {
    json!({"id": n.id, "kind": n.kind, "title": n.title, "published": n.published, "public_text": n.public_text, "gm_text": n.gm_text})
}

/// A scenario with its draft and latest published nodes.
pub fn scenario_detail(detail: &ScenarioDetail) -> Value {
    let mut v = scenario(&detail.scenario);
    v["draft_nodes"] = Value::Array(detail.draft_nodes.iter().map(node).collect());
    v["published_nodes"] = Value::Array(detail.published_nodes.iter().map(node).collect());
    v
}

/// The id of a deleted draft node.
pub fn node_deleted(deleted: &NodeDeleted) -> Value {
    json!({"deleted": deleted.node_id})
}

/// The source version a publish froze.
pub fn published(published: &Published) -> Value {
    json!({"id": published.scenario_id, "source_version": published.source_version})
}

/// Pending consequences grouped by assignment.
pub fn pending_reviews(list: &[PendingReview]) -> Value {
    let assignments: Vec<Value> = list
        .iter()
        .map(|r| {
            let a = &r.assignment;
            let pending: Vec<Value> = r
                .pending
                .iter()
                .map(|c| json!({"id": c.id, "version": c.version, "category": c.category.as_str(), "description": c.description}))
                .collect();
            json!({"assignment_id": a.id, "character": a.character, "version": a.version, "status": a.status.as_str(), "pending": pending})
        })
        .collect();
    json!({"assignments": assignments})
}

/// A new author token, shown once.
pub fn author_token_issued(issued: &AuthorTokenIssued) -> Value {
    json!({
        "id": issued.id,
        "name": issued.name,
        "token": issued.token,
        "expires_at": iso8601(issued.expires_at),
        "mcp_path": AUTHOR_PATH,
    })
}

/// A user's author tokens (never the tokens themselves).
pub fn author_tokens(items: &[AuthorTokenInfo]) -> Value {
    json!({"items": items.iter().map(|t| json!({
        "id": t.id, "name": t.name, "created_at": iso8601(t.created_at), "expires_at": iso8601(t.expires_at), "revoked_at": iso8601_opt(t.revoked_at),
    })).collect::<Vec<_>>()})
}

/// The id of a revoked author token.
pub fn author_token_revoked(revoked: &AuthorTokenRevoked) -> Value {
    json!({"revoked": revoked.id})
}

/// A GM's wiki pages without their bodies.
pub fn wiki_pages(pages: &[WikiPage]) -> Value {
    json!({"pages": pages.iter().map(|p| json!({"slug": p.slug, "title": p.title, "version": p.version, "updated_at": iso8601(p.updated_at)})).collect::<Vec<_>>()})
}

/// One wiki page with its body.
pub fn wiki_page(page: &WikiPage) -> Value {
    json!({
        "slug": page.slug,
        "title": page.title,
        "body": page.body,
        "version": page.version,
        "updated_at": iso8601(page.updated_at),
    })
}

/// A page without its body: what a write answers (the caller just sent the body) and what
/// history lists.
pub fn wiki_page_summary(page: &WikiPage) -> Value {
    json!({
        "slug": page.slug,
        "title": page.title,
        "version": page.version,
        "updated_at": iso8601(page.updated_at),
        "body_chars": page.body.chars().count(),
    })
}

/// Wiki search hits, best first.
pub fn wiki_hits(hits: &[WikiHit]) -> Value {
    json!({"hits": hits.iter().map(|h| json!({"slug": h.page.slug, "title": h.page.title, "version": h.page.version, "excerpt": h.excerpt})).collect::<Vec<_>>()})
}

/// Every version of one wiki page, newest first.
pub fn wiki_history(slug: &str, versions: &[WikiPage]) -> Value {
    json!({
        "slug": slug,
        "versions": versions.iter().map(wiki_page_summary).collect::<Vec<_>>(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::{Assignment, Language, Mode, PlayStatus};
    use uuid::Uuid;

    fn sample() -> Assignment {
        Assignment {
            id: Uuid::nil(),
            scenario_id: Uuid::nil(),
            source_version: 1,
            gm_id: Uuid::nil(),
            player_id: Uuid::nil(),
            mode: Mode::Solo,
            language: Language::En,
            character: "Arin".into(),
            brief: String::new(),
            instructions: String::new(),
            boundaries: String::new(),
            return_condition: String::new(),
            gm_notes: "secret".into(),
            published_node_ids: vec!["harbor".into()],
            auto_approve: false,
            status: PlayStatus::Active,
            version: 3,
            memory: "never rendered here".into(),
            current_scene: None,
            summary: None,
            created_at: 1,
            updated_at: 2,
        }
    }

    #[test]
    fn gm_notes_and_memory_follow_the_role() {
        let view = |role| AssignmentView {
            assignment: sample(),
            role,
            scenario_title: None,
        };
        let gm = assignment(&view(Role::Gm));
        assert_eq!(gm["gm_notes"], "secret");
        assert_eq!(gm["role"], "gm");
        assert_eq!(gm["scenario_title"], Value::Null);
        let player = assignment(&view(Role::Player));
        assert!(player.get("gm_notes").is_none());
        assert_eq!(player["role"], "player");
        assert!(player.get("memory").is_none());
    }

    #[test]
    fn the_overview_adds_the_count_and_every_consequence() {
        let overview = AssignmentOverview {
            detail: AssignmentDetail {
                view: AssignmentView {
                    assignment: sample(),
                    role: Role::Gm,
                    scenario_title: Some("Harbor".into()),
                },
                pending_consequences: 0,
            },
            consequences: Vec::new(),
        };
        let v = assignment_overview(&overview);
        assert_eq!(v["pending_consequences"], 0);
        assert_eq!(v["consequences"], json!([]));
        assert_eq!(v["scenario_title"], "Harbor");
    }

    #[test]
    fn a_write_answers_the_body_length_in_characters_not_the_body() {
        let page = WikiPage {
            slug: "npc".into(),
            title: "Mira".into(),
            body: "żółw".into(),
            version: 2,
            updated_at: 5,
        };
        assert_eq!(
            wiki_page_summary(&page),
            json!({"slug": "npc", "title": "Mira", "version": 2, "updated_at": "1970-01-01T00:00:00.005Z", "body_chars": 4})
        );
        assert_eq!(wiki_page(&page)["body"], "żółw");
    }
}
