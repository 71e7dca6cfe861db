//! Elixir's web pages: sign in with an email code, sign out, the account pages (Connections,
//! Agents, Activity, refused credentials) and the docs. Server-rendered HTML that works
//! without JavaScript; every POST carries a CSRF token bound to the browser session (or, on
//! the sign-in page, to the signed sign-in flow) and is refused with 403 from another origin.
//! Every page carries the consent page's security headers. The flows they call are mcp-oauth's
//! (sessions, connections) and the admin functions (agents). This module routes; what every
//! page shares (state, session and CSRF, layout, escaping, security headers) is [`page`]'s.

mod account;
mod agents;
mod docs;
pub mod markdown;
pub mod page;
mod players;
mod signin;

use axum::Router;
use axum::routing::{get, post};

pub use page::Web;

/// The routes of the pages.
pub fn router(web: Web) -> Router {
    Router::new()
        .route("/", get(account::home))
        .route("/signin", get(signin::get).post(signin::post))
        .route("/signout", post(signin::sign_out))
        .route("/account", get(account::overview))
        .route("/account/timezone", post(account::set_timezone))
        .route("/account/connections", get(account::connections))
        .route(
            "/account/connections/{grant}/{action}",
            post(account::connection_action),
        )
        .route("/account/agents", get(agents::list).post(agents::create))
        .route("/account/agents/{public_id}", get(agents::page))
        .route("/account/agents/{public_id}/{action}", post(agents::action))
        .route("/account/activity", get(account::activity))
        .route("/account/players", get(players::page))
        .route("/account/refusals", get(account::refusals))
        .route("/docs", get(docs::index))
        .route("/docs/{slug}", get(docs::page))
        .layer(axum::extract::DefaultBodyLimit::max(16 * 1024))
        .with_state(web)
}
