//! [`AuthServer`]: the configuration and the injected parts (store, directories, mailer,
//! clock, randomness, metadata fetcher) in one value, plus what every endpoint shares —
//! client lookup, token minting, rate windows and the discovery documents. The endpoints
//! themselves live in `authorize`, `token`, `register`, `resource` and `grants`; HTTP framing
//! in `http`.

use std::sync::Arc;

use mcp_door::{Clock, SystemClock};
use serde::Serialize;

use crate::cimd::{self, MetadataFetcher, Resolver};
use crate::config::{AuthServerConfig, ms};
use crate::crypto::{self, sha256_hex};
use crate::directory::{AccountDirectory, ResourceDirectory};
use crate::error::ConfigError;
use crate::mail::Mailer;
use crate::random::{self, OsRandom, RandomSource};
use crate::store::{AccessRecord, Millis, OAuthStore, RefreshRecord, StoreError};

/// A UTC day in milliseconds: the window of the registration cap.
pub(crate) const DAY_MS: i64 = 24 * 3600 * 1000;
/// The daily counter of never-used registrations ([`RegistrationPolicy::per_day`]): taken by
/// `register`, given back here at a client's first use and recomputed by the purge.
///
/// [`RegistrationPolicy::per_day`]: crate::RegistrationPolicy
pub(crate) const REGISTRATIONS_BUCKET: &str = "register:all";

/// The authorization server. Build it once, share it in an `Arc`, mount
/// [`AuthServer::router`] and call its resource-server methods from the doors.
pub struct AuthServer {
    pub(crate) config: AuthServerConfig,
    pub(crate) store: Arc<dyn OAuthStore>,
    pub(crate) doors: Arc<dyn ResourceDirectory>,
    pub(crate) accounts: Arc<dyn AccountDirectory>,
    pub(crate) mailer: Arc<dyn Mailer>,
    pub(crate) clock: Arc<dyn Clock>,
    pub(crate) random: Arc<dyn RandomSource>,
    pub(crate) metadata: Option<Resolver>,
}

impl std::fmt::Debug for AuthServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AuthServer")
            .field("issuer", &self.config.issuer)
            .finish_non_exhaustive()
    }
}

/// A client as the flows need it, whether registered or described by a metadata document.
#[derive(Debug, Clone)]
pub(crate) struct ClientInfo {
    pub client_id: String,
    pub client_name: String,
    pub redirect_uris: Vec<String>,
    /// Described by a Client ID Metadata Document (not registered here).
    pub from_document: bool,
}

/// A freshly minted access and refresh token pair and their records.
pub(crate) struct Pair {
    pub access: String,
    pub refresh: String,
    pub access_record: AccessRecord,
    pub refresh_record: RefreshRecord,
}

impl AuthServer {
    /// A server with the system clock and the OS random source. Fails on an invalid
    /// configuration.
    pub fn new(
        config: AuthServerConfig,
        store: Arc<dyn OAuthStore>,
        doors: Arc<dyn ResourceDirectory>,
        accounts: Arc<dyn AccountDirectory>,
        mailer: Arc<dyn Mailer>,
    ) -> Result<Self, ConfigError> {
        config.validate()?;
        Ok(Self {
            config,
            store,
            doors,
            accounts,
            mailer,
            clock: Arc::new(SystemClock),
            random: Arc::new(OsRandom),
            metadata: None,
        })
    }

    /// Replaces the clock (tests move time).
    pub fn with_clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self
    }

    /// Replaces the random source.
    pub fn with_random(mut self, random: Arc<dyn RandomSource>) -> Self {
        self.random = random;
        self
    }

    /// Enables resolving HTTPS `client_id`s through `fetcher` (effective only when
    /// `client_id_metadata_documents` is on).
    pub fn with_metadata_fetcher(mut self, fetcher: Arc<dyn MetadataFetcher>) -> Self {
        self.metadata = Some(Resolver::new(fetcher));
        self
    }

    pub fn config(&self) -> &AuthServerConfig {
        &self.config
    }

    /// The store, for the product's maintenance (e.g. a periodic [`OAuthStore::purge`]).
    pub fn store(&self) -> &Arc<dyn OAuthStore> {
        &self.store
    }

    /// Deletes what can no longer be used; returns the rows removed. Run it now and then
    /// (every few minutes: it also deletes the clients never used within
    /// [`RegistrationPolicy::unused_client_ttl`](crate::RegistrationPolicy) of registering and
    /// gives their slots of the day's registration cap back).
    pub async fn purge(&self) -> Result<u64, StoreError> {
        let now = self.now();
        let cutoff = now - ms(self.config.registration.client_life);
        let removed = self.store.purge(now, cutoff).await?;
        let today = Self::window(now, DAY_MS);
        let unused = self
            .store
            .purge_unused_clients(
                now - ms(self.config.registration.unused_client_ttl),
                REGISTRATIONS_BUCKET,
                today,
                today + DAY_MS,
            )
            .await?;
        Ok(removed + unused)
    }

    pub(crate) fn now(&self) -> Millis {
        self.clock.now_millis()
    }

    /// `n` random bytes, base64url.
    pub(crate) fn token(&self, n: usize) -> String {
        random::token(self.random.as_ref(), n)
    }

    /// The start of the fixed window of `len_ms` holding `now`.
    pub(crate) fn window(now: Millis, len_ms: i64) -> Millis {
        now - now.rem_euclid(len_ms)
    }

    /// The client, if it exists and has not lapsed (registered clients live
    /// `client_life` from their last use; documents only when enabled and valid).
    pub(crate) async fn client_info(
        &self,
        client_id: &str,
    ) -> Result<Option<ClientInfo>, StoreError> {
        let now = self.now();
        if cimd::looks_like_url(client_id) {
            let Some(resolver) = self
                .metadata
                .as_ref()
                .filter(|_| self.config.client_id_metadata_documents)
            else {
                return Ok(None);
            };
            return Ok(resolver
                .resolve(client_id, now)
                .await
                .ok()
                .map(|m| ClientInfo {
                    client_id: m.client_id,
                    client_name: m.client_name,
                    redirect_uris: m.redirect_uris,
                    from_document: true,
                }));
        }
        // No issued id holds NUL, and PostgreSQL refuses it in a text parameter (a 500 that a
        // property test found with `client_id=%00` on /oauth/authorize).
        if client_id.is_empty() || client_id.len() > 64 || client_id.contains('\0') {
            return Ok(None);
        }
        let Some(client) = self.store.client(client_id).await? else {
            return Ok(None);
        };
        if client.last_used_at + ms(self.config.registration.client_life) < now {
            return Ok(None);
        }
        // Never used within its first hour: as good as purged, whenever the purge runs.
        if client.first_used_at.is_none()
            && client.created_at + ms(self.config.registration.unused_client_ttl) <= now
        {
            return Ok(None);
        }
        Ok(Some(ClientInfo {
            client_id: client.client_id,
            client_name: client.client_name,
            redirect_uris: client.redirect_uris,
            from_document: false,
        }))
    }

    /// Records a registered client's use (its 365-day life restarts).
    pub(crate) async fn touch_client(&self, client: &ClientInfo) -> Result<(), StoreError> {
        if client.from_document {
            return Ok(());
        }
        self.store.touch_client(&client.client_id, self.now()).await
    }

    /// A consent issued `client` a code: its life restarts, and on its first use it becomes
    /// a used client, whose slot in its registration day's cap is given back.
    pub(crate) async fn client_issued_code(&self, client: &ClientInfo) -> Result<(), StoreError> {
        if client.from_document {
            return Ok(());
        }
        let now = self.now();
        self.store.touch_client(&client.client_id, now).await?;
        if let Some(registered) = self.store.first_use_client(&client.client_id, now).await? {
            let day = Self::window(registered, DAY_MS);
            self.store.return_rate(REGISTRATIONS_BUCKET, day).await?;
        }
        Ok(())
    }

    /// A new random access/refresh pair for `grant_id`.
    pub(crate) fn mint_pair(&self, grant_id: &str, now: Millis) -> Pair {
        let access = format!("{}{}", self.config.access_prefix, self.token(32));
        let refresh = format!("{}{}", self.config.refresh_prefix, self.token(32));
        self.pair(grant_id, now, access, refresh)
    }

    /// The successor pair of a refresh token: derived from it under the server secret, so a
    /// replay within the grace period can be answered with the same pair without storing any
    /// token in the clear.
    pub(crate) fn successor_pair(&self, grant_id: &str, now: Millis, refresh_token: &str) -> Pair {
        let key = self.config.secret.bytes();
        let derive =
            |label: &str| crypto::b64url(&crypto::hmac_bytes(key, &[label, refresh_token]));
        let access = format!(
            "{}{}",
            self.config.access_prefix,
            derive("access-successor")
        );
        let refresh = format!(
            "{}{}",
            self.config.refresh_prefix,
            derive("refresh-successor")
        );
        self.pair(grant_id, now, access, refresh)
    }

    fn pair(&self, grant_id: &str, now: Millis, access: String, refresh: String) -> Pair {
        Pair {
            access_record: AccessRecord {
                token_hash: sha256_hex(&access),
                grant_id: grant_id.to_owned(),
                created_at: now,
                expires_at: now + ms(self.config.access_ttl),
            },
            refresh_record: RefreshRecord {
                token_hash: sha256_hex(&refresh),
                grant_id: grant_id.to_owned(),
                created_at: now,
                expires_at: now + ms(self.config.refresh_ttl),
                rotated_at: None,
                successor_hash: None,
            },
            access,
            refresh,
        }
    }

    /// `GET /.well-known/oauth-authorization-server` (RFC 8414).
    pub fn authorization_server_metadata(&self) -> serde_json::Value {
        #[derive(Serialize)]
        struct Doc<'a> {
            issuer: &'a str,
            authorization_endpoint: String,
            token_endpoint: String,
            registration_endpoint: String,
            userinfo_endpoint: String,
            response_types_supported: [&'static str; 1],
            grant_types_supported: [&'static str; 2],
            code_challenge_methods_supported: [&'static str; 1],
            token_endpoint_auth_methods_supported: [&'static str; 1],
            scopes_supported: &'a [String],
            authorization_response_iss_parameter_supported: bool,
            #[serde(skip_serializing_if = "Option::is_none")]
            client_id_metadata_document_supported: Option<bool>,
        }
        let issuer = &self.config.issuer;
        let doc = Doc {
            issuer,
            authorization_endpoint: self.config.authorization_endpoint(),
            token_endpoint: format!("{issuer}/oauth/token"),
            registration_endpoint: format!("{issuer}/oauth/register"),
            userinfo_endpoint: format!("{issuer}/oauth/userinfo"),
            response_types_supported: ["code"],
            grant_types_supported: ["authorization_code", "refresh_token"],
            code_challenge_methods_supported: ["S256"],
            token_endpoint_auth_methods_supported: ["none"],
            scopes_supported: &self.config.scopes,
            authorization_response_iss_parameter_supported: true,
            client_id_metadata_document_supported: self
                .config
                .client_id_metadata_documents
                .then_some(true),
        };
        serde_json::to_value(doc).unwrap_or_default()
    }

    /// The protected-resource metadata (RFC 9728) of `resource`, a door's URL.
    pub fn protected_resource_metadata(&self, resource: &str) -> serde_json::Value {
        serde_json::json!({
            "resource": resource,
            "authorization_servers": [self.config.issuer],
            "scopes_supported": self.config.scopes,
            "bearer_methods_supported": ["header"],
        })
    }
}
