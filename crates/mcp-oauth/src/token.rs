//! `POST /oauth/token`: the authorization-code grant (single use, PKCE S256, the same
//! `redirect_uri` and `resource`) and the refresh-token grant (rotation; a rotated token
//! presented again revokes the whole grant unless the configured grace applies). Scope is
//! never widened (names the server does not define are left out, never an error); the
//! response reports the scope actually granted (RFC 6749 §3.3).

use serde::Serialize;

use crate::cimd;
use crate::config::{AuthServerConfig, ms};
use crate::crypto::{pkce_s256_matches, sha256_hex};
use crate::error::OAuthError;
use crate::scopes;
use crate::server::{AuthServer, ClientInfo, Pair};
use crate::store::{CodeUse, GrantRecord, Millis};

/// The success body.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct TokenResponse {
    pub access_token: String,
    pub refresh_token: String,
    pub token_type: &'static str,
    pub expires_in: i64,
    pub scope: String,
}

/// The form parameters, each at most once (RFC 6749 §3.2).
struct Params(Vec<(String, String)>);

impl Params {
    fn parse(body: &[u8]) -> Result<Self, OAuthError> {
        let pairs: Vec<(String, String)> = url::form_urlencoded::parse(body).into_owned().collect();
        for (i, (name, _)) in pairs.iter().enumerate() {
            if pairs[..i].iter().any(|(n, _)| n == name) {
                return Err(OAuthError::invalid_request(format!(
                    "{name} is given more than once"
                )));
            }
        }
        Ok(Self(pairs))
    }

    fn get(&self, name: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
            .filter(|v| !v.is_empty())
    }

    fn require(&self, name: &str) -> Result<&str, OAuthError> {
        self.get(name)
            .ok_or_else(|| OAuthError::invalid_request(format!("{name} is required")))
    }
}

/// A `scope` parameter at the token endpoint may narrow nothing and widen nothing: every
/// name the server defines must already be granted (the grant keeps its scopes; the answer
/// reports them). Names it does not define are left out, as at the authorize endpoint
/// (`offline_access` asks for what every exchange gives anyway: a refresh token).
fn check_scope_param(
    config: &AuthServerConfig,
    params: &Params,
    granted: &[String],
) -> Result<(), OAuthError> {
    let requested = scopes::parse_requested(config, params.get("scope"))
        .map_err(|e| OAuthError::invalid_scope(e.to_string()))?;
    if requested
        .known
        .unwrap_or_default()
        .iter()
        .any(|n| !granted.contains(n))
    {
        return Err(OAuthError::invalid_scope(
            "The requested scope exceeds what was granted.",
        ));
    }
    Ok(())
}

impl AuthServer {
    /// Answers a token request (the form body).
    pub(crate) async fn token_request(&self, body: &[u8]) -> Result<TokenResponse, OAuthError> {
        let params = Params::parse(body)?;
        let grant_type = params.require("grant_type")?;
        if grant_type != "authorization_code" && grant_type != "refresh_token" {
            return Err(OAuthError::new(
                http::StatusCode::BAD_REQUEST,
                "unsupported_grant_type",
                "grant_type must be authorization_code or refresh_token",
            ));
        }
        // A malformed or overlong scope is refused before anything is looked up or spent.
        scopes::parse_requested(&self.config, params.get("scope"))
            .map_err(|e| OAuthError::invalid_scope(e.to_string()))?;
        let client_id = params.require("client_id")?;
        if cimd::looks_like_url(client_id)
            && !self.issued_to(&params, grant_type, client_id).await?
        {
            // Checked before the document is resolved: a token request can make the server
            // fetch a client's document only with a code or refresh token that a consent
            // (which the per-address flow limit meters) issued to that very client.
            return Err(OAuthError::invalid_grant(
                "The code or refresh token was not issued to this client.",
            ));
        }
        let client = self
            .client_info(client_id)
            .await?
            .ok_or_else(|| OAuthError::invalid_client("Unknown or expired client."))?;
        let response = if grant_type == "authorization_code" {
            self.redeem_code(&params, &client).await?
        } else {
            self.refresh(&params, &client).await?
        };
        self.touch_client(&client).await?;
        Ok(response)
    }

    /// Whether the request's code (or refresh token) was issued to `client_id`; nothing is
    /// spent.
    async fn issued_to(
        &self,
        params: &Params,
        grant_type: &str,
        client_id: &str,
    ) -> Result<bool, OAuthError> {
        let owner = if grant_type == "authorization_code" {
            let code = params.require("code")?;
            self.store.auth_code_client(&sha256_hex(code)).await?
        } else {
            let presented = params.require("refresh_token")?;
            match self.store.refresh_token(&sha256_hex(presented)).await? {
                Some(record) => self
                    .store
                    .grant(&record.grant_id)
                    .await?
                    .map(|g| g.client_id),
                None => None,
            }
        };
        Ok(owner.as_deref() == Some(client_id))
    }

    async fn redeem_code(
        &self,
        params: &Params,
        client: &ClientInfo,
    ) -> Result<TokenResponse, OAuthError> {
        let code = params.require("code")?;
        let now = self.now();
        let code_hash = sha256_hex(code);
        let record = match self.store.consume_auth_code(&code_hash, now).await? {
            CodeUse::Fresh(record) => *record,
            CodeUse::Unknown => {
                return Err(OAuthError::invalid_grant("Unknown authorization code."));
            }
            CodeUse::Replayed { grant_id } => {
                if let Some(grant_id) = grant_id
                    && self.store.revoke_grant(&grant_id, now).await?
                {
                    tracing::warn!(grant_id, "authorization code replayed: grant revoked");
                }
                return Err(OAuthError::invalid_grant(
                    "The authorization code was already used; tokens issued from it are revoked.",
                ));
            }
        };
        if record.client_id != client.client_id {
            return Err(OAuthError::invalid_grant(
                "The code was issued to another client.",
            ));
        }
        if now > record.expires_at {
            return Err(OAuthError::invalid_grant(
                "The authorization code has expired.",
            ));
        }
        if params.get("redirect_uri") != Some(record.redirect_uri.as_str()) {
            return Err(OAuthError::invalid_grant(
                "redirect_uri does not match the authorization request.",
            ));
        }
        let verifier = params.get("code_verifier").unwrap_or("");
        if !pkce_s256_matches(verifier, &record.code_challenge) {
            return Err(OAuthError::invalid_grant(
                "code_verifier does not match the code_challenge.",
            ));
        }
        match params.get("resource") {
            Some(resource) if resource == record.resource => {}
            Some(_) => {
                return Err(OAuthError::invalid_target(
                    "resource does not match the authorization request.",
                ));
            }
            None => {
                return Err(OAuthError::invalid_target(
                    "resource is required (RFC 8707).",
                ));
            }
        }
        check_scope_param(&self.config, params, &record.scopes)?;
        let grant = GrantRecord {
            id: self.token(16),
            client_id: record.client_id,
            client_name: record.client_name,
            resource: record.resource,
            subject: record.subject,
            scopes: record.scopes,
            created_at: now,
            updated_at: now,
            last_used_at: now,
            revoked_at: None,
        };
        let pair = self.mint_pair(&grant.id, now);
        let created = self
            .store
            .create_grant(
                &grant,
                Some(&code_hash),
                &pair.access_record,
                &pair.refresh_record,
            )
            .await?;
        if !created {
            return Err(OAuthError::invalid_grant(
                "The authorization code was already used.",
            ));
        }
        tracing::info!(grant_id = %grant.id, client_id = %grant.client_id, "oauth grant created");
        Ok(self.response(pair, &grant.scopes))
    }

    async fn refresh(
        &self,
        params: &Params,
        client: &ClientInfo,
    ) -> Result<TokenResponse, OAuthError> {
        let presented = params.require("refresh_token")?;
        let now = self.now();
        let hash = sha256_hex(presented);
        let invalid =
            || OAuthError::invalid_grant("The refresh token is invalid, expired or revoked.");
        let record = self.store.refresh_token(&hash).await?.ok_or_else(invalid)?;
        let grant = self
            .store
            .grant(&record.grant_id)
            .await?
            .filter(|g| g.revoked_at.is_none())
            .ok_or_else(invalid)?;
        if grant.client_id != client.client_id {
            return Err(OAuthError::invalid_grant(
                "The refresh token was issued to another client.",
            ));
        }
        if let Some(resource) = params.get("resource")
            && resource != grant.resource
        {
            return Err(OAuthError::invalid_target(
                "resource does not match the grant.",
            ));
        }
        if now > record.expires_at {
            return Err(invalid());
        }
        check_scope_param(&self.config, params, &grant.scopes)?;
        if let Some(rotated_at) = record.rotated_at {
            return self
                .replayed_refresh(&grant, presented, rotated_at, now)
                .await;
        }
        let pair = self.successor_pair(&grant.id, now, presented);
        if !self
            .store
            .rotate_refresh(&hash, now, &pair.access_record, &pair.refresh_record)
            .await?
        {
            // Another request rotated it first: the same rule as a later replay.
            return self.replayed_refresh(&grant, presented, now, now).await;
        }
        self.store.touch_grant(&grant.id, now).await?;
        Ok(self.response(pair, &grant.scopes))
    }

    /// A refresh token presented after its rotation: within the grace period, the same
    /// successor pair; otherwise the whole grant is revoked.
    async fn replayed_refresh(
        &self,
        grant: &GrantRecord,
        presented: &str,
        rotated_at: Millis,
        now: Millis,
    ) -> Result<TokenResponse, OAuthError> {
        if let Some(grace) = self.config.refresh_grace
            && now - rotated_at <= ms(grace)
        {
            let pair = self.successor_pair(&grant.id, now, presented);
            if let Some((access, _)) = self
                .store
                .access_token(&pair.access_record.token_hash)
                .await?
            {
                let expires_in = ((access.expires_at - now) / 1000).max(0);
                let mut response = self.response(pair, &grant.scopes);
                response.expires_in = expires_in;
                return Ok(response);
            }
        }
        if self.store.revoke_grant(&grant.id, now).await? {
            tracing::warn!(grant_id = %grant.id, "rotated refresh token replayed: grant revoked");
        }
        Err(OAuthError::invalid_grant(
            "The refresh token was already used; the connection has been revoked.",
        ))
    }

    fn response(&self, pair: Pair, granted: &[String]) -> TokenResponse {
        TokenResponse {
            access_token: pair.access,
            refresh_token: pair.refresh,
            token_type: "Bearer",
            expires_in: ms(self.config.access_ttl) / 1000,
            scope: scopes::join(granted),
        }
    }
}
