//! The REST API (`/api/…`) humans use through the web: sessions and CSRF, assignments, review,
//! reports, scenario authoring and author tokens. Handlers are thin; access rules live in
//! `CampaignService`. Documented in `docs/rest-api.md`.

mod authoring;
pub mod error;
mod plays;
pub mod session;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::http::{HeaderValue, header};
use axum::response::Response;
use axum::routing::{get, post, put};

use crate::http::error::ApiError;
use crate::state::AppState;

/// The largest REST request body, in bytes (the contract's 300 KB, as on the MCP doors).
pub const MAX_BODY_BYTES: usize = 307_200;

async fn not_found() -> ApiError {
    ApiError::NotFound
}

async fn method_not_allowed() -> ApiError {
    ApiError::MethodNotAllowed
}

/// Responses carry sessions, tokens and private notes: never cache them.
async fn no_store(mut response: Response) -> Response {
    response
        .headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

/// Every REST route, under `/api`.
pub fn router(state: AppState) -> Router {
    session::dummy_hash();
    let api = Router::new()
        .route("/auth/login", post(session::login))
        .route("/auth/logout", post(session::logout))
        .route("/auth/me", get(session::me))
        .route("/plays/", get(plays::list).post(plays::create))
        .route("/plays/{id}/", get(plays::get))
        .route(
            "/plays/{id}/access/",
            post(plays::generate_token).delete(plays::revoke_token),
        )
        .route("/plays/{id}/journal/", get(plays::journal))
        .route("/plays/{id}/consequences/", get(plays::consequences))
        .route("/plays/{id}/review/", post(plays::review))
        .route("/plays/{id}/report/", get(plays::report))
        .route("/scenarios/", get(authoring::list).post(authoring::create))
        .route("/scenarios/{id}/", get(authoring::get))
        .route(
            "/scenarios/{id}/nodes/{node_id}/",
            put(authoring::put_node).delete(authoring::delete_node),
        )
        .route("/scenarios/{id}/publish/", post(authoring::publish))
        .route(
            "/author-tokens/",
            get(authoring::author_tokens).post(authoring::create_author_token),
        )
        .route(
            "/author-tokens/{id}/",
            axum::routing::delete(authoring::revoke_author_token),
        )
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
        .layer(axum::middleware::map_response(no_store))
        .with_state(state);
    Router::new().nest("/api", api)
}
