//! The output schemas of both doors' tools: what each tool's `structuredContent` holds, written
//! from the contract's result shapes and the JSON `render.rs` and `mcp/player.rs` write, closed
//! (`additionalProperties: false`) so a field added or dropped is a declared change. Error
//! results carry no `structuredContent` and are not held to these.

use serde_json::{Value, json};

use crate::campaign::NODE_KINDS;
use crate::domain::play::limits;

const UUID_PATTERN: &str =
    "^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$";
/// ISO 8601 UTC with exactly three fractional digits and `Z` (`domain::time::iso8601`).
const TIME_PATTERN: &str = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z$";
/// Node ids and wiki slugs (`fields::is_slug`).
const SLUG_PATTERN: &str = "^[a-z0-9][a-z0-9_-]{0,63}$";

/// A closed object: every listed property, `required` always present.
pub fn object(properties: Value, required: &[&str]) -> Value {
    json!({
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": false,
    })
}

/// An array of `items`, at most `max` when the contract bounds it.
pub fn array(items: Value, max: Option<i64>) -> Value {
    let mut v = json!({"type": "array", "items": items});
    if let Some(max) = max {
        v["maxItems"] = json!(max);
    }
    v
}

pub fn uuid() -> Value {
    json!({"type": "string", "format": "uuid", "pattern": UUID_PATTERN})
}

pub fn uuid_or_null() -> Value {
    json!({"type": ["string", "null"], "format": "uuid", "pattern": UUID_PATTERN})
}

/// A time: ISO 8601 UTC with milliseconds and `Z`.
pub fn time() -> Value {
    json!({"type": "string", "format": "date-time", "pattern": TIME_PATTERN, "description": "ISO 8601 UTC with milliseconds, e.g. 2026-12-01T18:15:02.784Z."})
}

/// A time not set yet (`null`), or ISO 8601 UTC with milliseconds and `Z`.
pub fn time_or_null() -> Value {
    json!({"type": ["string", "null"], "format": "date-time", "pattern": TIME_PATTERN, "description": "ISO 8601 UTC with milliseconds, or null while not set."})
}

pub fn string() -> Value {
    json!({"type": "string"})
}

pub fn string_or_null() -> Value {
    json!({"type": ["string", "null"]})
}

pub fn slug() -> Value {
    json!({"type": "string", "pattern": SLUG_PATTERN})
}

pub fn boolean() -> Value {
    json!({"type": "boolean"})
}

/// An integer of at least `min`.
pub fn integer(min: i64) -> Value {
    json!({"type": "integer", "minimum": min})
}

fn one_of(values: &[&str]) -> Value {
    json!({"type": "string", "enum": values})
}

pub fn mode() -> Value {
    one_of(&["absence", "downtime", "solo"])
}

pub fn language() -> Value {
    one_of(&["en", "pl"])
}

pub fn play_status() -> Value {
    one_of(&["active", "completed"])
}

pub fn category() -> Value {
    one_of(&["resource", "relationship", "discovery", "narrative"])
}

pub fn consequence_status() -> Value {
    one_of(&["pending", "approved", "rejected"])
}

pub fn node_kind() -> Value {
    one_of(&NODE_KINDS)
}

// ---- the player door ----

/// A journal event as the player sees it: the text fields appear only when set.
fn player_event() -> Value {
    object(
        json!({
            "version": integer(1),
            "kind": one_of(&["turn", "finish"]),
            "created_at": time(),
            "player_action": string(),
            "narration": string(),
            "summary": string(),
            "scene": string(),
        }),
        &["version", "kind", "created_at"],
    )
}

/// `get_play_context`.
pub fn play_context() -> Value {
    let assignment = object(
        json!({
            "id": uuid(),
            "scenario": object(json!({"id": uuid(), "title": string()}), &["id", "title"]),
            "source_version": integer(1),
            "mode": mode(),
            "language": language(),
            "character": string(),
            "brief": string(),
            "instructions": string(),
            "boundaries": string(),
            "return_condition": string(),
            "auto_approve": boolean(),
            "status": play_status(),
            "current_scene": string_or_null(),
            "created_at": time(),
        }),
        &[
            "id",
            "scenario",
            "source_version",
            "mode",
            "language",
            "character",
            "brief",
            "instructions",
            "boundaries",
            "return_condition",
            "auto_approve",
            "status",
            "current_scene",
            "created_at",
        ],
    );
    let material = object(
        json!({"id": slug(), "kind": node_kind(), "title": string(), "text": string()}),
        &["id", "kind", "title", "text"],
    );
    let consequence = object(
        json!({
            "id": uuid(),
            "version": integer(1),
            "category": category(),
            "description": string(),
            "status": consequence_status(),
            "gm_note": string_or_null(),
        }),
        &[
            "id",
            "version",
            "category",
            "description",
            "status",
            "gm_note",
        ],
    );
    object(
        json!({
            "session_id": uuid(),
            "assignment": assignment,
            "agent_contract": string(),
            "materials": array(material, None),
            "memory_markdown": string(),
            "version": integer(1),
            "recent_events": array(player_event(), Some(limits::CONTEXT_EVENTS)),
            "consequences": array(consequence, Some(limits::CONTEXT_CONSEQUENCES)),
            "recap": string_or_null(),
        }),
        &[
            "session_id",
            "assignment",
            "agent_contract",
            "materials",
            "memory_markdown",
            "version",
            "recent_events",
            "consequences",
            "recap",
        ],
    )
}

/// `read_play_journal`.
pub fn play_journal() -> Value {
    object(
        json!({
            "total": integer(0),
            "offset": integer(0),
            "entries": array(player_event(), Some(limits::JOURNAL_PAGE_MAX)),
        }),
        &["total", "offset", "entries"],
    )
}

/// `search_play_memory`.
pub fn play_search() -> Value {
    let hit = object(
        json!({"version": integer(1), "kind": one_of(&["turn", "finish"]), "excerpt": string()}),
        &["version", "kind", "excerpt"],
    );
    object(
        json!({
            "query": string(),
            "version": integer(1),
            "memory_excerpt": string(),
            "memory_matched": boolean(),
            "journal_excerpts": array(hit, Some(limits::SEARCH_HITS as i64)),
        }),
        &[
            "query",
            "version",
            "memory_excerpt",
            "memory_matched",
            "journal_excerpts",
        ],
    )
}

/// `commit_play_turn`'s receipt: the statuses at the time of that turn (pending, or approved
/// when the assignment approves automatically).
pub fn turn_receipt() -> Value {
    let consequence = object(
        json!({
            "id": uuid(),
            "status": one_of(&["pending", "approved"]),
            "category": category(),
            "description": string(),
        }),
        &["id", "status", "category", "description"],
    );
    object(
        json!({
            "session_id": uuid(),
            "version": integer(2),
            "consequences": array(consequence, Some(limits::CONSEQUENCES as i64)),
            "replayed": boolean(),
        }),
        &["session_id", "version", "consequences", "replayed"],
    )
}

/// `finish_play_session`'s receipt.
pub fn finish_receipt() -> Value {
    object(
        json!({
            "session_id": uuid(),
            "status": {"type": "string", "const": "completed"},
            "version": integer(2),
            "pending_consequences": integer(0),
            "replayed": boolean(),
        }),
        &[
            "session_id",
            "status",
            "version",
            "pending_consequences",
            "replayed",
        ],
    )
}

// ---- the author door (and the REST bodies of the same answers) ----

/// The fields of one assignment; `gm_notes` only, and always, where the caller is its GM.
fn assignment_properties() -> (Value, Vec<&'static str>) {
    (
        json!({
            "id": uuid(),
            "scenario_id": uuid(),
            "scenario_title": string_or_null(),
            "source_version": integer(1),
            "gm_id": uuid(),
            "player_id": uuid(),
            "mode": mode(),
            "language": language(),
            "character": string(),
            "brief": string(),
            "instructions": string(),
            "boundaries": string(),
            "return_condition": string(),
            "published_node_ids": array(slug(), None),
            "auto_approve": boolean(),
            "status": play_status(),
            "version": integer(1),
            "current_scene": string_or_null(),
            "summary": string_or_null(),
            "created_at": time(),
            "updated_at": time(),
            "role": one_of(&["gm", "player"]),
            "gm_notes": string(),
        }),
        vec![
            "id",
            "scenario_id",
            "scenario_title",
            "source_version",
            "gm_id",
            "player_id",
            "mode",
            "language",
            "character",
            "brief",
            "instructions",
            "boundaries",
            "return_condition",
            "published_node_ids",
            "auto_approve",
            "status",
            "version",
            "current_scene",
            "summary",
            "created_at",
            "updated_at",
            "role",
        ],
    )
}

/// An assignment object with `extra` properties (all required), `gm_notes` following `role`.
fn assignment_with(extra: Value) -> Value {
    let (mut properties, mut required) = assignment_properties();
    if let (Some(p), Some(extra)) = (properties.as_object_mut(), extra.as_object()) {
        for (k, v) in extra {
            p.insert(k.clone(), v.clone());
        }
    }
    let extra_keys: Vec<String> = extra
        .as_object()
        .map(|o| o.keys().cloned().collect())
        .unwrap_or_default();
    required.extend(extra_keys.iter().map(String::as_str));
    let mut v = object(properties, &required);
    v["if"] = json!({"properties": {"role": {"const": "gm"}}});
    v["then"] = json!({"required": ["gm_notes"]});
    v["else"] = json!({"not": {"required": ["gm_notes"]}});
    v
}

/// One consequence with its decision.
fn consequence() -> Value {
    object(
        json!({
            "id": uuid(),
            "version": integer(1),
            "category": category(),
            "description": string(),
            "status": consequence_status(),
            "gm_note": string_or_null(),
            "decided_at": time_or_null(),
        }),
        &[
            "id",
            "version",
            "category",
            "description",
            "status",
            "gm_note",
            "decided_at",
        ],
    )
}

/// `list_assignments`.
pub fn assignments() -> Value {
    object(
        json!({"items": array(assignment_with(json!({})), Some(crate::campaign::LIST_LIMIT))}),
        &["items"],
    )
}

/// `get_assignment`.
pub fn assignment_overview() -> Value {
    assignment_with(json!({
        "pending_consequences": integer(0),
        "consequences": array(consequence(), None),
    }))
}

/// `read_assignment_journal`: review events, `gm_private` and `operation_id` only for the GM.
pub fn assignment_journal() -> Value {
    let entry = object(
        json!({
            "version": integer(1),
            "kind": one_of(&["turn", "finish", "review", "gm_note"]),
            "created_at": time(),
            "player_action": string_or_null(),
            "narration": string_or_null(),
            "summary": string_or_null(),
            "scene": string_or_null(),
            "gm_private": string_or_null(),
            "operation_id": uuid_or_null(),
        }),
        &[
            "version",
            "kind",
            "created_at",
            "player_action",
            "narration",
            "summary",
            "scene",
        ],
    );
    object(
        json!({
            "total": integer(0),
            "offset": integer(0),
            "limit": {"type": "integer", "minimum": 1, "maximum": limits::JOURNAL_PAGE_MAX},
            "entries": array(entry, Some(limits::JOURNAL_PAGE_MAX)),
        }),
        &["total", "offset", "limit", "entries"],
    )
}

/// `list_pending_consequences`.
pub fn pending_reviews() -> Value {
    let pending = object(
        json!({"id": uuid(), "version": integer(1), "category": category(), "description": string()}),
        &["id", "version", "category", "description"],
    );
    let group = object(
        json!({
            "assignment_id": uuid(),
            "character": string(),
            "version": integer(1),
            "status": play_status(),
            "pending": {"type": "array", "items": pending, "minItems": 1},
        }),
        &["assignment_id", "character", "version", "status", "pending"],
    );
    object(json!({"assignments": array(group, None)}), &["assignments"])
}

/// `review_consequences`' receipt.
pub fn review_receipt() -> Value {
    let decision = object(
        json!({"id": uuid(), "status": one_of(&["approved", "rejected"]), "note": string_or_null()}),
        &["id", "status", "note"],
    );
    object(
        json!({
            "session_id": uuid(),
            "version": integer(2),
            "decisions": {"type": "array", "items": decision, "minItems": 1, "maxItems": crate::domain::review::MAX_DECISIONS},
            "replayed": boolean(),
        }),
        &["session_id", "version", "decisions", "replayed"],
    )
}

fn scenario_properties() -> Value {
    json!({"id": uuid(), "title": string(), "version": integer(0), "created_at": time()})
}

const SCENARIO_FIELDS: [&str; 4] = ["id", "title", "version", "created_at"];

/// `create_scenario`: a scenario without its nodes.
pub fn scenario() -> Value {
    object(scenario_properties(), &SCENARIO_FIELDS)
}

/// `list_scenarios`.
pub fn scenarios() -> Value {
    object(json!({"items": array(scenario(), None)}), &["items"])
}

/// `put_node`, and each node of `get_scenario`.
pub fn node() -> Value {
    object(
        json!({
            "id": slug(),
            "kind": node_kind(),
            "title": string(),
            "published": boolean(),
            "public_text": string(),
            "gm_text": string(),
        }),
        &["id", "kind", "title", "published", "public_text", "gm_text"],
    )
}

/// `get_scenario`.
pub fn scenario_detail() -> Value {
    let mut properties = scenario_properties();
    properties["draft_nodes"] = array(node(), None);
    properties["published_nodes"] = array(node(), None);
    let mut required = SCENARIO_FIELDS.to_vec();
    required.extend(["draft_nodes", "published_nodes"]);
    object(properties, &required)
}

/// `delete_node`.
pub fn node_deleted() -> Value {
    object(json!({"deleted": slug()}), &["deleted"])
}

/// `publish_scenario`.
pub fn published() -> Value {
    object(
        json!({"id": uuid(), "source_version": integer(1)}),
        &["id", "source_version"],
    )
}

/// `wiki_list_pages`.
pub fn wiki_pages() -> Value {
    let page = object(
        json!({"slug": slug(), "title": string(), "version": integer(1), "updated_at": time()}),
        &["slug", "title", "version", "updated_at"],
    );
    object(json!({"pages": array(page, None)}), &["pages"])
}

/// `wiki_read_page`.
pub fn wiki_page() -> Value {
    object(
        json!({"slug": slug(), "title": string(), "body": string(), "version": integer(1), "updated_at": time()}),
        &["slug", "title", "body", "version", "updated_at"],
    )
}

/// `wiki_write_page`, and each version of `wiki_page_history`.
pub fn wiki_page_summary() -> Value {
    object(
        json!({
            "slug": slug(),
            "title": string(),
            "version": integer(1),
            "updated_at": time(),
            "body_chars": integer(0),
        }),
        &["slug", "title", "version", "updated_at", "body_chars"],
    )
}

/// `wiki_search`.
pub fn wiki_hits() -> Value {
    let hit = object(
        json!({"slug": slug(), "title": string(), "version": integer(1), "excerpt": string()}),
        &["slug", "title", "version", "excerpt"],
    );
    object(
        json!({"hits": array(hit, Some(crate::domain::wiki::SEARCH_HITS as i64))}),
        &["hits"],
    )
}

/// `wiki_page_history`.
pub fn wiki_history() -> Value {
    object(
        json!({"slug": slug(), "versions": {"type": "array", "items": wiki_page_summary(), "minItems": 1}}),
        &["slug", "versions"],
    )
}
