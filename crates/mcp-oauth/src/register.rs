//! `POST /oauth/register`: RFC 7591 dynamic registration of public clients, with the
//! per-address (IPv6 by /64) and daily limits; the daily one counts only clients never used
//! (see `AuthServer::client_issued_code` and `AuthServer::purge`). Only `none` authentication, the code and refresh grants,
//! the `code` response type and redirect URIs that `redirect` accepts.

use serde_json::{Map, Value};

use crate::error::OAuthError;
use crate::redirect;
use crate::server::{AuthServer, DAY_MS, REGISTRATIONS_BUCKET};
use crate::store::ClientRecord;

const HOUR_MS: i64 = 3600 * 1000;
/// Redirect URIs one client may register.
const MAX_REDIRECT_URIS: usize = 10;

fn metadata_error(d: impl Into<String>) -> OAuthError {
    OAuthError::new(http::StatusCode::BAD_REQUEST, "invalid_client_metadata", d)
}

fn redirect_error(d: impl Into<String>) -> OAuthError {
    OAuthError::new(http::StatusCode::BAD_REQUEST, "invalid_redirect_uri", d)
}

/// The checked registration request.
struct Request {
    client_name: String,
    redirect_uris: Vec<String>,
    grant_types: Vec<String>,
}

fn string_list(doc: &Map<String, Value>, key: &str) -> Result<Option<Vec<String>>, OAuthError> {
    let Some(value) = doc.get(key) else {
        return Ok(None);
    };
    let items = value
        .as_array()
        .and_then(|a| {
            a.iter()
                .map(|v| v.as_str().map(str::to_owned))
                .collect::<Option<Vec<_>>>()
        })
        .ok_or_else(|| metadata_error(format!("{key} must be an array of strings")))?;
    Ok(Some(items))
}

fn parse(body: &[u8]) -> Result<Request, OAuthError> {
    let Ok(Value::Object(doc)) = serde_json::from_slice::<Value>(body) else {
        return Err(metadata_error("the body must be a JSON object"));
    };
    match doc.get("token_endpoint_auth_method") {
        None => {}
        Some(v) if v.as_str() == Some("none") => {}
        Some(_) => {
            return Err(metadata_error(
                "only public clients are registered: token_endpoint_auth_method must be none",
            ));
        }
    }
    let grant_types = string_list(&doc, "grant_types")?
        .unwrap_or_else(|| vec!["authorization_code".into(), "refresh_token".into()]);
    if grant_types.is_empty()
        || !grant_types.iter().any(|g| g == "authorization_code")
        || grant_types
            .iter()
            .any(|g| g != "authorization_code" && g != "refresh_token")
    {
        return Err(metadata_error(
            "grant_types must be authorization_code, optionally with refresh_token",
        ));
    }
    let response_types =
        string_list(&doc, "response_types")?.unwrap_or_else(|| vec!["code".into()]);
    if response_types.is_empty() || response_types.iter().any(|r| r != "code") {
        return Err(metadata_error("response_types must be [\"code\"]"));
    }
    let redirect_uris = string_list(&doc, "redirect_uris")
        .map_err(|_| redirect_error("redirect_uris must be an array of strings"))?
        .unwrap_or_default();
    if redirect_uris.is_empty() || redirect_uris.len() > MAX_REDIRECT_URIS {
        return Err(redirect_error("redirect_uris must list 1 to 10 URIs"));
    }
    for uri in &redirect_uris {
        redirect::check_registrable(uri).map_err(redirect_error)?;
    }
    let client_name = match doc.get("client_name") {
        None | Some(Value::Null) => "Unnamed client".to_owned(),
        Some(Value::String(name))
            if !name.trim().is_empty()
                && name.chars().count() <= 200
                && !name.chars().any(char::is_control) =>
        {
            name.trim().to_owned()
        }
        Some(_) => {
            return Err(metadata_error(
                "client_name must be 1 to 200 printable characters",
            ));
        }
    };
    let mut grant_types_canonical = vec!["authorization_code".to_owned()];
    if grant_types.iter().any(|g| g == "refresh_token") {
        grant_types_canonical.push("refresh_token".to_owned());
    }
    Ok(Request {
        client_name,
        redirect_uris,
        grant_types: grant_types_canonical,
    })
}

impl AuthServer {
    /// Registers a public client from the JSON `body`; the 201 body on success.
    pub(crate) async fn register(&self, body: &[u8], address: &str) -> Result<Value, OAuthError> {
        let request = parse(body)?;
        let now = self.now();
        let policy = &self.config.registration;
        let hour = Self::window(now, HOUR_MS);
        let day = Self::window(now, DAY_MS);
        // An IPv6 client by its /64: one subscriber routinely holds a whole one.
        let address_bucket = format!("register:addr:{}", mcp_door::limit_key(address));
        let limited = || OAuthError::unavailable("Too many client registrations; try again later.");
        if !self
            .store
            .take_rate(&address_bucket, hour, policy.per_address_per_hour)
            .await?
        {
            return Err(limited());
        }
        if !self
            .store
            .take_rate(REGISTRATIONS_BUCKET, day, policy.per_day)
            .await?
        {
            self.store.return_rate(&address_bucket, hour).await?;
            return Err(limited());
        }
        // 18 random bytes are 24 base64url characters.
        let client_id = self.token(18);
        let record = ClientRecord {
            client_id: client_id.clone(),
            client_name: request.client_name,
            redirect_uris: request.redirect_uris,
            grant_types: request.grant_types,
            registered_from: address.to_owned(),
            created_at: now,
            last_used_at: now,
            first_used_at: None,
        };
        self.store.insert_client(&record).await?;
        tracing::info!(client_id = %record.client_id, "oauth client registered");
        Ok(serde_json::json!({
            "client_id": record.client_id,
            "client_id_issued_at": now / 1000,
            "client_name": record.client_name,
            "redirect_uris": record.redirect_uris,
            "token_endpoint_auth_method": "none",
            "grant_types": record.grant_types,
            "response_types": ["code"],
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(body: &str) -> &'static str {
        match parse(body.as_bytes()) {
            Ok(_) => "accepted",
            Err(e) => e.code,
        }
    }

    #[test]
    fn parse_rules() {
        assert_eq!(
            refused(r#"{"redirect_uris":["https://a.example/cb"]}"#),
            "accepted"
        );
        assert_eq!(
            refused(
                r#"{"redirect_uris":["https://a.example/cb"],"token_endpoint_auth_method":"client_secret_post"}"#
            ),
            "invalid_client_metadata"
        );
        assert_eq!(
            refused(
                r#"{"redirect_uris":["https://a.example/cb"],"grant_types":["authorization_code","client_credentials"]}"#
            ),
            "invalid_client_metadata"
        );
        assert_eq!(
            refused(r#"{"redirect_uris":["http://a.example/cb"]}"#),
            "invalid_redirect_uri"
        );
        assert_eq!(refused(r#"{"redirect_uris":[]}"#), "invalid_redirect_uri");
        assert_eq!(refused("[1]"), "invalid_client_metadata");
    }
}
