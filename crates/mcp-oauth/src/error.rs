//! The wire errors of the JSON endpoints (RFC 6749 §5.2 / RFC 7591 §3.2.2 bodies) and the
//! configuration error. The consent page renders its own HTML errors (`authorize`); the
//! resource-server refusals are [`crate::TokenError`].

use axum::Json;
use axum::response::{IntoResponse, Response};
use http::{HeaderValue, StatusCode, header};

use crate::store::StoreError;

/// The configuration is unusable.
#[derive(Debug, Clone, thiserror::Error)]
#[error("invalid authorization-server configuration: {0}")]
pub struct ConfigError(pub String);

/// An OAuth error answered as `{error, error_description}` with `Cache-Control: no-store`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{code}: {description}")]
pub struct OAuthError {
    pub status: StatusCode,
    /// The RFC 6749 / 7591 / 8707 error code (`invalid_grant`, `invalid_target`, ...).
    pub code: &'static str,
    pub description: String,
}

impl OAuthError {
    pub fn new(status: StatusCode, code: &'static str, description: impl Into<String>) -> Self {
        Self {
            status,
            code,
            description: description.into(),
        }
    }
    pub fn invalid_request(d: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, "invalid_request", d)
    }
    pub fn invalid_grant(d: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, "invalid_grant", d)
    }
    pub fn invalid_client(d: impl Into<String>) -> Self {
        // 400, not 401: public clients attempt no authentication (RFC 6749 §5.2 allows either).
        Self::new(StatusCode::BAD_REQUEST, "invalid_client", d)
    }
    pub fn invalid_target(d: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, "invalid_target", d)
    }
    pub fn invalid_scope(d: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, "invalid_scope", d)
    }
    pub fn unavailable(d: impl Into<String>) -> Self {
        Self::new(StatusCode::TOO_MANY_REQUESTS, "temporarily_unavailable", d)
    }
    /// A store failure: 503 when the database is unreachable, 500 otherwise; never details.
    pub fn from_store(err: &StoreError) -> Self {
        tracing::error!(error = %err, "oauth store failure");
        match err {
            StoreError::Unavailable(_) => Self::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "temporarily_unavailable",
                "The service is briefly unavailable; try again.",
            ),
            _ => Self::new(
                StatusCode::INTERNAL_SERVER_ERROR,
                "server_error",
                "Internal error.",
            ),
        }
    }
}

impl From<StoreError> for OAuthError {
    fn from(err: StoreError) -> Self {
        Self::from_store(&err)
    }
}

impl IntoResponse for OAuthError {
    fn into_response(self) -> Response {
        let body = serde_json::json!({
            "error": self.code,
            "error_description": self.description,
        });
        let mut response = (self.status, Json(body)).into_response();
        response
            .headers_mut()
            .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
        response
    }
}
