//! The home page: the signed-in person's assignments (as GM and as player), newest first,
//! each with status, version, pending consequences and last activity; a GM's scenarios and
//! the new-scenario form.

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;
use serde_json::{Value, json};

use crate::campaign::Role;
use crate::domain::Scenario;
use crate::i18n::report_text;
use crate::i18n::web::text;
use crate::state::AppState;
use crate::web::page::{Page, Visitor, when};

/// `GET /`: home, or the sign-in page for a visitor without a session.
pub async fn home(State(state): State<AppState>, visitor: Visitor) -> Page {
    let signed = visitor.require()?;
    Ok(render(
        &state,
        &visitor,
        &signed.user,
        StatusCode::OK,
        "",
        json!({}),
    )
    .await)
}

/// The home page, with the new-scenario form holding `title` and `errors`.
pub async fn render(
    state: &AppState,
    visitor: &Visitor,
    user: &crate::domain::User,
    status: StatusCode,
    title: &str,
    errors: Value,
) -> Response {
    let lang = visitor.lang;
    let names = report_text(lang);
    let list = match state.campaign.list(user).await {
        Ok(l) => l,
        Err(e) => return visitor.api_error(e.into()),
    };
    let mut gm_rows = Vec::new();
    let mut player_rows = Vec::new();
    for view in list {
        let a = &view.assignment;
        // The list answers no counts; the assignment's detail does (up to 200 rows).
        let pending = match state.campaign.get(user, a.id).await {
            Ok(d) => d.pending_consequences,
            Err(e) => return visitor.api_error(e.into()),
        };
        let row = json!({
            "id": a.id,
            "character": a.character,
            "mode": names.mode_name(a.mode),
            "status": names.status_name(a.status),
            "version": a.version,
            "pending": pending,
            "activity": when(a.updated_at),
        });
        match view.role {
            Role::Gm => gm_rows.push(row),
            Role::Player => player_rows.push(row),
        }
    }
    let scenarios: Vec<Scenario> = if user.is_gm {
        match state.campaign.scenarios(user).await {
            Ok(s) => s,
            Err(e) => return visitor.api_error(e.into()),
        }
    } else {
        Vec::new()
    };
    let mut groups = Vec::new();
    if user.is_gm || !gm_rows.is_empty() {
        groups.push(json!({"id": "gm", "heading": text(lang, "as_gm"), "rows": gm_rows}));
    }
    groups.push(json!({"id": "player", "heading": text(lang, "as_player"), "rows": player_rows}));
    visitor.render(
        status,
        "home.html",
        text(lang, "home_title"),
        json!({
            "groups": groups,
            "scenarios": scenarios.iter().map(|s| json!({"id": s.id, "title": s.title, "version": s.version})).collect::<Vec<_>>(),
            "title_value": title,
            "errors": errors,
        }),
    )
}
