//! The author door's tools: each declared once with a strict input schema whose bounds match
//! the campaign rules, and a handler that calls one [`CampaignService`] function as the GM
//! behind the token and answers its result as [`crate::render`] writes it. The rules themselves
//! (ownership, versions, review) stay in the service.

use std::future::Future;
use std::sync::Arc;

use mcp_door::model::ToolAnnotations;
use mcp_door::{Catalog, CatalogError, ToolDecl};
use serde_json::{Map, Value, json};
use uuid::Uuid;

use super::{actor, tool_outcome};
use crate::campaign::{self, CampaignError, CampaignService, NodeInput};
use crate::domain::User;
use crate::domain::play::{DomainError, limits};
use crate::domain::review::{self, ReviewArgs};
use crate::domain::wiki::{self, WikiWrite};
use crate::mcp::schema;
use crate::render;

const UUID_PATTERN: &str =
    "^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$";
/// Node ids and wiki slugs (`fields::is_slug`).
const SLUG_PATTERN: &str = "^[a-z0-9][a-z0-9_-]{0,63}$";

/// What a tool does, for its annotations.
#[derive(Clone, Copy)]
enum Effect {
    /// Reads only.
    Read,
    /// Writes; `idempotent` when repeating the identical call changes nothing more.
    Write { idempotent: bool },
    /// Removes something that cannot be restored.
    Delete,
}

fn annotations(effect: Effect) -> ToolAnnotations {
    let (read_only, destructive, idempotent) = match effect {
        Effect::Read => (true, false, true),
        Effect::Write { idempotent } => (false, false, idempotent),
        Effect::Delete => (false, true, true),
    };
    ToolAnnotations::new()
        .read_only(read_only)
        .destructive(destructive)
        .idempotent(idempotent)
        .open_world(false)
}

/// Declares a tool whose handler runs `f` as the token's GM and renders its outcome.
fn tool<F, Fut>(
    campaign: &Arc<CampaignService>,
    name: &str,
    title: &str,
    description: &str,
    schema: Value,
    effect: Effect,
    f: F,
) -> ToolDecl
where
    F: Fn(Arc<CampaignService>, User, Map<String, Value>) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Value, CampaignError>> + Send + 'static,
{
    let campaign = Arc::clone(campaign);
    ToolDecl::new_with_outcome(name, title, description, schema, move |ctx, args| {
        let call = actor(&ctx).map(|user| f(Arc::clone(&campaign), user, args));
        async move { tool_outcome(call?.await) }
    })
    .with_annotations(annotations(effect))
}

fn object(properties: Value, required: &[&str]) -> Value {
    json!({
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": false,
    })
}

fn no_arguments() -> Value {
    object(json!({}), &[])
}

fn uuid_schema(description: &str) -> Value {
    json!({"type": "string", "pattern": UUID_PATTERN, "description": description})
}

fn slug_schema(description: &str) -> Value {
    json!({"type": "string", "pattern": SLUG_PATTERN, "description": description})
}

/// A 422 naming the argument, for what the schema already excludes (kept as a safety net).
fn invalid(pointer: &str, message: impl std::fmt::Display) -> CampaignError {
    CampaignError::Domain(DomainError::Invalid(vec![format!("{pointer}: {message}")]))
}

fn uuid_arg(args: &Map<String, Value>, key: &str) -> Result<Uuid, CampaignError> {
    args.get(key)
        .and_then(Value::as_str)
        .and_then(|s| Uuid::parse_str(s).ok())
        .ok_or_else(|| invalid(&format!("/{key}"), "must be a UUID"))
}

fn str_arg(args: &Map<String, Value>, key: &str) -> String {
    args.get(key)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned()
}

/// The remaining arguments as `T` (after the ids the handler took out).
fn parse<T: serde::de::DeserializeOwned>(args: Map<String, Value>) -> Result<T, CampaignError> {
    serde_json::from_value(Value::Object(args)).map_err(|e| invalid("/", e))
}

/// Every author tool, in the order `tools/list` shows them.
pub fn catalog(campaign: Arc<CampaignService>) -> Result<Catalog, CatalogError> {
    let c = &campaign;
    let mut decls = scenario_tools(c);
    decls.extend(assignment_tools(c));
    decls.extend(wiki_tools(c));
    Catalog::new(decls)
}

fn scenario_tools(c: &Arc<CampaignService>) -> Vec<ToolDecl> {
    let node_text = |what: &str| json!({"type": "string", "maxLength": campaign::NODE_TEXT_CHARS, "default": "", "description": what});
    vec![
        tool(
            c,
            "list_scenarios",
            "List scenarios",
            "List your scenarios, oldest first: id, title, latest published source version (0 before \
the first publish) and creation time. Times are ISO 8601 UTC with milliseconds (2026-12-01T18:15:02.784Z).",
            no_arguments(),
            Effect::Read,
            |c, user, _args| async move { Ok(render::scenarios(&c.scenarios(&user).await?)) },
        )
        .with_output_schema(schema::scenarios()),
        tool(
            c,
            "get_scenario",
            "Get scenario",
            "Read one of your scenarios: its draft nodes (what put_node edits) and the nodes of its latest \
published source version, each with kind, title, published flag, public_text and gm_text. Times are ISO 8601 UTC with milliseconds (2026-12-01T18:15:02.784Z).",
            object(
                json!({"scenario_id": uuid_schema("The scenario's id.")}),
                &["scenario_id"],
            ),
            Effect::Read,
            |c, user, args| async move {
                let id = uuid_arg(&args, "scenario_id")?;
                Ok(render::scenario_detail(&c.scenario(&user, id).await?))
            },
        )
        .with_output_schema(schema::scenario_detail()),
        tool(
            c,
            "create_scenario",
            "Create scenario",
            "Create an empty scenario with this title. Add nodes with put_node, then publish_scenario to \
make source version 1 that assignments can use. Each call creates a new scenario. Times are ISO 8601 UTC with milliseconds (2026-12-01T18:15:02.784Z).",
            object(
                json!({"title": {"type": "string", "minLength": 1, "maxLength": campaign::TITLE_CHARS, "description": "Title (1–200 characters)."}}),
                &["title"],
            ),
            Effect::Write { idempotent: false },
            |c, user, args| async move {
                let scenario = c.create_scenario(&user, &str_arg(&args, "title")).await?;
                Ok(render::scenario(&scenario))
            },
        )
        .with_output_schema(schema::scenario()),
        tool(
            c,
            "put_node",
            "Create or replace node",
            "Create or replace one draft node of your scenario. The whole node is replaced: pass every field \
you want to keep. Published source versions are frozen; changes reach players only after \
publish_scenario and a new assignment. public_text may be shown to players (when the node is \
published and listed in an assignment); gm_text never is. A scene node can be a player's \
current_scene.",
            object(
                json!({
                    "scenario_id": uuid_schema("The scenario's id."),
                    "node_id": slug_schema("Stable node id: 1–64 characters of a-z, 0-9, '_' or '-', starting with a letter or digit."),
                    "kind": {"type": "string", "enum": campaign::NODE_KINDS, "description": "What the node is."},
                    "title": {"type": "string", "minLength": 1, "maxLength": campaign::TITLE_CHARS, "description": "Title (1–200 characters)."},
                    "published": {"type": "boolean", "default": false, "description": "Whether assignments may show this node's public_text to players."},
                    "public_text": node_text("Text players' facilitators may use (up to 20,000 characters)."),
                    "gm_text": node_text("GM-only text, never shown to players (up to 20,000 characters)."),
                }),
                &["scenario_id", "node_id", "kind", "title"],
            ),
            Effect::Write { idempotent: true },
            |c, user, mut args| async move {
                let id = uuid_arg(&args, "scenario_id")?;
                let node_id = str_arg(&args, "node_id");
                args.remove("scenario_id");
                args.remove("node_id");
                let input: NodeInput = parse(args)?;
                Ok(render::node(
                    &c.put_node(&user, id, &node_id, &input).await?,
                ))
            },
        )
        .with_output_schema(schema::node()),
        tool(
            c,
            "delete_node",
            "Delete node",
            "Delete one draft node of your scenario. Published source versions keep their copy; the draft \
node itself cannot be restored. Unknown nodes are 404.",
            object(
                json!({
                    "scenario_id": uuid_schema("The scenario's id."),
                    "node_id": slug_schema("The node's id."),
                }),
                &["scenario_id", "node_id"],
            ),
            Effect::Delete,
            |c, user, args| async move {
                let id = uuid_arg(&args, "scenario_id")?;
                let deleted = c.delete_node(&user, id, &str_arg(&args, "node_id")).await?;
                Ok(render::node_deleted(&deleted))
            },
        )
        .with_output_schema(schema::node_deleted()),
        tool(
            c,
            "publish_scenario",
            "Publish scenario",
            "Freeze the scenario's draft nodes as its next source version and return it as source_version. \
Existing assignments keep the version they were created from. Needs at least one node; every \
call creates a new version.",
            object(
                json!({"scenario_id": uuid_schema("The scenario's id.")}),
                &["scenario_id"],
            ),
            Effect::Write { idempotent: false },
            |c, user, args| async move {
                let id = uuid_arg(&args, "scenario_id")?;
                Ok(render::published(&c.publish(&user, id).await?))
            },
        )
        .with_output_schema(schema::published()),
    ]
}

fn assignment_tools(c: &Arc<CampaignService>) -> Vec<ToolDecl> {
    let decision = json!({
        "type": "object",
        "properties": {
            "id": uuid_schema("A pending consequence of this assignment."),
            "decision": {"type": "string", "enum": ["approved", "rejected"]},
            "note": {"type": "string", "maxLength": review::NOTE_CHARS, "description": "Optional note, visible to the player (up to 2,000 characters)."},
        },
        "required": ["id", "decision"],
        "additionalProperties": false,
    });
    vec![
        tool(
            c,
            "list_assignments",
            "List assignments",
            "List up to 200 most recent assignments you run as GM (role gm) or play in (role player): \
character, mode, status, current version, scene and brief. GM notes appear only where you are the GM. Times are ISO 8601 UTC with milliseconds (2026-12-01T18:15:02.784Z).",
            no_arguments(),
            Effect::Read,
            |c, user, _args| async move { Ok(render::assignments(&c.list(&user).await?)) },
        )
        .with_output_schema(schema::assignments()),
        tool(
            c,
            "get_assignment",
            "Get assignment",
            "Read one assignment (GM notes only if you are its GM) with its pending count and every \
consequence proposed during play: id, version of the turn, category, description, status \
(pending, approved, rejected) and the GM note. Times are ISO 8601 UTC with milliseconds (2026-12-01T18:15:02.784Z).",
            object(
                json!({"assignment_id": uuid_schema("The assignment's id.")}),
                &["assignment_id"],
            ),
            Effect::Read,
            |c, user, args| async move {
                let id = uuid_arg(&args, "assignment_id")?;
                Ok(render::assignment_overview(&c.overview(&user, id).await?))
            },
        )
        .with_output_schema(schema::assignment_overview()),
        tool(
            c,
            "read_assignment_journal",
            "Read assignment journal",
            "Read an assignment's journal ordered by committed version: turns (player action, narration, \
scene), the finish summary and, for the GM, review events and GM-private notes. Use it to judge \
pending consequences in context. Times are ISO 8601 UTC with milliseconds (2026-12-01T18:15:02.784Z).",
            object(
                json!({
                    "assignment_id": uuid_schema("The assignment's id."),
                    "offset": {"type": "integer", "minimum": 0, "default": 0, "description": "Entries to skip."},
                    "limit": {"type": "integer", "minimum": 1, "maximum": limits::JOURNAL_PAGE_MAX, "default": limits::JOURNAL_PAGE_DEFAULT, "description": "Entries to return (1–20)."},
                }),
                &["assignment_id"],
            ),
            Effect::Read,
            |c, user, args| async move {
                let id = uuid_arg(&args, "assignment_id")?;
                let offset = args.get("offset").and_then(Value::as_i64).unwrap_or(0);
                let limit = args
                    .get("limit")
                    .and_then(Value::as_i64)
                    .unwrap_or(limits::JOURNAL_PAGE_DEFAULT);
                Ok(render::journal(&c.journal(&user, id, offset, limit).await?))
            },
        )
        .with_output_schema(schema::assignment_journal()),
        tool(
            c,
            "list_pending_consequences",
            "List pending consequences",
            "List the consequences awaiting your review, grouped by the assignments you run as GM (only \
those with at least one pending): assignment id, character, current version (the expected_version \
a review needs), status, and each pending consequence's id, category and description.",
            no_arguments(),
            Effect::Read,
            |c, user, _args| async move {
                Ok(render::pending_reviews(&c.pending_reviews(&user).await?))
            },
        )
        .with_output_schema(schema::pending_reviews()),
        tool(
            c,
            "review_consequences",
            "Review consequences",
            "Approve or reject 1–20 distinct pending consequences of one assignment you run as GM, in one \
versioned operation. Decisions are final and visible to the player with their notes; confirm them \
with the GM first. Use a new operation_id per review and the assignment's current version as \
expected_version (a stale one is 409; so is a consequence already decided). An identical retry \
returns the original receipt with replayed: true. Completed assignments can be reviewed.",
            object(
                json!({
                    "operation_id": uuid_schema("A new UUID per logical review."),
                    "expected_version": {"type": "integer", "minimum": 1, "description": "The assignment's current version."},
                    "assignment_id": uuid_schema("The assignment whose consequences you decide."),
                    "decisions": {"type": "array", "minItems": 1, "maxItems": review::MAX_DECISIONS, "items": decision},
                }),
                &[
                    "operation_id",
                    "expected_version",
                    "assignment_id",
                    "decisions",
                ],
            ),
            Effect::Write { idempotent: true },
            |c, user, mut args| async move {
                let id = uuid_arg(&args, "assignment_id")?;
                args.remove("assignment_id");
                let review: ReviewArgs = parse(args)?;
                Ok(render::review(c.review(&user, id, review).await?))
            },
        )
        .with_output_schema(schema::review_receipt()),
    ]
}

fn wiki_tools(c: &Arc<CampaignService>) -> Vec<ToolDecl> {
    let slug = || {
        slug_schema(
            "Page slug: 1–64 characters of a-z, 0-9, '_' or '-', starting with a letter or digit.",
        )
    };
    vec![
        tool(
            c,
            "wiki_list_pages",
            "List wiki pages",
            "List the pages of your private campaign wiki by slug: slug, title, current version and last \
update. Players never see the wiki. Times are ISO 8601 UTC with milliseconds (2026-12-01T18:15:02.784Z).",
            no_arguments(),
            Effect::Read,
            |c, user, _args| async move { Ok(render::wiki_pages(&c.wiki_list(&user).await?)) },
        )
        .with_output_schema(schema::wiki_pages()),
        tool(
            c,
            "wiki_read_page",
            "Read wiki page",
            "Read one page of your private wiki: slug, title, Markdown body, version, last update. Pass \
version to read an older version listed by wiki_page_history. Times are ISO 8601 UTC with milliseconds (2026-12-01T18:15:02.784Z).",
            object(
                json!({
                    "slug": slug(),
                    "version": {"type": "integer", "minimum": 1, "description": "An older version to read (default: the current one)."},
                }),
                &["slug"],
            ),
            Effect::Read,
            |c, user, args| async move {
                let slug = str_arg(&args, "slug");
                let page = match args.get("version").and_then(Value::as_i64) {
                    None => c.wiki_read(&user, &slug).await?,
                    Some(v) => c.wiki_read_version(&user, &slug, v).await?,
                };
                Ok(render::wiki_page(&page))
            },
        )
        .with_output_schema(schema::wiki_page()),
        tool(
            c,
            "wiki_write_page",
            "Write wiki page",
            "Create or replace a page of your private wiki (the whole title and body). Optimistic \
concurrency: expected_version 0 creates a new page; otherwise pass the version you read. If the \
page moved on (or already exists), the write fails with 409 and changes nothing: read it again and \
merge. Every write keeps the previous version in the history. Returns slug, title, the new \
version, updated_at and body_chars (not the body you sent). Times are ISO 8601 UTC with milliseconds (2026-12-01T18:15:02.784Z).",
            object(
                json!({
                    "slug": slug(),
                    "title": {"type": "string", "minLength": 1, "maxLength": wiki::TITLE_CHARS, "description": "Title (1–200 characters)."},
                    "body": {"type": "string", "maxLength": wiki::BODY_CHARS, "description": "Markdown body (up to 100,000 characters)."},
                    "expected_version": {"type": "integer", "minimum": 0, "description": "0 to create; otherwise the version you read."},
                }),
                &["slug", "title", "body", "expected_version"],
            ),
            Effect::Write { idempotent: false },
            |c, user, args| async move {
                let write: WikiWrite = parse(args)?;
                Ok(render::wiki_page_summary(
                    &c.wiki_write(&user, &write).await?,
                ))
            },
        )
        .with_output_schema(schema::wiki_page_summary()),
        tool(
            c,
            "wiki_search",
            "Search wiki",
            "Case-insensitive search of your private wiki's titles and bodies. Up to 20 hits, title matches \
first, then most recently updated: slug, title, version and an excerpt around the first match.",
            object(
                json!({"query": {"type": "string", "minLength": 1, "maxLength": wiki::QUERY_CHARS, "description": "Text to find (1–200 characters)."}}),
                &["query"],
            ),
            Effect::Read,
            |c, user, args| async move {
                let hits = c.wiki_search(&user, &str_arg(&args, "query")).await?;
                Ok(render::wiki_hits(&hits))
            },
        )
        .with_output_schema(schema::wiki_hits()),
        tool(
            c,
            "wiki_page_history",
            "Wiki page history",
            "List every version of one page of your private wiki, newest first: version, title, last update \
and body length in characters. Read an old version with wiki_read_page and version. Times are ISO 8601 UTC with milliseconds (2026-12-01T18:15:02.784Z).",
            object(json!({"slug": slug()}), &["slug"]),
            Effect::Read,
            |c, user, args| async move {
                let slug = str_arg(&args, "slug");
                let history = c.wiki_history(&user, &slug).await?;
                Ok(render::wiki_history(&slug, &history))
            },
        )
        .with_output_schema(schema::wiki_history()),
    ]
}
