//! mcp-oauth wired to Elixir: the authorization-server configuration (issuer = the public
//! URL, the six scopes, `account:email` never offered unasked), which `resource` URLs are
//! Elixir's doors and who may consent for each ([`ElixirDoors`]), Elixir's accounts as the
//! consent page needs them ([`ElixirAccounts`]), the mailer chosen on the command line, and
//! the periodic purge (mcp-oauth's expired rows, and Elixir's refusal counts past their
//! retention). The endpoints and the flows themselves are mcp-oauth's; verifying a presented
//! token is the door's request path (`access::gate::OAuthVerifier`).

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use mcp_door::Clock;
use mcp_oauth::{
    Account as OAuthAccount, AccountDirectory, AuthServer, AuthServerConfig, Consent,
    DirectoryError, Door, FileOutbox, Mailer, OAuthStore, ResourceDirectory, Secret, SmtpMailer,
    SqlStore, Subject,
};
use tokio_util::sync::CancellationToken;
use uuid::Uuid;

use crate::access::door_path;
use crate::access::kinds::{Kind, Random, STANDARD_SCOPES, Tier};
use crate::access::metering::DAY_MS;
use crate::access::refusals::REFUSAL_RETENTION_DAYS;
use crate::admin;
use crate::domain::Millis;
use crate::model::Account;
use crate::services::Settings;
use crate::store::{SharedStore, Store, StoreError};

/// The capability that only `/oauth/userinfo` reads; never offered unasked.
pub const EMAIL_SCOPE: &str = "account:email";

/// Every capability in canonical order: the five standard ones, then `account:email`.
pub fn all_scopes() -> Vec<String> {
    STANDARD_SCOPES
        .iter()
        .map(|s| (*s).to_owned())
        .chain([EMAIL_SCOPE.to_owned()])
        .collect()
}

/// Where the one-time codes go.
#[derive(Clone)]
pub enum MailSettings {
    /// One `.eml` file per message in this directory, plus a log line naming it.
    Outbox(PathBuf),
    /// An SMTP relay URL (`smtps://user:pass@host:465`, `smtp://…?tls=required`, `smtp://host:25`).
    Smtp(String),
}

impl std::fmt::Debug for OAuthSettingsSecret<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() {
            "Some(<redacted>)"
        } else {
            "None"
        })
    }
}

struct OAuthSettingsSecret<'a>(&'a Option<Vec<u8>>);

impl std::fmt::Debug for MailSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            // The URL may carry credentials.
            Self::Smtp(_) => f.write_str("Smtp(<redacted>)"),
            Self::Outbox(dir) => f.debug_tuple("Outbox").field(dir).finish(),
        }
    }
}

/// The authorization server's settings from the command line.
#[derive(Clone)]
pub struct OAuthSettings {
    /// HMAC key of the email codes, refresh successors and the account pages' CSRF tokens:
    /// at least 32 bytes, the same on every instance. `None`: a random one per process.
    pub secret: Option<Vec<u8>>,
    pub mail: MailSettings,
    /// `From:` of the code email (default `no-reply@<host>`).
    pub mail_from: Option<String>,
    /// Access-token life (3600 s; shorter only in tests).
    pub access_ttl: Duration,
    /// How often expired flows, codes, tokens and sessions are deleted.
    pub purge_every: Duration,
}

impl std::fmt::Debug for OAuthSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuthSettings")
            .field("secret", &OAuthSettingsSecret(&self.secret))
            .field("mail", &self.mail)
            .field("mail_from", &self.mail_from)
            .field("access_ttl", &self.access_ttl)
            .field("purge_every", &self.purge_every)
            .finish()
    }
}

impl Default for OAuthSettings {
    fn default() -> Self {
        Self {
            secret: None,
            mail: MailSettings::Outbox(PathBuf::from("outbox")),
            mail_from: None,
            access_ttl: Duration::from_secs(3600),
            purge_every: Duration::from_secs(15 * 60),
        }
    }
}

/// The authorization server the doors and the account pages share.
#[derive(Clone)]
pub struct OAuthParts {
    pub server: Arc<mcp_oauth::AuthServer>,
    /// The server secret, from which the account pages derive their CSRF tokens.
    pub secret: Arc<Vec<u8>>,
    /// The mailer of the consent page, which the site's sign-in page sends its codes with.
    pub mailer: Arc<dyn mcp_oauth::Mailer>,
}

/// A failure to set up the authorization server.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OAuthSetupError {
    #[error("OAuth store: {0}")]
    Store(#[from] mcp_oauth::StoreError),
    #[error("OAuth configuration: {0}")]
    Config(#[from] mcp_oauth::ConfigError),
    #[error("mailer: {0}")]
    Mail(#[from] mcp_oauth::MailError),
}

fn directory_error(e: StoreError) -> DirectoryError {
    DirectoryError(e.to_string())
}

/// Elixir's doors as `resource` URLs.
pub struct ElixirDoors {
    pub public_url: String,
    pub store: SharedStore,
}

#[async_trait]
impl ResourceDirectory for ElixirDoors {
    async fn door(&self, resource: &str) -> Result<Option<Door>, DirectoryError> {
        let Some(path) = resource.strip_prefix(&self.public_url) else {
            return Ok(None);
        };
        Ok(door_path::parse(path).map(|(kind, _)| Door {
            resource: resource.to_owned(),
            kind: kind.as_str().to_owned(),
        }))
    }

    async fn consent(&self, door: &Door, account_id: &str) -> Result<Consent, DirectoryError> {
        let Some(path) = door.resource.strip_prefix(&self.public_url) else {
            return Ok(Consent::Refused);
        };
        let Ok(account) = Uuid::parse_str(account_id) else {
            return Ok(Consent::Refused);
        };
        match door_path::parse(path) {
            Some((Kind::Person, _)) => Ok(Consent::Personal {
                kind: Kind::Person.as_str().to_owned(),
            }),
            Some((kind, Some(public_id))) => {
                let agent = self
                    .store
                    .agent_by_public_id(public_id)
                    .await
                    .map_err(directory_error)?;
                // Unknown and not-owned answer the same.
                Ok(match agent {
                    Some(a) if a.kind == kind && a.owner_account_id == account => {
                        Consent::For(Subject {
                            kind: kind.as_str().to_owned(),
                            id: a.id.to_string(),
                        })
                    }
                    _ => Consent::Refused,
                })
            }
            _ => Ok(Consent::Refused),
        }
    }
}

/// Elixir's accounts for the consent page: signing in by email finds or creates the account.
pub struct ElixirAccounts {
    pub store: SharedStore,
    pub clock: Arc<dyn Clock>,
    pub random: Arc<dyn Random>,
}

fn view(account: &Account) -> OAuthAccount {
    OAuthAccount {
        id: account.id.to_string(),
        display_name: account
            .email
            .clone()
            .unwrap_or_else(|| format!("account {}", &account.id.to_string()[..8])),
        email: account.email.clone(),
    }
}

impl ElixirAccounts {
    /// The account holding `email` (lowercased), created (member, UTC) if none does yet.
    pub async fn find_or_create(&self, email: &str) -> Result<Account, StoreError> {
        if let Some(found) = self.store.account_by_email(email).await? {
            return Ok(found);
        }
        match admin::create_account(
            &self.store,
            self.random.as_ref(),
            self.clock.now_millis(),
            Some(email),
            Tier::Member,
        )
        .await
        {
            Ok(account) => Ok(account),
            // Two first sign-ins raced: the other one created it.
            Err(admin::AdminError::Store(StoreError::Conflict(_))) => self
                .store
                .account_by_email(email)
                .await?
                .ok_or(StoreError::NotFound),
            Err(admin::AdminError::Store(e)) => Err(e),
            Err(e) => Err(StoreError::Internal(e.to_string())),
        }
    }
}

#[async_trait]
impl AccountDirectory for ElixirAccounts {
    async fn account_for_verified_email(
        &self,
        email: &str,
        _signed_in: Option<&OAuthAccount>,
    ) -> Result<Option<OAuthAccount>, DirectoryError> {
        // Every account Elixir creates carries its address, so the proven address always
        // names the account (a signed-in account without one is not adopted: see docs/elixir.md).
        let account = self.find_or_create(email).await.map_err(directory_error)?;
        Ok(Some(view(&account)))
    }

    async fn account(&self, id: &str) -> Result<Option<OAuthAccount>, DirectoryError> {
        let Ok(id) = Uuid::parse_str(id) else {
            return Ok(None);
        };
        Ok(self
            .store
            .account(id)
            .await
            .map_err(directory_error)?
            .as_ref()
            .map(view))
    }
}

/// The mcp-oauth store over the same database as Elixir's (its own pool; its migrations are
/// versions 1 000 001 and up in the shared `_sqlx_migrations`), migrated.
pub async fn connect_store(url: &str) -> Result<Arc<dyn OAuthStore>, OAuthSetupError> {
    let store: Arc<dyn OAuthStore> =
        Arc::new(SqlStore::connect(url, &SqlStore::DEFAULT_POOL).await?);
    store.migrate().await?;
    Ok(store)
}

/// The configuration Elixir runs mcp-oauth with.
pub fn config(site: &Settings, secret: Secret, settings: &OAuthSettings) -> AuthServerConfig {
    let mut config = AuthServerConfig::new(&site.public_url, secret, all_scopes());
    config.address_source = site.address_source.clone();
    config.default_scopes = STANDARD_SCOPES.iter().map(|s| (*s).to_owned()).collect();
    config.unasked_scopes = vec![EMAIL_SCOPE.to_owned()];
    config.email_scope = EMAIL_SCOPE.to_owned();
    config.service_name = "Elixir".to_owned();
    config.access_ttl = settings.access_ttl;
    if let Some(from) = &settings.mail_from {
        config.mail_from = from.clone();
    }
    config.scope_descriptions = vec![
        ("cr:read".into(), "read the record and the docs".into()),
        (
            "recordings:write".into(),
            "start tracking players and clans".into(),
        ),
        ("collections:write".into(), "edit your collections".into()),
        (
            "account:write".into(),
            "change your settings and nicknames".into(),
        ),
        ("feedback:write".into(), "file feedback".into()),
        (EMAIL_SCOPE.into(), "read your email address".into()),
    ];
    config
}

/// The mailer of `settings`.
pub fn mailer(settings: &MailSettings) -> Result<Arc<dyn Mailer>, OAuthSetupError> {
    Ok(match settings {
        MailSettings::Outbox(dir) => Arc::new(FileOutbox::new(dir.clone())?),
        MailSettings::Smtp(url) => Arc::new(SmtpMailer::from_url(url)?),
    })
}

/// The secret of `settings`, or a fresh random one (logged as a warning: codes in flight,
/// browser sessions' CSRF tokens and refresh graces do not survive a restart, and two
/// instances must share one).
pub fn secret(settings: &OAuthSettings, random: &dyn Random) -> Vec<u8> {
    settings.secret.clone().unwrap_or_else(|| {
        tracing::warn!(
            "no --oauth-secret: using a random one for this process (set it, the same on every instance)"
        );
        let mut bytes = [0u8; 32];
        random.fill(&mut bytes);
        bytes.to_vec()
    })
}

/// The authorization server over Elixir's store and accounts, with the secret it was built
/// with (the account pages derive their CSRF tokens from it) and its mailer.
pub fn build_server(
    site: &Settings,
    store: SharedStore,
    oauth_store: Arc<dyn OAuthStore>,
    settings: &OAuthSettings,
    clock: Arc<dyn Clock>,
    random: Arc<dyn Random>,
) -> Result<OAuthParts, OAuthSetupError> {
    let secret = secret(settings, random.as_ref());
    let config = config(site, Secret::new(secret.clone()), settings);
    let doors = Arc::new(ElixirDoors {
        public_url: config.issuer.clone(),
        store: Arc::clone(&store),
    });
    let accounts = Arc::new(ElixirAccounts {
        store,
        clock: Arc::clone(&clock),
        random,
    });
    let mailer = mailer(&settings.mail)?;
    let server = AuthServer::new(config, oauth_store, doors, accounts, Arc::clone(&mailer))?
        .with_clock(clock);
    Ok(OAuthParts {
        server: Arc::new(server),
        secret: Arc::new(secret),
        mailer,
    })
}

/// Deletes the refusal counts older than [`REFUSAL_RETENTION_DAYS`] at `now`; returns how
/// many rows went.
pub async fn purge_refusals(store: &dyn Store, now: Millis) -> Result<u64, StoreError> {
    let oldest_kept = crate::domain::iso(now - (REFUSAL_RETENTION_DAYS - 1) * DAY_MS);
    store.purge_refusals(&oldest_kept[..10]).await
}

/// Runs [`AuthServer::purge`] and [`purge_refusals`] every `every` until
/// `cancel` fires.
pub fn spawn_purge(
    oauth: Arc<AuthServer>,
    store: SharedStore,
    clock: Arc<dyn Clock>,
    every: Duration,
    cancel: CancellationToken,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(every);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                () = cancel.cancelled() => break,
                _ = tick.tick() => {
                    match oauth.purge().await {
                        Ok(n) => tracing::debug!(removed = n, "oauth purge"),
                        Err(e) => tracing::warn!(error = %e, "oauth purge failed"),
                    }
                    match purge_refusals(store.as_ref(), clock.now_millis()).await {
                        Ok(n) => tracing::debug!(removed = n, "refusal counts purge"),
                        Err(e) => tracing::warn!(error = %e, "refusal counts purge failed"),
                    }
                }
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scopes_are_canonical() {
        assert_eq!(all_scopes().len(), 6);
        assert_eq!(all_scopes()[5], EMAIL_SCOPE);
        let site = Settings {
            public_url: "http://127.0.0.1:8090".into(),
            ..Settings::default()
        };
        let c = config(&site, Secret::new([1u8; 32]), &OAuthSettings::default());
        c.validate().unwrap();
        assert_eq!(c.default_scopes.len(), 5);
    }
}
