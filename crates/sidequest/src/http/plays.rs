//! `/api/plays/…`: the contract's eight REST endpoints for assignments (plus their
//! consequences). Each handler extracts, calls one `CampaignService` method and answers its
//! result as [`crate::render`] writes it; who may do what is the campaign service's business.

use std::collections::HashMap;

use axum::Json;
use axum::extract::{Query, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::Value;
use uuid::Uuid;

use crate::domain::Language;
use crate::domain::assignment::CreateAssignment;
use crate::domain::fields::FieldErrors;
use crate::domain::play::limits;
use crate::domain::review::ReviewArgs;
use crate::http::error::{ApiError, ApiJson, ApiPath, ApiResult};
use crate::http::session::Session;
use crate::render;
use crate::state::AppState;

/// `GET /api/plays/`: up to 200 most recent assignments the user is GM or player of.
pub async fn list(State(state): State<AppState>, session: Session) -> ApiResult<Json<Value>> {
    let items = state.campaign.list(&session.user).await?;
    Ok(Json(render::assignments(&items)))
}

/// `POST /api/plays/`: 201 when created, 200 for an identical retry of the same id.
pub async fn create(
    State(state): State<AppState>,
    session: Session,
    ApiJson(body): ApiJson<CreateAssignment>,
) -> ApiResult<Response> {
    let outcome = state.campaign.create(&session.user, &body).await?;
    let assignment = render::assignment(&outcome.view);
    if !outcome.created {
        return Ok(Json(assignment).into_response());
    }
    let mut response = (StatusCode::CREATED, Json(assignment)).into_response();
    if let Ok(location) = HeaderValue::from_str(&format!("/api/plays/{}/", body.id)) {
        response.headers_mut().insert(header::LOCATION, location);
    }
    Ok(response)
}

/// `GET /api/plays/{id}/`: GM notes only for the GM.
pub async fn get(
    State(state): State<AppState>,
    session: Session,
    ApiPath(id): ApiPath<Uuid>,
) -> ApiResult<Json<Value>> {
    let detail = state.campaign.get(&session.user, id).await?;
    Ok(Json(render::assignment_detail(&detail)))
}

/// `POST /api/plays/{id}/access/`: a new play token, shown once; the previous one is revoked.
pub async fn generate_token(
    State(state): State<AppState>,
    session: Session,
    ApiPath(id): ApiPath<Uuid>,
) -> ApiResult<Response> {
    let issued = state.campaign.generate_token(&session.user, id).await?;
    Ok((
        StatusCode::CREATED,
        Json(render::play_token_issued(&issued)),
    )
        .into_response())
}

/// `DELETE /api/plays/{id}/access/`: revokes the assignment's play token.
pub async fn revoke_token(
    State(state): State<AppState>,
    session: Session,
    ApiPath(id): ApiPath<Uuid>,
) -> ApiResult<Json<Value>> {
    let revoked = state.campaign.revoke_token(&session.user, id).await?;
    Ok(Json(render::play_token_revoked(&revoked)))
}

/// An optional integer query parameter within bounds.
fn bounded(
    query: &HashMap<String, String>,
    name: &str,
    default: i64,
    min: i64,
    max: i64,
    e: &mut FieldErrors,
) -> i64 {
    let Some(raw) = query.get(name) else {
        return default;
    };
    match raw.parse::<i64>() {
        Ok(n) if (min..=max).contains(&n) => n,
        _ if max == i64::MAX => {
            e.add(name, format!("must be an integer of at least {min}"));
            default
        }
        _ => {
            e.add(name, format!("must be an integer from {min} to {max}"));
            default
        }
    }
}

/// The query string as a map; one that cannot be parsed at all is a 422 on `query`.
type RawQuery = Result<Query<HashMap<String, String>>, axum::extract::rejection::QueryRejection>;

fn query_map(query: RawQuery) -> ApiResult<HashMap<String, String>> {
    query
        .map(|Query(q)| q)
        .map_err(|r| ApiError::field("query", r.body_text()))
}

/// `GET /api/plays/{id}/journal/?offset=0&limit=10`: one role-filtered page.
pub async fn journal(
    State(state): State<AppState>,
    session: Session,
    ApiPath(id): ApiPath<Uuid>,
    query: RawQuery,
) -> ApiResult<Json<Value>> {
    let query = query_map(query)?;
    let mut e = FieldErrors::new();
    let offset = bounded(&query, "offset", 0, 0, i64::MAX, &mut e);
    let limit = bounded(
        &query,
        "limit",
        limits::JOURNAL_PAGE_DEFAULT,
        1,
        limits::JOURNAL_PAGE_MAX,
        &mut e,
    );
    e.into_result()?;
    let page = state
        .campaign
        .journal(&session.user, id, offset, limit)
        .await?;
    Ok(Json(render::journal(&page)))
}

/// `GET /api/plays/{id}/consequences/`: every consequence and its decision.
pub async fn consequences(
    State(state): State<AppState>,
    session: Session,
    ApiPath(id): ApiPath<Uuid>,
) -> ApiResult<Json<Value>> {
    let items = state.campaign.consequences(&session.user, id).await?;
    Ok(Json(render::consequences(&items)))
}

/// `POST /api/plays/{id}/review/`: the GM's versioned, retry-safe decisions.
pub async fn review(
    State(state): State<AppState>,
    session: Session,
    ApiPath(id): ApiPath<Uuid>,
    ApiJson(body): ApiJson<ReviewArgs>,
) -> ApiResult<Json<Value>> {
    let applied = state.campaign.review(&session.user, id, body).await?;
    Ok(Json(render::review(applied)))
}

/// `GET /api/plays/{id}/report/?lang=en|pl`: the Markdown report (English without `lang`).
pub async fn report(
    State(state): State<AppState>,
    session: Session,
    ApiPath(id): ApiPath<Uuid>,
    query: RawQuery,
) -> ApiResult<Response> {
    let query = query_map(query)?;
    let language = match query.get("lang") {
        None => Language::En,
        Some(l) => Language::parse(l).ok_or_else(|| ApiError::field("lang", "must be en or pl"))?,
    };
    let markdown = state.campaign.report(&session.user, id, language).await?;
    Ok((
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("text/markdown; charset=utf-8"),
        )],
        markdown,
    )
        .into_response())
}
