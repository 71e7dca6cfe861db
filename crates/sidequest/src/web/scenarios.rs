//! The GM's scenario pages — create a scenario, the editor (draft nodes added, edited and
//! deleted; publish; earlier versions) — and the author tokens page (list, create shown once,
//! revoke). Each POST answers a 303 back to its page, or the page again with the errors at
//! their fields.

use axum::body::Bytes;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::Response;
use serde_json::{Value, json};
use std::collections::HashMap;
use uuid::Uuid;

use crate::campaign::{NODE_KINDS, NODE_TEXT_CHARS, NodeInput, TITLE_CHARS};
use crate::domain::{Node, User};
use crate::http::error::ApiError;
use crate::i18n::web::text;
use crate::state::AppState;
use crate::web::home;
use crate::web::page::{Form, Page, Visitor, see_other, when};

/// `POST /scenarios`: creates an empty scenario and opens its editor.
pub async fn create(State(state): State<AppState>, visitor: Visitor, body: Bytes) -> Page {
    let form = Form::parse(&body);
    let signed = visitor.check_post(&form)?;
    let title = form.text("title");
    match state.campaign.create_scenario(&signed.user, &title).await {
        Ok(s) => Ok(see_other(&format!("/scenarios/{}", s.id), &[])),
        Err(e) => {
            let errors = visitor.form_errors(e.into())?;
            Ok(home::render(
                &state,
                &visitor,
                &signed.user,
                StatusCode::UNPROCESSABLE_ENTITY,
                &title,
                errors,
            )
            .await)
        }
    }
}

/// The kinds with their names in the page's language.
fn kinds(visitor: &Visitor) -> Vec<Value> {
    NODE_KINDS
        .iter()
        .map(|k| json!({"value": k, "name": text(visitor.lang, &format!("kind_{k}"))}))
        .collect()
}

fn node_json(n: &Node) -> Value {
    json!({
        "id": n.id, "kind": n.kind, "title": n.title, "published": n.published,
        "public_text": n.public_text, "gm_text": n.gm_text,
    })
}

/// The editor with `form` (the node being written, with its `errors`) and a `notice`.
#[allow(clippy::too_many_arguments)] // One page, many optional parts; a struct would only rename them.
async fn render_editor(
    state: &AppState,
    visitor: &Visitor,
    user: &User,
    id: Uuid,
    status: StatusCode,
    form: Value,
    errors: Value,
    notice: Option<&str>,
) -> Response {
    let detail = match state.campaign.scenario(user, id).await {
        Ok(d) => d,
        Err(e) => return visitor.api_error(e.into()),
    };
    let s = &detail.scenario;
    visitor.render(
        status,
        "scenario.html",
        &s.title,
        json!({
            "scenario": {"id": s.id, "version": s.version},
            "nodes": detail.draft_nodes.iter().map(node_json).collect::<Vec<_>>(),
            "versions": (1..=s.version).rev().collect::<Vec<_>>(),
            "kinds": kinds(visitor),
            "form": form,
            "errors": errors,
            "notice": notice,
            "bounds": {"title": TITLE_CHARS, "text": NODE_TEXT_CHARS},
        }),
    )
}

/// The editor again after a refused POST: 422, the node form as it is to be shown and the
/// errors at their fields.
async fn editor_again(
    state: &AppState,
    visitor: &Visitor,
    user: &User,
    id: Uuid,
    form: Value,
    errors: Value,
) -> Response {
    let status = StatusCode::UNPROCESSABLE_ENTITY;
    render_editor(state, visitor, user, id, status, form, errors, None).await
}

fn empty_node_form() -> Value {
    json!({"id": "", "kind": "scene", "title": "", "published": true, "public_text": "", "gm_text": "", "existing": false})
}

/// `GET /scenarios/{id}?edit=<node>`: the editor, with one node loaded into the form.
pub async fn editor(
    State(state): State<AppState>,
    visitor: Visitor,
    Path(id): Path<String>,
    Query(q): Query<HashMap<String, String>>,
) -> Page {
    let signed = visitor.require()?;
    let id = visitor.path_id(&id)?;
    let mut form = empty_node_form();
    if let Some(node) = q.get("edit") {
        let d = visitor.ok_or_page(state.campaign.scenario(&signed.user, id).await)?;
        match d.draft_nodes.iter().find(|n| &n.id == node) {
            Some(n) => {
                form = node_json(n);
                form["existing"] = json!(true);
            }
            None => return Err(visitor.api_error(ApiError::NotFound)),
        }
    }
    let notice = q.get("done").map(|d| match d.as_str() {
        "deleted" => text(visitor.lang, "deleted"),
        "published" => text(visitor.lang, "published_ok"),
        _ => text(visitor.lang, "saved"),
    });
    Ok(render_editor(
        &state,
        &visitor,
        &signed.user,
        id,
        StatusCode::OK,
        form,
        json!({}),
        notice,
    )
    .await)
}

/// `POST /scenarios/{id}/nodes`: creates or replaces the draft node the form names.
pub async fn save_node(
    State(state): State<AppState>,
    visitor: Visitor,
    Path(id): Path<String>,
    body: Bytes,
) -> Page {
    let (form, signed, id) = visitor.post_on(&body, &id)?;
    let node_id = form.text("id");
    let input = NodeInput {
        kind: form.text("kind"),
        title: form.text("title"),
        published: form.get("published").is_some(),
        public_text: form.text("public_text"),
        gm_text: form.text("gm_text"),
    };
    match state
        .campaign
        .put_node(&signed.user, id, &node_id, &input)
        .await
    {
        Ok(_) => Ok(see_other(&format!("/scenarios/{id}?done=saved"), &[])),
        Err(e) => {
            let errors = visitor.form_errors(e.into())?;
            let values = json!({
                "id": node_id, "kind": input.kind, "title": input.title,
                "published": input.published, "public_text": input.public_text,
                "gm_text": input.gm_text, "existing": form.get("existing").is_some(),
            });
            Ok(editor_again(&state, &visitor, &signed.user, id, values, errors).await)
        }
    }
}

/// `POST /scenarios/{id}/nodes/{node}/delete`.
pub async fn delete_node(
    State(state): State<AppState>,
    visitor: Visitor,
    Path((id, node)): Path<(String, String)>,
    body: Bytes,
) -> Page {
    let (_, signed, id) = visitor.post_on(&body, &id)?;
    visitor.ok_or_page(state.campaign.delete_node(&signed.user, id, &node).await)?;
    Ok(see_other(&format!("/scenarios/{id}?done=deleted"), &[]))
}

/// `POST /scenarios/{id}/publish`: freezes the draft as the next version.
pub async fn publish(
    State(state): State<AppState>,
    visitor: Visitor,
    Path(id): Path<String>,
    body: Bytes,
) -> Page {
    let (_, signed, id) = visitor.post_on(&body, &id)?;
    match state.campaign.publish(&signed.user, id).await {
        Ok(_) => Ok(see_other(&format!("/scenarios/{id}?done=published"), &[])),
        Err(e) => {
            let errors = visitor.form_errors(e.into())?;
            let form = empty_node_form();
            Ok(editor_again(&state, &visitor, &signed.user, id, form, errors).await)
        }
    }
}

/// `GET /scenarios/{id}/versions/{v}`: one published version's nodes (read only).
pub async fn version(
    State(state): State<AppState>,
    visitor: Visitor,
    Path((id, v)): Path<(String, String)>,
) -> Page {
    let signed = visitor.require()?;
    let id = visitor.path_id(&id)?;
    let Ok(v) = v.parse::<i64>() else {
        return Err(visitor.api_error(ApiError::NotFound));
    };
    let (s, nodes) =
        visitor.ok_or_page(state.campaign.scenario_version(&signed.user, id, v).await)?;
    Ok(visitor.render(
        StatusCode::OK,
        "version.html",
        &format!("{} · {} {v}", s.title, text(visitor.lang, "version")),
        json!({
            "scenario": {"id": s.id, "version": s.version},
            "shown": v,
            "nodes": nodes.iter().map(|n| {
                let mut j = node_json(n);
                j["kind_name"] = json!(text(visitor.lang, &format!("kind_{}", n.kind)));
                j
            }).collect::<Vec<_>>(),
        }),
    ))
}

// ---- author tokens ----

#[allow(clippy::too_many_arguments)] // As render_editor.
async fn render_tokens(
    state: &AppState,
    visitor: &Visitor,
    user: &User,
    status: StatusCode,
    issued: Option<Value>,
    name: &str,
    errors: Value,
    notice: Option<&str>,
) -> Response {
    if !user.is_gm {
        return visitor.api_error(ApiError::Forbidden(
            "only game masters have author tokens".into(),
        ));
    }
    let tokens = match state.campaign.author_tokens(user).await {
        Ok(t) => t,
        Err(e) => return visitor.api_error(e.into()),
    };
    let now = state.service.clock.now_millis();
    let lang = visitor.lang;
    let rows: Vec<Value> = tokens
        .iter()
        .map(|t| {
            let state = if t.revoked_at.is_some() {
                text(lang, "at_revoked")
            } else if t.expires_at <= now {
                text(lang, "at_expired")
            } else {
                text(lang, "at_live")
            };
            json!({
                "id": t.id, "name": t.name, "created": when(t.created_at),
                "expires": when(t.expires_at), "state": state,
                "live": t.revoked_at.is_none() && t.expires_at > now,
            })
        })
        .collect();
    visitor.render(
        status,
        "author_tokens.html",
        text(lang, "author_tokens"),
        json!({
            "tokens": rows, "issued": issued, "name": name, "errors": errors,
            "notice": notice, "mcp_url": format!("{}/mcp", visitor.origin),
        }),
    )
}

/// `GET /author-tokens` (GM).
pub async fn author_tokens(
    State(state): State<AppState>,
    visitor: Visitor,
    Query(q): Query<HashMap<String, String>>,
) -> Page {
    let signed = visitor.require()?;
    let notice = q
        .contains_key("revoked")
        .then(|| text(visitor.lang, "at_revoked_msg"));
    Ok(render_tokens(
        &state,
        &visitor,
        &signed.user,
        StatusCode::OK,
        None,
        "",
        json!({}),
        notice,
    )
    .await)
}

/// `POST /author-tokens`: a new token, its plaintext shown on this answer only.
pub async fn create_author_token(
    State(state): State<AppState>,
    visitor: Visitor,
    body: Bytes,
) -> Page {
    let form = Form::parse(&body);
    let signed = visitor.check_post(&form)?;
    let name = form.text("name");
    // The new token shown once with an empty form, or the form again with the name typed.
    let (status, shown, typed, errors) = match state
        .campaign
        .create_author_token(&signed.user, &name)
        .await
    {
        Ok(issued) => {
            let shown = json!({"name": issued.name, "token": issued.token, "expires": when(issued.expires_at)});
            (StatusCode::CREATED, Some(shown), "", json!({}))
        }
        Err(e) => {
            let errors = visitor.form_errors(e.into())?;
            (
                StatusCode::UNPROCESSABLE_ENTITY,
                None,
                name.as_str(),
                errors,
            )
        }
    };
    Ok(render_tokens(
        &state,
        &visitor,
        &signed.user,
        status,
        shown,
        typed,
        errors,
        None,
    )
    .await)
}

/// `POST /author-tokens/{id}/revoke`.
pub async fn revoke_author_token(
    State(state): State<AppState>,
    visitor: Visitor,
    Path(id): Path<String>,
    body: Bytes,
) -> Page {
    let (_, signed, id) = visitor.post_on(&body, &id)?;
    visitor.ok_or_page(state.campaign.revoke_author_token(&signed.user, id).await)?;
    Ok(see_other("/author-tokens?revoked=1", &[]))
}
