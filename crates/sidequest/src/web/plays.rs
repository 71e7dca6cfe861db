//! The assignment pages: the new-assignment form (GM; every creation field with who sees it
//! and its bounds, the creation UUID in the form so a double submit creates one assignment),
//! the assignment page (brief and the rest as the caller's role may see them, the journal
//! paginated in committed-version order, the consequences, the timeline and the token
//! panel), token generation (shown once, with ready MCP client configurations) and
//! revocation, and the report (a page and a Markdown download, en or pl).

use std::collections::HashMap;

use axum::body::Bytes;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use uuid::Uuid;

use crate::campaign::Role;
use crate::domain::assignment::{CreateAssignment, bounds};
use crate::domain::play::limits;
use crate::domain::{EventKind, Language, Mode, User};
use crate::http::error::ApiError;
use crate::i18n::report_text;
use crate::i18n::web::text;
use crate::state::AppState;
use crate::web::page::{Form, Page, Visitor, field_errors, see_other, when};
use crate::web::timeline::{self, Words};

/// Journal entries per page of the assignment page.
pub const JOURNAL_PAGE: i64 = limits::JOURNAL_PAGE_DEFAULT;

// ---- new assignment ----

/// What the creation form shows: the values typed so far (strings as typed).
#[derive(Debug, Clone, Default, serde::Serialize)]
struct CreationValues {
    id: String,
    scenario_id: String,
    source_version: String,
    player_username: String,
    mode: String,
    language: String,
    character: String,
    brief: String,
    instructions: String,
    boundaries: String,
    return_condition: String,
    gm_notes: String,
    published_node_ids: Vec<String>,
    auto_approve: bool,
}

impl CreationValues {
    fn from_form(form: &Form) -> Self {
        Self {
            id: form.text("id"),
            scenario_id: form.text("scenario_id"),
            source_version: form.text("source_version"),
            player_username: form.text("player_username"),
            mode: form.text("mode"),
            language: form.text("language"),
            character: form.text("character"),
            brief: form.text("brief"),
            instructions: form.text("instructions"),
            boundaries: form.text("boundaries"),
            return_condition: form.text("return_condition"),
            gm_notes: form.text("gm_notes"),
            published_node_ids: form.all("published_node_ids"),
            auto_approve: form.get("auto_approve").is_some(),
        }
    }

    /// The service's input, or the fields that do not even parse.
    fn parse(&self) -> Result<CreateAssignment, std::collections::BTreeMap<String, String>> {
        let mut e = std::collections::BTreeMap::new();
        let id = Uuid::parse_str(&self.id).map_err(|_| {
            e.insert("id".to_owned(), "the form is damaged; reload it".to_owned());
        });
        let scenario_id = Uuid::parse_str(&self.scenario_id).map_err(|_| {
            e.insert(
                "scenario_id".to_owned(),
                "no such scenario of yours".to_owned(),
            );
        });
        let source_version = self.source_version.parse::<i64>().map_err(|_| {
            e.insert(
                "source_version".to_owned(),
                "must be a published version".to_owned(),
            );
        });
        let mode = Mode::parse(&self.mode).ok_or_else(|| {
            e.insert(
                "mode".to_owned(),
                "must be absence, downtime or solo".to_owned(),
            );
        });
        let language = Language::parse(&self.language).ok_or_else(|| {
            e.insert("language".to_owned(), "must be en or pl".to_owned());
        });
        match (id, scenario_id, source_version, mode, language) {
            (Ok(id), Ok(scenario_id), Ok(source_version), Ok(mode), Ok(language)) => {
                Ok(CreateAssignment {
                    id,
                    scenario_id,
                    source_version,
                    player_username: self.player_username.clone(),
                    mode,
                    language,
                    character: self.character.clone(),
                    brief: self.brief.clone(),
                    instructions: self.instructions.clone(),
                    boundaries: self.boundaries.clone(),
                    return_condition: self.return_condition.clone(),
                    gm_notes: self.gm_notes.clone(),
                    published_node_ids: self.published_node_ids.clone(),
                    auto_approve: self.auto_approve,
                })
            }
            _ => Err(e),
        }
    }
}

/// Renders the form for `values` (the scenario and version they name) with `errors`.
async fn render_form(
    state: &AppState,
    visitor: &Visitor,
    user: &User,
    values: CreationValues,
    errors: Value,
    status: StatusCode,
) -> Response {
    let Ok(scenario_id) = Uuid::parse_str(&values.scenario_id) else {
        return visitor.api_error(ApiError::NotFound);
    };
    let version = values.source_version.parse::<i64>().unwrap_or(0);
    let (scenario, nodes) = match state
        .campaign
        .scenario_version(user, scenario_id, version)
        .await
    {
        Ok(x) => x,
        Err(e) => return visitor.api_error(e.into()),
    };
    let lang = visitor.lang;
    let published: Vec<Value> = nodes
        .iter()
        .filter(|n| n.published)
        .map(|n| {
            json!({
                "id": n.id, "title": n.title,
                "kind": text(lang, &format!("kind_{}", n.kind)),
                "checked": values.published_node_ids.contains(&n.id),
            })
        })
        .collect();
    let names = report_text(lang);
    let modes: Vec<Value> = [Mode::Absence, Mode::Downtime, Mode::Solo]
        .iter()
        .map(|m| json!({"value": m.as_str(), "name": names.mode_name(*m)}))
        .collect();
    visitor.render(
        status,
        "new_play.html",
        &format!("{} · {}", text(lang, "new_assignment"), scenario.title),
        json!({
            "v": values,
            "errors": errors,
            "nodes": published,
            "scenario": {"id": scenario.id, "title": scenario.title, "version": version},
            "modes": modes,
            "bounds": {
                "character": bounds::CHARACTER, "brief": bounds::BRIEF,
                "instructions": bounds::INSTRUCTIONS, "boundaries": bounds::BOUNDARIES,
                "return_condition": bounds::RETURN_CONDITION, "gm_notes": bounds::GM_NOTES,
            },
        }),
    )
}

/// `GET /plays/new?scenario=<id>&version=<n>`: the creation form (latest version by default)
/// with a fresh creation UUID.
pub async fn new_form(
    State(state): State<AppState>,
    visitor: Visitor,
    Query(q): Query<HashMap<String, String>>,
) -> Page {
    let signed = visitor.require()?;
    let Some(scenario_id) = q.get("scenario").and_then(|s| Uuid::parse_str(s).ok()) else {
        return Err(visitor.api_error(ApiError::NotFound));
    };
    let version = match q.get("version") {
        Some(v) => v.parse::<i64>().unwrap_or(0),
        None => match state.campaign.scenario(&signed.user, scenario_id).await {
            Ok(d) => d.scenario.version,
            Err(e) => return Err(visitor.api_error(e.into())),
        },
    };
    let values = CreationValues {
        id: state.service.random.uuid().to_string(),
        scenario_id: scenario_id.to_string(),
        source_version: version.to_string(),
        mode: "solo".into(),
        language: visitor.lang.as_str().into(),
        ..CreationValues::default()
    };
    Ok(render_form(
        &state,
        &visitor,
        &signed.user,
        values,
        json!({}),
        StatusCode::OK,
    )
    .await)
}

/// `POST /plays`: creates the assignment once per creation UUID; a resubmission of the same
/// form lands on the same assignment.
pub async fn create(State(state): State<AppState>, visitor: Visitor, body: Bytes) -> Page {
    let form = Form::parse(&body);
    let signed = visitor.check_post(&form)?;
    let values = CreationValues::from_form(&form);
    // The form's own checks, then the service's: either way the form again, with the errors.
    let errors = match values.parse() {
        Err(fields) => field_errors(visitor.lang, &fields),
        Ok(input) => match state.campaign.create(&signed.user, &input).await {
            Ok(created) => {
                return Ok(see_other(
                    &format!("/plays/{}", created.view.assignment.id),
                    &[],
                ));
            }
            Err(e) => visitor.form_errors(e.into())?,
        },
    };
    Ok(render_form(
        &state,
        &visitor,
        &signed.user,
        values,
        errors,
        StatusCode::UNPROCESSABLE_ENTITY,
    )
    .await)
}

// ---- the assignment page ----

/// The bridge of the Claude Desktop entry, pinned at the version the recipe test runs
/// (tests/recipes/package.json; a unit test holds them together).
const MCP_REMOTE: &str = "mcp-remote@0.15.1";
/// MCP Inspector 2.x, pinned likewise.
const INSPECTOR: &str = "@modelcontextprotocol/inspector@2.12.0";

/// The ready-to-paste MCP client configurations for a play token: the README's recipes
/// (Claude Desktop through the mcp-remote bridge, Claude Code, MCP Inspector 2.x).
fn client_configs(origin: &str, token: &str) -> Value {
    let url = format!("{origin}/play/mcp");
    let desktop = json!({"mcpServers": {"sidequest": {
        "command": "npx",
        "args": ["-y", MCP_REMOTE, url, "--header", "Authorization:${SIDEQUEST_AUTH}"],
        "env": {"SIDEQUEST_AUTH": format!("Bearer {token}")},
    }}});
    json!({
        "desktop": serde_json::to_string_pretty(&desktop).unwrap_or_default(),
        "code": format!("claude mcp add --transport http sidequest {url} --header \"Authorization: Bearer {token}\""),
        "inspector": format!(
            "npx {INSPECTOR} --cli {url} --transport http --header \"Authorization: Bearer {token}\" --method tools/list\n\n\
             Web UI (npx {INSPECTOR}): transport Streamable HTTP, URL {url},\n\
             Custom Headers: Authorization = Bearer {token}"
        ),
    })
}

/// What a POST adds to the page: a token shown once, or a notice.
#[derive(Debug, Default)]
struct Extra {
    issued: Option<Value>,
    notice: Option<&'static str>,
}

async fn render_play(
    state: &AppState,
    visitor: &Visitor,
    user: &User,
    id: Uuid,
    offset: i64,
    status: StatusCode,
    extra: Extra,
) -> Response {
    let campaign = &state.campaign;
    let loaded = async {
        let overview = campaign.overview(user, id).await?;
        let page = campaign.journal(user, id, offset, JOURNAL_PAGE).await?;
        let all = campaign.journal_all(user, id).await?;
        let expiry = campaign.token_expiry(user, id).await?;
        Ok::<_, crate::campaign::CampaignError>((overview, page, all, expiry))
    }
    .await;
    let (overview, page, all, expiry) = match loaded {
        Ok(x) => x,
        Err(e) => return visitor.api_error(e.into()),
    };
    let lang = visitor.lang;
    let names = report_text(lang);
    let view = &overview.detail.view;
    let a = &view.assignment;
    let gm = view.role == Role::Gm;
    let entries: Vec<Value> = page
        .entries
        .iter()
        .map(|e| {
            let kind = match e.kind {
                EventKind::Turn => "entry_turn",
                EventKind::Finish => "entry_finish",
                EventKind::Review => "entry_review",
                EventKind::GmNote => "entry_gm_note",
            };
            json!({
                "version": e.version,
                "kind": text(lang, kind),
                "gm_event": !e.kind.player_visible(),
                "action": e.player_action,
                "narration": e.narration,
                "summary": e.summary,
                // Never on a player's page, whatever the store answered.
                "gm_private": if gm { e.gm_private.clone() } else { None },
                "when": when(e.created_at),
            })
        })
        .collect();
    let consequences: Vec<Value> = overview
        .consequences
        .iter()
        .map(|c| {
            json!({
                "turn": c.version,
                "category": names.category_name(c.category),
                "description": c.description,
                "status": names.consequence_status_name(c.status),
                "status_class": c.status.as_str(),
                "note": c.gm_note,
            })
        })
        .collect();
    let words = Words {
        turn: text(lang, "tl_turn"),
        proposed: text(lang, "tl_proposed"),
        finish: text(lang, "tl_finish"),
        decision: text(lang, "tl_decision"),
        approved: text(lang, "tl_approved"),
        rejected: text(lang, "tl_rejected"),
        title: text(lang, "timeline"),
    };
    let steps = timeline::steps(&all, &overview.consequences);
    let prev = (offset > 0).then(|| (offset - JOURNAL_PAGE).max(0));
    let next = (offset + JOURNAL_PAGE < page.total).then_some(offset + JOURNAL_PAGE);
    visitor.render(
        status,
        "play.html",
        &format!("{} · {}", a.character, view.scenario_title.clone().unwrap_or_default()),
        json!({
            "a": {
                "id": a.id,
                "language": a.language.as_str(),
                "character": a.character,
                "brief": a.brief,
                "instructions": a.instructions,
                "boundaries": a.boundaries,
                "return_condition": a.return_condition,
                "gm_notes": if gm { Some(a.gm_notes.clone()) } else { None },
                "status": names.status_name(a.status),
                "version": a.version,
                "mode": names.mode_name(a.mode),
                "scenario": view.scenario_title,
                "pending": overview.detail.pending_consequences,
            },
            "is_gm": gm,
            "entries": entries,
            "journal": {
                "total": page.total,
                "from": if page.entries.is_empty() { 0 } else { offset + 1 },
                "to": offset + page.entries.len() as i64,
                "prev": prev, "next": next,
            },
            "consequences": consequences,
            "timeline_svg": timeline::svg(&steps, &words, "tl-text"),
            "timeline_steps": steps.iter().map(|s| timeline::describe(s, &words)).collect::<Vec<_>>(),
            "token": {
                "expires": expiry.map(when),
                "issued": extra.issued,
            },
            "notice": extra.notice.map(|k| text(lang, k)),
        }),
    )
}

/// `GET /plays/{id}?offset=n`: the assignment page for its GM or its player (404 otherwise).
pub async fn page(
    State(state): State<AppState>,
    visitor: Visitor,
    Path(id): Path<String>,
    Query(q): Query<HashMap<String, String>>,
) -> Page {
    let signed = visitor.require()?;
    let id = visitor.path_id(&id)?;
    let offset = match q.get("offset").map(|o| o.parse::<i64>()) {
        None => 0,
        Some(Ok(o)) if o >= 0 => o,
        Some(_) => {
            return Err(visitor.api_error(ApiError::field(
                "offset",
                "must be an integer of at least 0",
            )));
        }
    };
    let notice = q.contains_key("revoked").then_some("token_revoked_msg");
    Ok(render_play(
        &state,
        &visitor,
        &signed.user,
        id,
        offset,
        StatusCode::OK,
        Extra {
            issued: None,
            notice,
        },
    )
    .await)
}

/// `POST /plays/{id}/token`: a new play token (the previous one stops working), shown on this
/// answer only, with the MCP client configurations.
pub async fn generate_token(
    State(state): State<AppState>,
    visitor: Visitor,
    Path(id): Path<String>,
    body: Bytes,
) -> Page {
    let (_, signed, id) = visitor.post_on(&body, &id)?;
    let issued = visitor.ok_or_page(state.campaign.generate_token(&signed.user, id).await)?;
    let shown = json!({
        "token": issued.token,
        "expires": when(issued.expires_at),
        "configs": client_configs(&visitor.origin, &issued.token),
    });
    let extra = Extra {
        issued: Some(shown),
        notice: None,
    };
    Ok(render_play(
        &state,
        &visitor,
        &signed.user,
        id,
        0,
        StatusCode::CREATED,
        extra,
    )
    .await)
}

/// `POST /plays/{id}/token/revoke`: the token stops working at once.
pub async fn revoke_token(
    State(state): State<AppState>,
    visitor: Visitor,
    Path(id): Path<String>,
    body: Bytes,
) -> Page {
    let (_, signed, id) = visitor.post_on(&body, &id)?;
    visitor.ok_or_page(state.campaign.revoke_token(&signed.user, id).await)?;
    Ok(see_other(&format!("/plays/{id}?revoked=1#token"), &[]))
}

// ---- report ----

/// What both report answers read: the path's assignment id, the report's language (`lang`
/// if given, en or pl, else the page's) and the report in it, as the signed-in visitor may
/// see it.
async fn read_report(
    state: &AppState,
    visitor: &Visitor,
    id: &str,
    q: &HashMap<String, String>,
) -> Result<(Uuid, Language, String), Response> {
    let signed = visitor.require()?;
    let id = visitor.path_id(id)?;
    let language = match q.get("lang") {
        None => visitor.lang,
        Some(l) => Language::parse(l)
            .ok_or_else(|| visitor.api_error(ApiError::field("lang", "must be en or pl")))?,
    };
    let md = visitor.ok_or_page(state.campaign.report(&signed.user, id, language).await)?;
    Ok((id, language, md))
}

/// Markdown as HTML; raw HTML in the text is shown as text, never interpreted, and headings
/// move one level down (the page's own title is the `<h1>`).
pub fn markdown_html(markdown: &str) -> String {
    use pulldown_cmark::{Event, HeadingLevel, Parser, Tag, TagEnd, html};
    let lower = |l: HeadingLevel| match l {
        HeadingLevel::H1 => HeadingLevel::H2,
        HeadingLevel::H2 => HeadingLevel::H3,
        HeadingLevel::H3 => HeadingLevel::H4,
        HeadingLevel::H4 => HeadingLevel::H5,
        HeadingLevel::H5 | HeadingLevel::H6 => HeadingLevel::H6,
    };
    let events = Parser::new(markdown).map(|e| match e {
        Event::Html(t) | Event::InlineHtml(t) => Event::Text(t),
        Event::Start(Tag::Heading {
            level,
            id,
            classes,
            attrs,
        }) => Event::Start(Tag::Heading {
            level: lower(level),
            id,
            classes,
            attrs,
        }),
        Event::End(TagEnd::Heading(level)) => Event::End(TagEnd::Heading(lower(level))),
        other => other,
    });
    let mut out = String::new();
    html::push_html(&mut out, events);
    out
}

/// `GET /plays/{id}/report?lang=en|pl`: the report as a page, filtered by role.
pub async fn report(
    State(state): State<AppState>,
    visitor: Visitor,
    Path(id): Path<String>,
    Query(q): Query<HashMap<String, String>>,
) -> Page {
    let (id, language, md) = read_report(&state, &visitor, &id, &q).await?;
    Ok(visitor.render(
        StatusCode::OK,
        "report.html",
        text(visitor.lang, "report_title"),
        json!({
            "id": id,
            "report_lang": language.as_str(),
            "html": markdown_html(&md),
        }),
    ))
}

/// `GET /plays/{id}/report.md?lang=en|pl`: the Markdown report as a file.
pub async fn report_download(
    State(state): State<AppState>,
    visitor: Visitor,
    Path(id): Path<String>,
    Query(q): Query<HashMap<String, String>>,
) -> Page {
    let (id, language, md) = read_report(&state, &visitor, &id, &q).await?;
    let mut response = (StatusCode::OK, md).into_response();
    let h = response.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/markdown; charset=utf-8"),
    );
    let name = format!(
        "attachment; filename=\"sidequest-report-{id}-{}.md\"",
        language.as_str()
    );
    if let Ok(v) = HeaderValue::from_str(&name) {
        h.insert(header::CONTENT_DISPOSITION, v);
    }
    crate::web::page::secure_headers(h);
    Ok(response)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markdown_keeps_raw_html_as_text() {
        let html = markdown_html(
            "# Title\n\n## Part\n\nA <b onclick=\"x()\">bold</b> and *this*\n\n<script>alert(1)</script>\n",
        );
        assert!(html.contains("<h2>Title</h2>"), "{html}");
        assert!(html.contains("<h3>Part</h3>"), "{html}");
        assert!(html.contains("&lt;b onclick=\"x()\"&gt;bold"), "{html}");
        assert!(html.contains("<em>this</em>"), "{html}");
        assert!(html.contains("&lt;script&gt;"), "{html}");
        assert!(
            !html.contains("<script>") && !html.contains("<b "),
            "{html}"
        );
    }

    #[test]
    fn client_configs_name_the_door_and_the_token() {
        let c = client_configs("http://127.0.0.1:9", "sqp_abc");
        assert!(
            c["desktop"]
                .as_str()
                .unwrap()
                .contains("http://127.0.0.1:9/play/mcp")
        );
        assert!(c["desktop"].as_str().unwrap().contains("Bearer sqp_abc"));
        assert!(
            c["code"].as_str().unwrap().starts_with(
                "claude mcp add --transport http sidequest http://127.0.0.1:9/play/mcp"
            )
        );
        let desktop: Value = serde_json::from_str(c["desktop"].as_str().unwrap()).unwrap();
        assert_eq!(
            desktop["mcpServers"]["sidequest"]["args"][1],
            "mcp-remote@0.15.1"
        );
        let inspector = c["inspector"].as_str().unwrap();
        assert!(
            inspector.starts_with(
                "npx @modelcontextprotocol/inspector@2.12.0 --cli http://127.0.0.1:9/play/mcp --transport http --header \"Authorization: Bearer sqp_abc\" --method tools/list"
            ),
            "{inspector}"
        );
        assert!(
            inspector.contains("Custom Headers: Authorization = Bearer sqp_abc"),
            "{inspector}"
        );
    }

    /// The panel's pins are the ones the recipe test installs and runs.
    #[test]
    fn the_pins_are_the_recipe_tests_pins() {
        let lock: Value =
            serde_json::from_str(include_str!("../../../../tests/recipes/package.json")).unwrap();
        let deps = &lock["dependencies"];
        assert_eq!(
            MCP_REMOTE,
            format!("mcp-remote@{}", deps["mcp-remote"].as_str().unwrap())
        );
        assert_eq!(
            INSPECTOR,
            format!(
                "@modelcontextprotocol/inspector@{}",
                deps["@modelcontextprotocol/inspector"].as_str().unwrap()
            )
        );
    }
}
