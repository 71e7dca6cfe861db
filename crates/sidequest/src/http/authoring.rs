//! `/api/scenarios/…` (a GM's scenarios: draft nodes, publishing) and `/api/author-tokens/…`
//! (personal tokens for the author door `/mcp`). Thin handlers over `CampaignService` whose
//! answers [`crate::render`] writes.

use axum::Json;
use axum::extract::State;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use serde_json::Value;
use uuid::Uuid;

use crate::campaign::NodeInput;
use crate::http::error::{ApiJson, ApiPath, ApiResult};
use crate::http::session::Session;
use crate::render;
use crate::state::AppState;

/// 201 with a `Location` header.
fn created(location: String, body: Value) -> Response {
    let mut response = (StatusCode::CREATED, Json(body)).into_response();
    if let Ok(v) = HeaderValue::from_str(&location) {
        response.headers_mut().insert(header::LOCATION, v);
    }
    response
}

/// The body of `POST /api/scenarios/`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NewScenarioBody {
    pub title: String,
}

/// `GET /api/scenarios/`: the GM's scenarios.
pub async fn list(State(state): State<AppState>, session: Session) -> ApiResult<Json<Value>> {
    let list = state.campaign.scenarios(&session.user).await?;
    Ok(Json(render::scenarios(&list)))
}

/// `POST /api/scenarios/`: an empty scenario, not yet published (version 0).
pub async fn create(
    State(state): State<AppState>,
    session: Session,
    ApiJson(body): ApiJson<NewScenarioBody>,
) -> ApiResult<Response> {
    let scenario = state
        .campaign
        .create_scenario(&session.user, &body.title)
        .await?;
    let location = format!("/api/scenarios/{}/", scenario.id);
    Ok(created(location, render::scenario(&scenario)))
}

/// `GET /api/scenarios/{id}/`: draft nodes and the latest published version's nodes.
pub async fn get(
    State(state): State<AppState>,
    session: Session,
    ApiPath(id): ApiPath<Uuid>,
) -> ApiResult<Json<Value>> {
    let detail = state.campaign.scenario(&session.user, id).await?;
    Ok(Json(render::scenario_detail(&detail)))
}

/// `PUT /api/scenarios/{id}/nodes/{node_id}/`: creates or replaces a draft node.
pub async fn put_node(
    State(state): State<AppState>,
    session: Session,
    ApiPath((id, node_id)): ApiPath<(Uuid, String)>,
    ApiJson(body): ApiJson<NodeInput>,
) -> ApiResult<Json<Value>> {
    let node = state
        .campaign
        .put_node(&session.user, id, &node_id, &body)
        .await?;
    Ok(Json(render::node(&node)))
}

/// `DELETE /api/scenarios/{id}/nodes/{node_id}/`: removes a draft node.
pub async fn delete_node(
    State(state): State<AppState>,
    session: Session,
    ApiPath((id, node_id)): ApiPath<(Uuid, String)>,
) -> ApiResult<Json<Value>> {
    let deleted = state
        .campaign
        .delete_node(&session.user, id, &node_id)
        .await?;
    Ok(Json(render::node_deleted(&deleted)))
}

/// `POST /api/scenarios/{id}/publish/`: freezes the draft as the next `source_version`.
pub async fn publish(
    State(state): State<AppState>,
    session: Session,
    ApiPath(id): ApiPath<Uuid>,
) -> ApiResult<Json<Value>> {
    let published = state.campaign.publish(&session.user, id).await?;
    Ok(Json(render::published(&published)))
}

/// The body of `POST /api/author-tokens/`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NewAuthorTokenBody {
    pub name: String,
}

/// `POST /api/author-tokens/`: a personal token for `/mcp`, shown once.
pub async fn create_author_token(
    State(state): State<AppState>,
    session: Session,
    ApiJson(body): ApiJson<NewAuthorTokenBody>,
) -> ApiResult<Response> {
    let issued = state
        .campaign
        .create_author_token(&session.user, &body.name)
        .await?;
    let location = format!("/api/author-tokens/{}/", issued.id);
    Ok(created(location, render::author_token_issued(&issued)))
}

/// `GET /api/author-tokens/`: the user's author tokens (never the tokens themselves).
pub async fn author_tokens(
    State(state): State<AppState>,
    session: Session,
) -> ApiResult<Json<Value>> {
    let items = state.campaign.author_tokens(&session.user).await?;
    Ok(Json(render::author_tokens(&items)))
}

/// `DELETE /api/author-tokens/{id}/`: revokes one of the user's author tokens.
pub async fn revoke_author_token(
    State(state): State<AppState>,
    session: Session,
    ApiPath(id): ApiPath<Uuid>,
) -> ApiResult<Json<Value>> {
    let revoked = state
        .campaign
        .revoke_author_token(&session.user, id)
        .await?;
    Ok(Json(render::author_token_revoked(&revoked)))
}
