//! The axum `Router`: request framing, the client address, caching and CORS headers; the
//! pages' security headers are [`crate::web`]'s. Each handler extracts its inputs and calls
//! one `AuthServer` method.

use std::net::SocketAddr;
use std::sync::Arc;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{ConnectInfo, DefaultBodyLimit, Path, RawQuery, State};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use http::request::Parts;
use http::{HeaderMap, HeaderValue, StatusCode, header};

use crate::authorize::Outcome;
use crate::server::AuthServer;
use crate::web;
use mcp_door::client_address;

/// Form and JSON bodies are small; anything larger is refused with 413.
const BODY_LIMIT: usize = 16 * 1024;

type Shared = State<Arc<AuthServer>>;

impl AuthServer {
    /// The endpoints: discovery documents, registration, consent, token and userinfo.
    /// Mount at the root of the issuer's origin. For per-address limits behind
    /// [`mcp_door::AddressSource::Peer`], serve with
    /// `into_make_service_with_connect_info::<SocketAddr>()`.
    pub fn router(self: &Arc<Self>) -> Router {
        // Everything but the consent page may be called from a browser-based client on another
        // origin; none of it reads cookies, so `*` without credentials is safe.
        let cors = Router::new()
            .route(
                "/.well-known/oauth-authorization-server",
                get(as_metadata).options(preflight),
            )
            .route(
                "/.well-known/oauth-protected-resource",
                get(prm_root).options(preflight),
            )
            .route(
                "/.well-known/oauth-protected-resource/{*door}",
                get(prm_door).options(preflight),
            )
            .route("/oauth/register", post(register).options(preflight))
            .route("/oauth/token", post(token).options(preflight))
            .route("/oauth/userinfo", get(userinfo).options(preflight))
            .layer(axum::middleware::map_response(allow_any_origin));
        Router::new()
            .route("/oauth/authorize", get(authorize_get).post(authorize_post))
            .merge(cors)
            .layer(DefaultBodyLimit::max(BODY_LIMIT))
            // a refusal written before the body is read (413 past the limit) reaches clients
            // that read only after sending: the rest of the body is drained, not reset
            .layer(mcp_door::around::AroundLayer(
                mcp_door::DrainLimits::default(),
            ))
            .with_state(Arc::clone(self))
    }

    /// The client address of a request, per [`mcp_door::AddressSource`].
    pub fn client_address(&self, headers: &HeaderMap, peer: Option<SocketAddr>) -> String {
        client_address(&self.config.address_source, headers, peer.map(|p| p.ip()))
    }
}

async fn allow_any_origin(response: Response) -> Response {
    mcp_door::web::with_headers(response, [(header::ACCESS_CONTROL_ALLOW_ORIGIN, "*")])
}

async fn preflight() -> Response {
    mcp_door::web::with_headers(
        StatusCode::NO_CONTENT.into_response(),
        [
            (header::ACCESS_CONTROL_ALLOW_METHODS, "GET, POST, OPTIONS"),
            (
                header::ACCESS_CONTROL_ALLOW_HEADERS,
                "authorization, content-type, mcp-protocol-version",
            ),
            (header::ACCESS_CONTROL_MAX_AGE, "86400"),
        ],
    )
}

fn address(server: &AuthServer, parts: &Parts) -> String {
    let peer = parts
        .extensions
        .get::<ConnectInfo<SocketAddr>>()
        .map(|c| c.0);
    server.client_address(&parts.headers, peer)
}

fn json_response(status: StatusCode, body: &serde_json::Value, cache: &'static str) -> Response {
    let mut response = (status, axum::Json(body)).into_response();
    response
        .headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static(cache));
    response
}

async fn as_metadata(State(server): Shared) -> Response {
    json_response(
        StatusCode::OK,
        &server.authorization_server_metadata(),
        "max-age=300",
    )
}

async fn prm_root(State(server): Shared) -> Response {
    let doc = server.protected_resource_metadata(&server.config.root_resource);
    json_response(StatusCode::OK, &doc, "max-age=300")
}

async fn prm_door(State(server): Shared, Path(door): Path<String>) -> Response {
    let resource = format!("{}/{door}", server.config.issuer);
    match server.doors.door(&resource).await {
        Ok(Some(found)) => json_response(
            StatusCode::OK,
            &server.protected_resource_metadata(&found.resource),
            "max-age=300",
        ),
        Ok(None) => json_response(
            StatusCode::NOT_FOUND,
            &serde_json::json!({"error": "not_found", "error_description": "No such resource."}),
            "max-age=300",
        ),
        Err(e) => {
            tracing::error!(error = %e, "directory failure");
            json_response(
                StatusCode::SERVICE_UNAVAILABLE,
                &serde_json::json!({"error": "temporarily_unavailable"}),
                "no-store",
            )
        }
    }
}

async fn register(State(server): Shared, parts: Parts, body: Bytes) -> Response {
    let address = address(&server, &parts);
    match server.register(&body, &address).await {
        Ok(doc) => json_response(StatusCode::CREATED, &doc, "no-store"),
        Err(e) => e.into_response(),
    }
}

async fn token(State(server): Shared, body: Bytes) -> Response {
    match server.token_request(&body).await {
        Ok(tokens) => {
            let mut response = (StatusCode::OK, axum::Json(tokens)).into_response();
            let headers = response.headers_mut();
            headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
            headers.insert(header::PRAGMA, HeaderValue::from_static("no-cache"));
            response
        }
        Err(e) => e.into_response(),
    }
}

async fn userinfo(State(server): Shared, headers: HeaderMap) -> Response {
    let (status, body, challenge) = server.userinfo(&headers).await;
    let mut response = json_response(status, &body, "no-store");
    if let Some(value) = challenge.and_then(|c| HeaderValue::from_str(&c).ok()) {
        response
            .headers_mut()
            .insert(header::WWW_AUTHENTICATE, value);
    }
    response
}

async fn authorize_get(State(server): Shared, RawQuery(query): RawQuery, parts: Parts) -> Response {
    let address = address(&server, &parts);
    page_response(
        server
            .authorize_get(query.as_deref().unwrap_or(""), &parts.headers, &address)
            .await,
    )
}

async fn authorize_post(State(server): Shared, parts: Parts, body: Bytes) -> Response {
    let address = address(&server, &parts);
    page_response(server.authorize_post(&body, &parts.headers, &address).await)
}

/// Every consent-page answer carries the site's security headers, pages and redirects alike;
/// `form-action` also allows where the page's form (or the redirect itself) leads.
fn page_response(outcome: Outcome) -> Response {
    match outcome {
        Outcome::Page {
            status,
            html,
            redirect_uri,
        } => web::html_response(status, html, redirect_uri.as_deref()),
        Outcome::Redirect {
            location,
            set_cookie,
        } => web::see_other(&location, set_cookie.as_deref(), Some(&location)),
    }
}
