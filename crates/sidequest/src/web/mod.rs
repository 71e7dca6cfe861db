//! The pages people use in a browser: sign in and out, home, the scenario editor, the new
//! assignment form, the assignment page with its journal, consequences, timeline and token
//! panel, the review queue, the report and the author tokens. Server-rendered from the
//! templates in `templates/`; every page works without JavaScript (one small script adds
//! character counters and copy buttons); every form carries the session's CSRF token. Access
//! rules are `CampaignService`'s: each handler calls it and renders its answer. This module
//! routes and serves the two static files; what every page shares is [`page`]'s.

// A page handler answers a page either way: its early returns carry the error page itself
// (an axum `Response`), which is what the handler returns, so boxing it would only add a step.
#![allow(clippy::result_large_err)]

mod home;
pub mod page;
mod plays;
mod review;
mod scenarios;
mod signin;
pub mod timeline;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};

use crate::http::MAX_BODY_BYTES;
use crate::state::AppState;

/// The stylesheet every page links.
pub const STYLESHEET: &str = include_str!("../../static/sidequest.css");
/// The one script (counters, copy buttons).
pub const SCRIPT: &str = include_str!("../../static/sidequest.js");
/// The site's icon (so browsers do not ask for a missing `/favicon.ico`).
pub const ICON: &str = include_str!("../../static/favicon.svg");

fn static_file(content_type: &'static str, body: &'static str) -> Response {
    mcp_door::web::with_headers(
        (StatusCode::OK, body).into_response(),
        [
            (header::CONTENT_TYPE, content_type),
            (header::CACHE_CONTROL, "public, max-age=300"),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        ],
    )
}

async fn stylesheet() -> Response {
    static_file("text/css; charset=utf-8", STYLESHEET)
}

async fn script() -> Response {
    static_file("text/javascript; charset=utf-8", SCRIPT)
}

async fn icon() -> Response {
    static_file("image/svg+xml", ICON)
}

/// Every page route.
pub fn router(state: AppState) -> Router {
    Router::new()
        .route("/", get(home::home))
        .route("/signin", get(signin::form).post(signin::submit))
        .route("/signout", post(signin::sign_out))
        .route("/language/{lang}", get(signin::language))
        .route("/static/sidequest.css", get(stylesheet))
        .route("/static/sidequest.js", get(script))
        .route("/static/favicon.svg", get(icon))
        .route("/favicon.ico", get(icon))
        .route("/scenarios", post(scenarios::create))
        .route("/scenarios/{id}", get(scenarios::editor))
        .route("/scenarios/{id}/nodes", post(scenarios::save_node))
        .route(
            "/scenarios/{id}/nodes/{node}/delete",
            post(scenarios::delete_node),
        )
        .route("/scenarios/{id}/publish", post(scenarios::publish))
        .route(
            "/scenarios/{id}/versions/{version}",
            get(scenarios::version),
        )
        .route("/plays/new", get(plays::new_form))
        .route("/plays", post(plays::create))
        .route("/plays/{id}", get(plays::page))
        .route("/plays/{id}/token", post(plays::generate_token))
        .route("/plays/{id}/token/revoke", post(plays::revoke_token))
        .route(
            "/plays/{id}/review",
            get(review::queue).post(review::submit),
        )
        .route("/plays/{id}/report", get(plays::report))
        .route("/plays/{id}/report.md", get(plays::report_download))
        .route(
            "/author-tokens",
            get(scenarios::author_tokens).post(scenarios::create_author_token),
        )
        .route(
            "/author-tokens/{id}/revoke",
            post(scenarios::revoke_author_token),
        )
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
        .with_state(state)
}
