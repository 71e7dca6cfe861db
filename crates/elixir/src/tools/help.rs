//! The Help group (SURFACE §2.9): documentation, examples, product news, the changelog, and
//! feedback with its reply ledger. All of them cost no daily quota.

use serde_json::{Map, Value, json};

use crate::access::kinds::Kind;
use crate::domain::{FEEDBACK_CATEGORIES, FeedbackStatus, Semver, iso, parse_since};
use crate::mcp::args::{
    self, DATE_OR_INSTANT_PATTERN, DATE_PATTERN, SEMVER_PATTERN, SLUG_PATTERN, UUID_PATTERN,
};
use crate::mcp::call::{
    ErrorCode, Fail, Outcome, Success, ToolCtx, ToolError, bad_request, handler,
};
use crate::mcp::shape;
use crate::mcp::spec::{Flag, Group, Param, SCOPE_FEEDBACK, SCOPE_READ, ToolSpec};
use crate::model::{Feedback, FeedbackQuery, NewFeedback};

const ALL: [Kind; 3] = Kind::ALL;
/// The keys of one example.
const EXAMPLE: &[&str] = &["slug", "title", "question", "tools", "outline"];
/// `elixir_my_feedback` pages hold at most this many characters of items, well under the
/// 48,000-character cap with the envelope.
pub const FEEDBACK_PAGE_CHARS: usize = 40_000;
const DOCS_HINT: &str = "elixir_docs({}) lists every page with its sections.";

pub fn specs() -> Vec<ToolSpec> {
    vec![
        docs(),
        examples(),
        updates(),
        changelog(),
        feedback(),
        my_feedback(),
    ]
}

fn spec(name: &'static str, title: &'static str, description: &str) -> ToolSpec {
    ToolSpec {
        name,
        group: Group::Help,
        title,
        description: description.to_owned(),
        scope: SCOPE_READ,
        kinds: ALL.to_vec(),
        flags: vec![Flag::U],
        params: Vec::new(),
        compact_drops: None,
        output: Vec::new(),
        docs: format!("tools-help#{}", crate::domain::slugify(name)),
        too_large_hint: String::new(),
        handler: handler(|_, _| async { Ok(Success::new()) }),
    }
}

fn verbosity_applied(success: Success, a: &Map<String, Value>) -> Success {
    success.applied("verbosity", json!(args::verbosity(a)))
}

fn not_found(message: String, hint: &str, candidates: Vec<Value>) -> Fail {
    Fail::Tool(ToolError::new(ErrorCode::NotFound, message, hint).with_candidates(candidates))
}

/// Slugs close to `wanted`: sharing a prefix of three or more, or containing one another.
fn near(wanted: &str, slugs: impl Iterator<Item = String>) -> Vec<Value> {
    let prefix: String = wanted.chars().take(3).collect();
    slugs
        .filter(|s| s.starts_with(&prefix) || s.contains(wanted) || wanted.contains(s.as_str()))
        .take(5)
        .map(Value::String)
        .collect()
}

// ---- elixir_docs ----

fn docs() -> ToolSpec {
    let mut s = spec(
        "elixir_docs",
        "Documentation",
        "Reference tool: Elixir's documentation. No arguments lists every page with its sections; page returns one page; page with section returns one H2 section (the docs pointer of every answer is page#section); query searches every section for all of its words.",
    );
    s.params = vec![
        Param::new(
            "page",
            args::pattern("Page slug, e.g. limits.", SLUG_PATTERN, 80),
        ),
        Param::new(
            "section",
            args::pattern(
                "Section slug within page, e.g. hourly-rate; needs page.",
                SLUG_PATTERN,
                80,
            ),
        ),
        Param::new(
            "query",
            args::string(
                "Words to search for in every section (2-80 characters); not with page.",
                2,
                80,
            ),
        ),
    ];
    s.output = vec![
        (
            "pages",
            shape::list(
                "The index: {slug, title, summary, sections[]} per page.",
                &["slug", "title", "summary", "sections"],
            ),
            false,
        ),
        (
            "page",
            shape::object(
                "One page: {slug, title, markdown, sections[]}.",
                &["slug", "title", "markdown", "sections"],
            ),
            false,
        ),
        (
            "section",
            shape::object(
                "One section: {page, slug, title, markdown}.",
                &["page", "slug", "title", "markdown"],
            ),
            false,
        ),
        (
            "matches",
            shape::list(
                "Search hits: {page, section, title, snippet}, best first.",
                &["page", "section", "title", "snippet"],
            ),
            false,
        ),
    ];
    s.too_large_hint = "elixir_docs({\"page\": \"<slug>\", \"section\": \"<section>\"}) returns one section of the page.".into();
    s.handler = handler(docs_call);
    s
}

async fn docs_call(ctx: ToolCtx, a: Map<String, Value>) -> Outcome {
    let content = &ctx.services.content;
    let (page, section, query) = (
        args::text(&a, "page"),
        args::text(&a, "section"),
        args::text(&a, "query"),
    );
    let out = verbosity_applied(Success::new(), &a);
    if section.is_some() && page.is_none() {
        return Err(bad_request(
            "section needs page.",
            "elixir_docs({\"page\": \"<slug>\", \"section\": \"<section>\"})",
        ));
    }
    if query.is_some() && page.is_some() {
        return Err(bad_request(
            "query searches every page; it cannot be combined with page.",
            "elixir_docs({\"query\": \"<words>\"})",
        ));
    }
    if let Some(q) = query {
        let matches = content.search(q, 20);
        let mut out = out.field(
            "matches",
            Value::Array(matches.iter().map(|m| m.to_json()).collect()),
        );
        if matches.is_empty() {
            out =
                out.note("No section contains every word of the query; try fewer or other words.");
        }
        return Ok(out.docs("tools-help#documentation-pointers"));
    }
    let Some(page_slug) = page else {
        let pages = content.pages.iter().map(|p| p.index_entry()).collect();
        return Ok(out.field("pages", Value::Array(pages)));
    };
    let Some(page) = content.page(page_slug) else {
        let candidates = near(page_slug, content.pages.iter().map(|p| p.slug.clone()));
        return Err(not_found(
            format!("There is no documentation page {page_slug:?}."),
            DOCS_HINT,
            candidates,
        ));
    };
    match section {
        Some(section_slug) => {
            let Some(found) = page.section(section_slug) else {
                let candidates = near(section_slug, page.sections.iter().map(|s| s.slug.clone()));
                return Err(not_found(
                    format!("Page {page_slug} has no section {section_slug:?}."),
                    &format!("elixir_docs({{\"page\": \"{page_slug}\"}}) lists its sections."),
                    candidates,
                ));
            };
            Ok(out
                .field("section", json!({"page": page.slug, "slug": found.slug, "title": found.title, "markdown": found.markdown}))
                .docs(format!("{}#{}", page.slug, found.slug)))
        }
        None => Ok(out
            .field("page", json!({
                "slug": page.slug,
                "title": page.title,
                "markdown": page.markdown,
                "sections": page.sections.iter().map(|s| json!({"slug": s.slug, "title": s.title})).collect::<Vec<_>>(),
            }))
            .docs(page.slug.clone())),
    }
}

// ---- elixir_examples ----

fn examples() -> ToolSpec {
    let mut s = spec(
        "elixir_examples",
        "Examples",
        "Reference tool: the eleven worked examples, each a question with the tools that answer it and an outline. An example whose tools are not built yet is marked (coming) and lists none. No arguments lists them all; example returns one. The examples that list tools are also prompts named by slug.",
    );
    s.params = vec![Param::new(
        "example",
        args::pattern("Example slug, e.g. play.", SLUG_PATTERN, 40),
    )];
    s.output = vec![
        (
            "examples",
            shape::list(
                "Every example: {slug, title, question, tools[], outline}.",
                EXAMPLE,
            ),
            false,
        ),
        (
            "example",
            shape::object(
                "One example: {slug, title, question, tools[], outline}.",
                EXAMPLE,
            ),
            false,
        ),
    ];
    s.too_large_hint = "elixir_examples({\"example\": \"<slug>\"}) returns one example.".into();
    s.handler = handler(examples_call);
    s
}

async fn examples_call(ctx: ToolCtx, a: Map<String, Value>) -> Outcome {
    let content = &ctx.services.content;
    let out = verbosity_applied(Success::new(), &a);
    match args::text(&a, "example") {
        None => Ok(out.field(
            "examples",
            Value::Array(content.examples.iter().map(|e| e.to_json()).collect()),
        )),
        Some(slug) => match content.example(slug) {
            Some(e) => Ok(out.field("example", e.to_json())),
            None => Err(not_found(
                format!("There is no example {slug:?}."),
                "elixir_examples({}) lists every example.",
                content
                    .examples
                    .iter()
                    .map(|e| Value::String(e.slug.clone()))
                    .collect(),
            )),
        },
    }
}

// ---- elixir_updates ----

fn updates() -> ToolSpec {
    let mut s = spec(
        "elixir_updates",
        "What's new",
        "Reference tool: product news, newest first. since (YYYY-MM-DD, inclusive) keeps the updates of that day and later; omitted, the latest ones up to limit.",
    );
    s.params = vec![
        Param::new(
            "since",
            args::pattern(
                "First day to include, YYYY-MM-DD (inclusive).",
                DATE_PATTERN,
                10,
            ),
        ),
        Param::new("limit", args::integer("Most updates to return.", 1, 50, 10)),
    ];
    s.output = vec![(
        "updates",
        shape::list(
            "{date, title, markdown, tools[]}, newest first.",
            &["date", "title", "markdown", "tools"],
        ),
        true,
    )];
    s.too_large_hint =
        "elixir_updates({\"limit\": 3}) or a later since returns fewer updates.".into();
    s.handler = handler(updates_call);
    s
}

async fn updates_call(ctx: ToolCtx, a: Map<String, Value>) -> Outcome {
    let limit = args::int(&a, "limit", 10);
    let since = args::text(&a, "since");
    if let Some(d) = since
        && d.parse::<jiff::civil::Date>().is_err()
    {
        return Err(bad_request(
            format!("since {d:?} is not a calendar date."),
            "elixir_updates({\"since\": \"2026-01-01\"})",
        ));
    }
    let updates: Vec<Value> = ctx
        .services
        .content
        .updates
        .iter()
        .filter(|u| since.is_none_or(|s| u.get("date").and_then(Value::as_str).unwrap_or("") >= s))
        .take(usize::try_from(limit).unwrap_or(10))
        .cloned()
        .collect();
    Ok(verbosity_applied(Success::new(), &a)
        .field("updates", Value::Array(updates))
        .applied("limit", json!(limit)))
}

// ---- elixir_changelog ----

fn changelog() -> ToolSpec {
    let mut s = spec(
        "elixir_changelog",
        "Changelog",
        "Reference tool: releases of the tool contract, newest first, with tools_added, tools_removed and breaking where relevant. since is an exclusive semver; follow next_offset as offset with the same since until it is null. Compare serverInfo.version on initialize to know when to look.",
    );
    s.flags = vec![Flag::Co, Flag::U];
    s.params = vec![
        Param::new(
            "since",
            args::pattern(
                "Only releases after this version (exclusive), e.g. 1.0.0.",
                SEMVER_PATTERN,
                20,
            ),
        ),
        Param::new("limit", args::integer("Releases per page.", 1, 20, 20)),
        Param::new(
            "offset",
            args::integer("Releases to skip (from next_offset).", 0, 10_000, 0),
        ),
    ];
    s.output = vec![
        (
            "entries",
            shape::list(
                "{version, date, summary, tools_added?, tools_removed?, breaking?}, newest first.",
                &["version", "date", "summary"],
            ),
            true,
        ),
        (
            "total",
            json!({"type": "integer", "description": "Releases matching since."}),
            true,
        ),
        (
            "next_offset",
            json!({"type": ["integer", "null"], "description": "The offset of the next page, or null at the end."}),
            true,
        ),
    ];
    s.docs = "protocol#versioning".into();
    s.too_large_hint =
        "elixir_changelog({\"limit\": 5}) returns a shorter page; follow next_offset.".into();
    s.handler = handler(changelog_call);
    s
}

async fn changelog_call(ctx: ToolCtx, a: Map<String, Value>) -> Outcome {
    let limit = args::int(&a, "limit", 20);
    let offset = args::int(&a, "offset", 0);
    let since = match args::text(&a, "since") {
        Some(t) => Some(Semver::parse(t).ok_or_else(|| {
            bad_request(
                format!("since {t:?} is not MAJOR.MINOR.PATCH."),
                "elixir_changelog({\"since\": \"1.0.0\"})",
            )
        })?),
        None => None,
    };
    let matching: Vec<&Value> = ctx
        .services
        .content
        .changelog
        .iter()
        .filter(|e| {
            since.is_none_or(|s| {
                e.get("version")
                    .and_then(Value::as_str)
                    .and_then(Semver::parse)
                    .is_some_and(|v| v > s)
            })
        })
        .collect();
    let total = matching.len();
    let start = usize::try_from(offset).unwrap_or(0).min(total);
    let end = (start + usize::try_from(limit).unwrap_or(20)).min(total);
    let entries: Vec<Value> = matching[start..end]
        .iter()
        .map(|e| changelog_entry(e))
        .collect();
    let next = (end < total).then_some(end);
    Ok(verbosity_applied(Success::new(), &a)
        .field("entries", Value::Array(entries))
        .field("total", json!(total))
        .field("next_offset", json!(next))
        .applied("limit", json!(limit))
        .applied("offset", json!(offset)))
}

/// An entry with its optional keys only when relevant (non-empty lists, `breaking` true).
fn changelog_entry(e: &Value) -> Value {
    let mut out = Map::new();
    for key in ["version", "date", "summary"] {
        out.insert(key.into(), e.get(key).cloned().unwrap_or(Value::Null));
    }
    for key in ["tools_added", "tools_removed"] {
        if let Some(list) = e
            .get(key)
            .and_then(Value::as_array)
            .filter(|l| !l.is_empty())
        {
            out.insert(key.into(), Value::Array(list.clone()));
        }
    }
    match e.get("breaking") {
        None | Some(Value::Null) | Some(Value::Bool(false)) => {}
        Some(v) => {
            out.insert("breaking".into(), v.clone());
        }
    }
    Value::Object(out)
}

// ---- elixir_feedback ----

fn feedback() -> ToolSpec {
    let mut s = spec(
        "elixir_feedback",
        "Send feedback",
        "Account tool: files a report to Elixir's maintainers from your account. request_id (the meta.request_id of one of your own calls) attaches that call, its arguments and its answer. File on your own judgment when an answer looks wrong or a tool is missing; replies arrive through elixir_my_feedback.",
    );
    s.scope = SCOPE_FEEDBACK;
    s.params = vec![
        Param::new(
            "message",
            args::string(
                "What happened or what you need (1-4000 characters).",
                1,
                4000,
            ),
        )
        .required(),
        Param::new(
            "category",
            args::choice("Kind of report.", &FEEDBACK_CATEGORIES, Some("general")),
        ),
        Param::new(
            "context",
            args::string(
                "Free text naming a tool or the question asked (1-1000).",
                1,
                1000,
            ),
        ),
        Param::new(
            "request_id",
            args::pattern(
                "meta.request_id of your own call this is about.",
                UUID_PATTERN,
                36,
            ),
        ),
        Param::new(
            "on_behalf_of",
            args::string(
                "Opaque id of the end user the agent files for (1-200).",
                1,
                200,
            ),
        )
        .agent_only(),
    ];
    s.output = vec![(
        "feedback",
        shape::object(
            "{id, status: new, created_at, attached_request}.",
            &["id", "status", "created_at", "attached_request"],
        ),
        true,
    )];
    s.docs = "tools-help#feedback".into();
    s.too_large_hint = "Report meta.request_id with a shorter elixir_feedback message.".into();
    s.handler = handler(feedback_call);
    s
}

async fn feedback_call(ctx: ToolCtx, a: Map<String, Value>) -> Outcome {
    let services = &ctx.services;
    let caller = &ctx.caller;
    let on_behalf_of = args::text(&a, "on_behalf_of");
    let mut attached = Value::Null;
    let mut related = Vec::new();
    let request_id = match args::text(&a, "request_id") {
        None => None,
        Some(text) => {
            let id = uuid::Uuid::parse_str(text).map_err(|_| {
                bad_request(
                    "request_id is not a UUID.",
                    "Pass meta.request_id exactly as a response carried it.",
                )
            })?;
            // The call being reported may still be in the audit queue.
            services.audit.flush().await;
            let entry = services.store.audit(id).await?;
            let own = entry.filter(|e| {
                e.account_id == Some(caller.account_id)
                    && e.agent_id == caller.agent.as_ref().map(|g| g.id)
            });
            let Some(entry) = own else {
                return Err(Fail::Tool(ToolError::new(
                    ErrorCode::NotEntitled,
                    "That request_id is not one of this connection's own calls.",
                    "Pass the meta.request_id of a call made on this connection, or omit request_id and describe the call in context.",
                )));
            };
            if let Some(tool) = &entry.tool {
                related.push(tool.clone());
            }
            attached = json!({"request_id": id.to_string(), "tool": entry.tool, "created_at": iso(entry.created_at), "error_code": entry.error_code});
            Some(id)
        }
    };
    let stored = services
        .store
        .insert_feedback(&NewFeedback {
            account_id: caller.account_id,
            agent_id: caller.agent.as_ref().map(|g| g.id),
            principal_kind: caller.kind,
            on_behalf_of: on_behalf_of.map(str::to_owned),
            category: args::text(&a, "category").unwrap_or("general").to_owned(),
            message: args::text(&a, "message").unwrap_or_default().to_owned(),
            context: args::text(&a, "context").map(str::to_owned),
            request_id,
            related_tools: related,
            created_at: services.now(),
        })
        .await?;
    Ok(verbosity_applied(Success::new(), &a)
        .field("feedback", json!({"id": stored.id, "status": stored.status.as_str(), "created_at": iso(stored.created_at), "attached_request": attached}))
        .note("Replies arrive through elixir_my_feedback; meta.feedback_responses_pending says when one is waiting."))
}

// ---- elixir_my_feedback ----

fn my_feedback() -> ToolSpec {
    let mut s = spec(
        "elixir_my_feedback",
        "My feedback",
        "Account tool: your feedback reports and the maintainers' replies, newest first. Pages are bounded by size as well as limit: follow next_offset with the same filters until it is null. Only replies delivered on a page are marked read.",
    );
    s.flags = vec![Flag::Co, Flag::U];
    s.params = vec![
        Param::new("limit", args::integer("Reports per page.", 1, 50, 20)),
        Param::new(
            "offset",
            args::integer("Reports to skip (from next_offset).", 0, 10_000, 0),
        ),
        Param::new(
            "status",
            args::choice(
                "Only reports in this state.",
                &["new", "seen", "planned", "done", "declined"],
                None,
            ),
        ),
        Param::new(
            "since",
            args::pattern(
                "Only reports filed or answered since this date or instant.",
                DATE_OR_INSTANT_PATTERN,
                40,
            ),
        ),
    ];
    s.output = vec![
        (
            "items",
            shape::list(
                "{id, created_at, category, message, context, request_id, status, response, responded_at, shipped_in, related_tools[]}.",
                &["id", "created_at", "category", "message", "status"],
            ),
            true,
        ),
        (
            "total",
            json!({"type": "integer", "description": "Reports matching the filters."}),
            true,
        ),
        (
            "next_offset",
            json!({"type": ["integer", "null"], "description": "The offset of the next page, or null at the end."}),
            true,
        ),
    ];
    s.docs = "tools-help#feedback".into();
    s.too_large_hint =
        "elixir_my_feedback({\"limit\": 5}) returns a shorter page; follow next_offset.".into();
    s.handler = handler(my_feedback_call);
    s
}

fn feedback_item(f: &Feedback) -> Value {
    json!({
        "id": f.id,
        "created_at": iso(f.created_at),
        "category": f.category,
        "message": f.message,
        "context": f.context,
        "request_id": f.request_id.map(|u| u.to_string()),
        "status": f.status.as_str(),
        "response": f.response,
        "responded_at": f.responded_at.map(iso),
        "shipped_in": f.shipped_in,
        "related_tools": f.related_tools,
    })
}

async fn my_feedback_call(ctx: ToolCtx, a: Map<String, Value>) -> Outcome {
    let services = &ctx.services;
    let limit = args::int(&a, "limit", 20);
    let offset = args::int(&a, "offset", 0);
    let status = args::text(&a, "status").and_then(FeedbackStatus::parse);
    let since = match args::text(&a, "since") {
        Some(t) => Some(parse_since(t, &ctx.caller.timezone).ok_or_else(|| {
            bad_request(
                format!("since {t:?} is not a date or an instant."),
                "elixir_my_feedback({\"since\": \"2026-01-01\"})",
            )
        })?),
        None => None,
    };
    let (rows, total) = services
        .store
        .feedback_page(&FeedbackQuery {
            ledger: ctx.caller.ledger(),
            status,
            since,
            offset,
            limit,
        })
        .await?;
    let mut items = Vec::new();
    let mut size = 2usize;
    for row in &rows {
        let item = feedback_item(row);
        let len = item.to_string().chars().count() + 1;
        if !items.is_empty() && size + len > FEEDBACK_PAGE_CHARS {
            break;
        }
        size += len;
        items.push((row, item));
    }
    let delivered: Vec<i64> = items
        .iter()
        .filter(|(r, _)| r.response.is_some() && r.delivered_at.is_none())
        .map(|(r, _)| r.id)
        .collect();
    services
        .store
        .mark_delivered(&delivered, services.now())
        .await?;
    let shown = i64::try_from(items.len()).unwrap_or(0);
    let next = (offset + shown < total).then_some(offset + shown);
    let mut answer = Success::new();
    if !delivered.is_empty() {
        answer = answer.delivered_replies();
    }
    Ok(verbosity_applied(answer, &a)
        .field(
            "items",
            Value::Array(items.into_iter().map(|(_, v)| v).collect()),
        )
        .field("total", json!(total))
        .field("next_offset", json!(next))
        .applied("limit", json!(limit))
        .applied("offset", json!(offset)))
}
