//! What Sidequest's two doors share: the realm of their challenges, the prologue of a bearer
//! token's check (its shape, its digest, the lookup, revoked, expired), the identity they
//! present and their `<status>: <message>` failure results. Each door keeps its token kind,
//! grant, wording and tools (`player`, `author`).

use mcp_door::model::{CallToolResult, ContentBlock, Implementation};
use mcp_door::{AuthError, AuthRequest, CallOutcome, InvalidReason, Violation, bearer_token};

use crate::domain::token;
use crate::store::StoreError;

/// The realm of both doors' `WWW-Authenticate` challenges.
pub const REALM: &str = "sidequest";

/// The digest of the request's bearer token when it has the door's shape (`is_ours`): a
/// token of another shape is refused as unknown before any lookup.
pub(super) fn presented_digest(
    request: &AuthRequest<'_>,
    is_ours: fn(&str) -> bool,
) -> Result<String, AuthError> {
    let presented = bearer_token(request.headers)?;
    if !is_ours(presented) {
        return Err(AuthError::Invalid(InvalidReason::Unknown));
    }
    Ok(token::digest(presented))
}

/// The grant a token lookup found; none is an unknown token, and a store failure is
/// `Unavailable` (logged, naming `what` was looked up, unless the database is only away).
pub(super) fn found<G>(lookup: Result<Option<G>, StoreError>, what: &str) -> Result<G, AuthError> {
    match lookup {
        Ok(Some(grant)) => Ok(grant),
        Ok(None) => Err(AuthError::Invalid(InvalidReason::Unknown)),
        Err(StoreError::Unavailable(_)) => Err(AuthError::Unavailable),
        Err(e) => {
            tracing::error!(error = %e, "{what} lookup failed");
            Err(AuthError::Unavailable)
        }
    }
}

/// A found grant's own limits: refused when `revoked`, or when it expired at or before `now`.
pub(super) fn live(revoked: bool, expires_at: i64, now: i64) -> Result<(), AuthError> {
    if revoked {
        return Err(AuthError::Invalid(InvalidReason::Revoked));
    }
    if expires_at <= now {
        return Err(AuthError::Invalid(InvalidReason::Expired));
    }
    Ok(())
}

/// A door's `serverInfo`: its `name` and `title`, versioned by the crate and the tools'
/// `fingerprint`.
pub(super) fn server_info(name: &str, title: &str, fingerprint: &str) -> Implementation {
    let mut info = Implementation::new(
        name,
        format!("{}+tools.{fingerprint}", env!("CARGO_PKG_VERSION")),
    );
    info.title = Some(title.into());
    info
}

/// Arguments that do not match a tool's schema: a 422 naming each field.
pub(super) fn invalid_arguments(violations: &[Violation]) -> CallOutcome {
    let lines: Vec<String> = violations
        .iter()
        .map(|v| format!("{}: {}", v.pointer, v.message))
        .collect();
    domain_error_result(
        422,
        &format!("422: Invalid arguments: {}", lines.join("\n")),
    )
}

/// A domain failure as a tool result: `text` (which starts with `status`) with `isError`, and
/// `status` handed to the audit and metrics as the error code.
pub(super) fn domain_error_result(status: u16, text: &str) -> CallOutcome {
    CallOutcome::failed(
        status.to_string(),
        CallToolResult::error(vec![ContentBlock::text(text.to_owned())]),
    )
}
