//! Grant management for the product's connections page (list an account's live and recently
//! revoked grants, change a grant's scopes, revoke one) and the browser session the consent
//! page shares with the product's site.

use http::HeaderMap;

use crate::config::ms;
use crate::crypto::sha256_hex;
use crate::directory::Subject;
use crate::scopes;
use crate::server::AuthServer;
use crate::store::{GrantRecord, Millis, SessionRecord, StoreError};

/// One live connection, as an account's connections page lists it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ConnectionView {
    pub grant_id: String,
    pub client_id: String,
    pub client_name: String,
    /// The door the connection is bound to.
    pub resource: String,
    pub subject: Subject,
    pub scopes: Vec<String>,
    pub created_at: Millis,
    pub last_used_at: Millis,
}

impl From<GrantRecord> for ConnectionView {
    fn from(g: GrantRecord) -> Self {
        Self {
            grant_id: g.id,
            client_id: g.client_id,
            client_name: g.client_name,
            resource: g.resource,
            subject: Subject {
                kind: g.subject.subject_kind,
                id: g.subject.subject_id,
            },
            scopes: g.scopes,
            created_at: g.created_at,
            last_used_at: g.last_used_at,
        }
    }
}

/// A revoked connection: what it was, and when it ended.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Disconnection {
    pub connection: ConnectionView,
    pub revoked_at: Millis,
}

/// Why a grant's scopes were not changed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SetScopesError {
    /// No live grant of this account has that id.
    #[error("no such connection")]
    NotFound,
    /// An unknown scope, an unasked scope the grant does not hold, or an empty set.
    #[error("{0}")]
    Invalid(String),
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl AuthServer {
    /// The account's live connections, by door then age.
    pub async fn connections(&self, account_id: &str) -> Result<Vec<ConnectionView>, StoreError> {
        let now = self.now();
        // A grant unused for longer than a refresh token lives has no usable token left.
        let horizon = ms(self.config.refresh_ttl) + ms(self.config.access_ttl);
        let mut list: Vec<ConnectionView> = self
            .store
            .account_grants(account_id)
            .await?
            .into_iter()
            .filter(|g| g.last_used_at + horizon > now)
            .map(ConnectionView::from)
            .collect();
        list.sort_by(|a, b| (&a.resource, a.created_at).cmp(&(&b.resource, b.created_at)));
        Ok(list)
    }

    /// The account's connections revoked at or after `since` (by the account, by a replayed
    /// refresh token or code), most recently revoked first: their tokens are still presented
    /// by clients that were not told, and those refusals are worth showing.
    pub async fn disconnections(
        &self,
        account_id: &str,
        since: Millis,
    ) -> Result<Vec<Disconnection>, StoreError> {
        Ok(self
            .store
            .revoked_account_grants(account_id, since)
            .await?
            .into_iter()
            .filter_map(|g| {
                let revoked_at = g.revoked_at?;
                Some(Disconnection {
                    connection: ConnectionView::from(g),
                    revoked_at,
                })
            })
            .collect())
    }

    /// Replaces the scopes of one of the account's grants; effective on its next request.
    /// Standard scopes may be added or removed; an unasked scope can only be kept or removed.
    /// Returns the scopes now held, in canonical order.
    pub async fn set_connection_scopes(
        &self,
        account_id: &str,
        grant_id: &str,
        wanted: &[String],
    ) -> Result<Vec<String>, SetScopesError> {
        let grant = self
            .store
            .grant(grant_id)
            .await?
            .filter(|g| g.revoked_at.is_none() && g.subject.account_id == account_id)
            .ok_or(SetScopesError::NotFound)?;
        let scopes = scopes::editable(&self.config, &grant.scopes, wanted)
            .map_err(SetScopesError::Invalid)?;
        if scopes.is_empty() {
            return Err(SetScopesError::Invalid(
                "keep at least one capability, or revoke the connection".into(),
            ));
        }
        if !self
            .store
            .set_grant_scopes(grant_id, &scopes, self.now())
            .await?
        {
            return Err(SetScopesError::NotFound);
        }
        Ok(scopes)
    }

    /// Revokes one of the account's grants: its tokens stop working on their next use.
    /// False when there was no such live grant.
    pub async fn revoke_connection(
        &self,
        account_id: &str,
        grant_id: &str,
    ) -> Result<bool, StoreError> {
        let Some(grant) = self.store.grant(grant_id).await? else {
            return Ok(false);
        };
        if grant.subject.account_id != account_id {
            return Ok(false);
        }
        self.store.revoke_grant(grant_id, self.now()).await
    }

    /// The value of this server's session cookie in `headers`, if any.
    pub(crate) fn session_cookie<'h>(&self, headers: &'h HeaderMap) -> Option<&'h str> {
        mcp_door::cookie(headers, &self.config.session_cookie).filter(|v| v.len() <= 100)
    }

    /// The account the browser is signed in as (the session the consent page creates), for
    /// the product's own pages.
    pub async fn signed_in_account(
        &self,
        headers: &HeaderMap,
    ) -> Result<Option<String>, StoreError> {
        let Some(cookie) = self.session_cookie(headers) else {
            return Ok(None);
        };
        let session = self.store.session(&sha256_hex(cookie)).await?;
        Ok(session
            .filter(|s| s.expires_at > self.now())
            .map(|s| s.account_id))
    }

    /// Starts a browser session for `account_id`; the `Set-Cookie` value to send.
    pub async fn sign_in(&self, account_id: &str) -> Result<String, StoreError> {
        let value = self.token(32);
        let now = self.now();
        self.store
            .insert_session(&SessionRecord {
                id_hash: sha256_hex(&value),
                account_id: account_id.to_owned(),
                created_at: now,
                expires_at: now + ms(self.config.session_ttl),
            })
            .await?;
        Ok(self.cookie(&value, self.config.session_ttl.as_secs()))
    }

    /// Ends the browser's session; the `Set-Cookie` value that clears the cookie.
    pub async fn sign_out(&self, headers: &HeaderMap) -> Result<String, StoreError> {
        if let Some(cookie) = self.session_cookie(headers) {
            self.store.delete_session(&sha256_hex(cookie)).await?;
        }
        Ok(self.cookie("", 0))
    }

    fn cookie(&self, value: &str, max_age: u64) -> String {
        let secure = if self.config.secure() { "; Secure" } else { "" };
        format!(
            "{}={value}; Path=/; Max-Age={max_age}; HttpOnly; SameSite=Lax{secure}",
            self.config.session_cookie
        )
    }
}
