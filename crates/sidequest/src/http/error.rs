//! The REST layer's one error type and the table that maps it (and the campaign service's
//! errors) onto HTTP: status, stable snake_case code, message, per-field messages on 422.
//! Also the extractors whose rejections must come back in that same shape (JSON bodies, path
//! parameters). What each failure means is decided by the campaign service, not here.

use std::collections::BTreeMap;

use axum::extract::rejection::{JsonRejection, PathRejection};
use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::request::Parts;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::de::DeserializeOwned;
use serde_json::json;

use crate::campaign::CampaignError;
use crate::domain::fields::FieldErrors;
use crate::domain::play::DomainError;
use crate::store::StoreError;

/// A failed REST request. `Unavailable` and `Internal` carry details for the log only.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ApiError {
    #[error("Log in first.")]
    Unauthenticated,
    #[error("Unknown username or wrong password.")]
    InvalidCredentials,
    #[error("Too many failed logins; try again later.")]
    TooManyAttempts { retry_after_secs: u64 },
    /// Every password-hashing slot of this instance is taken; nothing about the attempt was
    /// checked or recorded.
    #[error("The server is checking too many logins at once; try again in a second.")]
    LoginBusy,
    #[error("Missing or wrong X-CSRF-Token header.")]
    Csrf,
    #[error("{0}")]
    Forbidden(String),
    #[error("Not found.")]
    NotFound,
    #[error("Method not allowed.")]
    MethodNotAllowed,
    /// A conflict with a stable code (`conflict`, `version_conflict`, …).
    #[error("{message}")]
    Conflict { code: &'static str, message: String },
    /// Field name (or path, e.g. `decisions[2].note`) → what is wrong with it.
    #[error("Some fields are invalid.")]
    Invalid(BTreeMap<String, String>),
    #[error("Malformed JSON: {0}")]
    MalformedJson(String),
    #[error("Expected a JSON body with Content-Type: application/json.")]
    UnsupportedMediaType,
    #[error("The request body is over 307,200 bytes.")]
    PayloadTooLarge,
    #[error("The service is temporarily unavailable; try again shortly.")]
    Unavailable(String),
    #[error("Internal error.")]
    Internal(String),
}

/// The result of a handler.
pub type ApiResult<T> = Result<T, ApiError>;

impl ApiError {
    /// The wire table: HTTP status and stable error code.
    pub fn parts(&self) -> (StatusCode, &'static str) {
        match self {
            ApiError::Unauthenticated => (StatusCode::UNAUTHORIZED, "unauthenticated"),
            ApiError::InvalidCredentials => (StatusCode::UNAUTHORIZED, "invalid_credentials"),
            ApiError::TooManyAttempts { .. } => {
                (StatusCode::TOO_MANY_REQUESTS, "too_many_attempts")
            }
            ApiError::LoginBusy => (StatusCode::TOO_MANY_REQUESTS, "login_busy"),
            ApiError::Csrf => (StatusCode::FORBIDDEN, "csrf_failed"),
            ApiError::Forbidden(_) => (StatusCode::FORBIDDEN, "forbidden"),
            ApiError::NotFound => (StatusCode::NOT_FOUND, "not_found"),
            ApiError::MethodNotAllowed => (StatusCode::METHOD_NOT_ALLOWED, "method_not_allowed"),
            ApiError::Conflict { code, .. } => (StatusCode::CONFLICT, code),
            ApiError::Invalid(_) => (StatusCode::UNPROCESSABLE_ENTITY, "invalid_fields"),
            ApiError::MalformedJson(_) => (StatusCode::BAD_REQUEST, "malformed_json"),
            ApiError::UnsupportedMediaType => {
                (StatusCode::UNSUPPORTED_MEDIA_TYPE, "unsupported_media_type")
            }
            ApiError::PayloadTooLarge => (StatusCode::PAYLOAD_TOO_LARGE, "payload_too_large"),
            ApiError::Unavailable(_) => (StatusCode::SERVICE_UNAVAILABLE, "unavailable"),
            ApiError::Internal(_) => (StatusCode::INTERNAL_SERVER_ERROR, "internal"),
        }
    }

    /// A 422 with one field's message.
    pub fn field(field: &str, message: impl Into<String>) -> Self {
        ApiError::Invalid(BTreeMap::from([(field.to_owned(), message.into())]))
    }

    /// Maps a rejection of axum's JSON extractor: 400 for unparsable JSON, 422 for a body of
    /// the wrong shape (naming the field), 413 over the body limit, 415 without a JSON type.
    pub fn from_json_rejection(rejection: JsonRejection) -> Self {
        match rejection {
            JsonRejection::JsonDataError(e) => ApiError::Invalid(data_error_fields(&e.body_text())),
            JsonRejection::JsonSyntaxError(e) => {
                ApiError::MalformedJson(strip_axum_prefix(&e.body_text()).to_owned())
            }
            JsonRejection::MissingJsonContentType(_) => ApiError::UnsupportedMediaType,
            JsonRejection::BytesRejection(e) if e.status() == StatusCode::PAYLOAD_TOO_LARGE => {
                ApiError::PayloadTooLarge
            }
            other => ApiError::MalformedJson(other.body_text()),
        }
    }
}

/// The text after axum's fixed "Failed to … target type: " prefix.
fn strip_axum_prefix(text: &str) -> &str {
    text.split_once("type: ").map_or(text, |(_, rest)| rest)
}

/// Turns serde's message (with serde_path_to_error's path, e.g.
/// `decisions[0].decision: unknown variant …`) into `{path: message}`.
fn data_error_fields(text: &str) -> BTreeMap<String, String> {
    let text = strip_axum_prefix(text);
    let text = match text.rfind(" at line ") {
        Some(i) if text[i..].contains(" column ") => &text[..i],
        _ => text,
    };
    let (path, message) = match text.split_once(": ") {
        Some((p, m)) if !p.is_empty() && !p.contains(' ') && p != "." => (p.to_owned(), m),
        _ => (String::new(), text),
    };
    // `missing field `x`` / `unknown field `x``: name the field itself.
    let named = ["missing field `", "unknown field `"]
        .iter()
        .find_map(|p| message.strip_prefix(p))
        .and_then(|rest| rest.split('`').next());
    let field = match named {
        Some(name) if path.is_empty() => name.to_owned(),
        Some(name) if !path.ends_with(name) => format!("{path}.{name}"),
        _ if path.is_empty() => "body".to_owned(),
        _ => path,
    };
    BTreeMap::from([(field, message.to_owned())])
}

/// `/decisions/3/id` → `decisions[3].id` (the path style of JSON body errors).
fn pointer_to_path(pointer: &str) -> String {
    let mut out = String::new();
    for segment in pointer.trim_start_matches('/').split('/') {
        if !segment.is_empty() && segment.bytes().all(|b| b.is_ascii_digit()) {
            out.push_str(&format!("[{segment}]"));
        } else {
            if !out.is_empty() {
                out.push('.');
            }
            out.push_str(segment);
        }
    }
    out
}

impl From<FieldErrors> for ApiError {
    fn from(e: FieldErrors) -> Self {
        ApiError::Invalid(e.0)
    }
}

impl From<DomainError> for ApiError {
    fn from(e: DomainError) -> Self {
        let conflict = |code, message: String| ApiError::Conflict { code, message };
        match e {
            DomainError::NotFound => ApiError::NotFound,
            DomainError::VersionConflict { expected, current } => conflict(
                "version_conflict",
                format!(
                    "Version conflict: expected {expected}, current {current}. Reload the assignment and try again."
                ),
            ),
            DomainError::OperationReused(id) => conflict(
                "operation_reused",
                format!("Operation {id} was already used with different arguments."),
            ),
            DomainError::Completed => {
                conflict("completed", "The play session is completed.".into())
            }
            DomainError::AlreadyDecided(id) => conflict(
                "already_decided",
                format!("Consequence {id} is already decided."),
            ),
            DomainError::InvalidScene => ApiError::field(
                "current_scene",
                "must be a published scene of this assignment",
            ),
            DomainError::Invalid(lines) => {
                let mut fields = BTreeMap::new();
                for line in lines {
                    let (pointer, message) = line.split_once(": ").unwrap_or(("", line.as_str()));
                    let key = if pointer.is_empty() {
                        "body".to_owned()
                    } else {
                        pointer_to_path(pointer)
                    };
                    fields.entry(key).or_insert_with(|| message.to_owned());
                }
                ApiError::Invalid(fields)
            }
        }
    }
}

impl From<CampaignError> for ApiError {
    fn from(e: CampaignError) -> Self {
        match e {
            CampaignError::NotFound => ApiError::NotFound,
            CampaignError::Forbidden(m) => ApiError::Forbidden(m),
            CampaignError::Invalid(f) => ApiError::Invalid(f.0),
            CampaignError::Conflict(m) => ApiError::Conflict {
                code: "conflict",
                message: m,
            },
            CampaignError::Domain(d) => d.into(),
            CampaignError::Unavailable(m) => ApiError::Unavailable(m),
            other => ApiError::Internal(other.to_string()),
        }
    }
}

impl From<StoreError> for ApiError {
    fn from(e: StoreError) -> Self {
        CampaignError::from(e).into()
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let (status, code) = self.parts();
        match &self {
            ApiError::Internal(detail) => tracing::error!(error = %detail, "REST request failed"),
            ApiError::Unavailable(detail) => {
                tracing::warn!(error = %detail, "REST request: backend unavailable")
            }
            _ => {}
        }
        let mut body = json!({"error": code, "message": self.to_string()});
        if let ApiError::Invalid(fields) = &self {
            body["fields"] = json!(fields);
        }
        let mut response = (status, axum::Json(body)).into_response();
        let headers = response.headers_mut();
        match &self {
            ApiError::Unauthenticated | ApiError::InvalidCredentials => {
                headers.insert(
                    header::WWW_AUTHENTICATE,
                    HeaderValue::from_static(
                        "Cookie realm=\"sidequest\", cookie-name=\"sq_session\"",
                    ),
                );
            }
            ApiError::TooManyAttempts { retry_after_secs } => {
                headers.insert(header::RETRY_AFTER, HeaderValue::from(*retry_after_secs));
            }
            // A hashing slot frees within one hash (well under a second).
            ApiError::LoginBusy | ApiError::Unavailable(_) => {
                headers.insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
            }
            _ => {}
        }
        response
    }
}

/// A JSON body whose rejections are [`ApiError`]s.
#[derive(Debug, Clone)]
pub struct ApiJson<T>(pub T);

impl<T, S> FromRequest<S> for ApiJson<T>
where
    T: DeserializeOwned,
    S: Send + Sync,
{
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        match axum::Json::<T>::from_request(req, state).await {
            Ok(axum::Json(value)) => Ok(ApiJson(value)),
            Err(rejection) => Err(ApiError::from_json_rejection(rejection)),
        }
    }
}

/// Path parameters; one that does not parse (not a UUID, say) names nothing that exists: 404.
#[derive(Debug, Clone)]
pub struct ApiPath<T>(pub T);

impl<T, S> FromRequestParts<S> for ApiPath<T>
where
    T: DeserializeOwned + Send,
    S: Send + Sync,
{
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        match axum::extract::Path::<T>::from_request_parts(parts, state).await {
            Ok(axum::extract::Path(value)) => Ok(ApiPath(value)),
            Err(PathRejection::FailedToDeserializePathParams(_)) => Err(ApiError::NotFound),
            Err(other) => Err(ApiError::Internal(other.body_text())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_errors_name_their_field() {
        let f = data_error_fields(
            "Failed to deserialize the JSON body into the target type: missing field `brief` at line 1 column 20",
        );
        assert_eq!(
            f,
            BTreeMap::from([("brief".to_owned(), "missing field `brief`".to_owned())])
        );
        let f = data_error_fields(
            "Failed to deserialize the JSON body into the target type: decisions[0].decision: unknown variant `maybe`, expected `approved` or `rejected` at line 1 column 70",
        );
        assert_eq!(f.keys().collect::<Vec<_>>(), ["decisions[0].decision"]);
        assert!(f["decisions[0].decision"].starts_with("unknown variant `maybe`"));
        let f = data_error_fields(
            "Failed to deserialize the JSON body into the target type: decisions[1]: unknown field `extra`, expected one of `id`, `decision`, `note` at line 1 column 9",
        );
        assert_eq!(f.keys().collect::<Vec<_>>(), ["decisions[1].extra"]);
        let f = data_error_fields(
            "Failed to deserialize the JSON body into the target type: invalid type: integer `5`, expected a map at line 1 column 1",
        );
        assert_eq!(f.keys().collect::<Vec<_>>(), ["body"]);
    }

    #[test]
    fn pointers_become_paths() {
        assert_eq!(pointer_to_path("/decisions/3/id"), "decisions[3].id");
        assert_eq!(pointer_to_path("/decisions"), "decisions");
        assert_eq!(pointer_to_path("/expected_version"), "expected_version");
    }
}
