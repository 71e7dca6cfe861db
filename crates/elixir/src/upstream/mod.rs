//! Reading the Clash Royale API: the [`client`] (HTTP and the bearer token), the [`budget`]
//! (§7.3 lanes and the reaction to 429/503/403, its state one database row every instance
//! updates under a lock), the [`archive`] of raw payloads (§7.5), and
//! [`Upstream::fetch`], which puts them together and leaves an append-only receipt of every
//! fetch, with the raw JSON of every 200 kept in the database for two hours. What a payload
//! means (cards, battles, races) is the domain's; when to read is the recorder's.

pub mod archive;
pub mod budget;
pub mod client;
pub mod error;

use std::path::PathBuf;
use std::time::Duration;

use mcp_door::Clock;
use sha2::{Digest, Sha256};

use crate::domain::{Millis, iso};
use crate::model::{RawPayload, Receipt};
use crate::store::SharedStore;
pub use archive::Archive;
pub use budget::{Admission, Budget, BudgetConfig, Lane, PauseCause, Reaction, Refusal};
pub use client::CrClient;
use elixir_record::Tag;
pub use error::UpstreamError;

/// The official API's base URL.
pub const DEFAULT_BASE_URL: &str = "https://api.clashroyale.com/v1";

/// What the API is read for. Each endpoint has a path template (what receipts record) and a
/// subject (the tag it is about, if any); tags go upstream as `%23…` (§6.1).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Endpoint {
    /// `GET /cards`: the card catalogue.
    Cards,
    /// `GET /players/{tag}`: a profile and its collection.
    Player(Tag),
    /// `GET /players/{tag}/battlelog`: the latest ~30 battles.
    Battlelog(Tag),
    /// `GET /clans/{tag}`: a clan and its member list.
    Clan(Tag),
    /// `GET /clans/{tag}/members`: the member list alone (paged).
    ClanMembers(Tag),
}

impl Endpoint {
    /// The path template, as receipts record it.
    pub fn template(&self) -> &'static str {
        match self {
            Endpoint::Cards => "/cards",
            Endpoint::Player(_) => "/players/{tag}",
            Endpoint::Battlelog(_) => "/players/{tag}/battlelog",
            Endpoint::Clan(_) => "/clans/{tag}",
            Endpoint::ClanMembers(_) => "/clans/{tag}/members",
        }
    }

    /// The path to request.
    pub fn path(&self) -> String {
        match self {
            Endpoint::Cards => "/cards".to_owned(),
            Endpoint::Player(t) => format!("/players/{}", t.path()),
            Endpoint::Battlelog(t) => format!("/players/{}/battlelog", t.path()),
            Endpoint::Clan(t) => format!("/clans/{}", t.path()),
            Endpoint::ClanMembers(t) => format!("/clans/{}/members", t.path()),
        }
    }

    /// The player or clan tag the read is about.
    pub fn subject(&self) -> Option<String> {
        match self {
            Endpoint::Cards => None,
            Endpoint::Player(t)
            | Endpoint::Battlelog(t)
            | Endpoint::Clan(t)
            | Endpoint::ClanMembers(t) => Some(t.to_string()),
        }
    }
}

/// How to reach the API and where to archive.
#[derive(Clone)]
pub struct UpstreamConfig {
    pub base_url: String,
    pub token: String,
    pub archive_dir: PathBuf,
    pub timeout: Duration,
    pub budget: BudgetConfig,
}

impl std::fmt::Debug for UpstreamConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UpstreamConfig")
            .field("base_url", &self.base_url)
            .field("token", &"<redacted>")
            .field("archive_dir", &self.archive_dir)
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

impl UpstreamConfig {
    /// The defaults around a token: the official URL, `./archive`, 20 s, the §7.3 budget.
    pub fn new(token: impl Into<String>) -> Self {
        Self {
            base_url: DEFAULT_BASE_URL.to_owned(),
            token: token.into(),
            archive_dir: PathBuf::from("./archive"),
            timeout: Duration::from_secs(20),
            budget: BudgetConfig::default(),
        }
    }
}

/// A successful (HTTP 200) read.
#[derive(Debug, Clone)]
pub struct Fetched {
    pub body: Vec<u8>,
    pub payload_sha256: String,
    pub fetched_at: Millis,
    pub admission: Admission,
    /// The upstream cache's `max-age`: reading again sooner returns the same payload.
    pub max_age_ms: Option<Millis>,
}

/// The API as the recorder reads it: budget, client, archive, receipts.
pub struct Upstream {
    client: CrClient,
    /// This instance's budget settings; the state is the database's, shared by every instance.
    budget: BudgetConfig,
    archive: Archive,
    store: SharedStore,
    clock: std::sync::Arc<dyn Clock>,
}

impl std::fmt::Debug for Upstream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Upstream")
            .field("client", &self.client)
            .field("archive", &self.archive)
            .finish_non_exhaustive()
    }
}

/// SHA-256 hex of a payload: its archive address.
pub fn payload_sha256(body: &[u8]) -> String {
    hex::encode(Sha256::digest(body))
}

impl Upstream {
    pub fn new(
        config: &UpstreamConfig,
        store: SharedStore,
        clock: std::sync::Arc<dyn Clock>,
    ) -> Result<Self, UpstreamError> {
        Ok(Self {
            client: CrClient::new(&config.base_url, &config.token, config.timeout)?,
            budget: config.budget,
            archive: Archive::new(&config.archive_dir),
            store,
            clock,
        })
    }

    pub fn archive(&self) -> &Archive {
        &self.archive
    }

    /// Runs `step` on the shared budget (one row-locked transaction) and returns its result.
    async fn with_budget<R: Send>(
        &self,
        step: impl FnOnce(&mut Budget, Millis) -> R + Send,
    ) -> Result<R, UpstreamError> {
        let now = self.clock.now_millis();
        let config = self.budget;
        let mut step = Some(step);
        let mut out = None;
        self.store
            .update_budget(now, &mut |stored| {
                let mut budget = Budget::restore(stored, config, now);
                if let Some(step) = step.take() {
                    out = Some(step(&mut budget, now));
                }
                budget.to_stored()
            })
            .await?;
        out.ok_or_else(|| UpstreamError::Config("the budget update did not run".into()))
    }

    /// Reads `endpoint` in `lane`. A refusal of the budget sends nothing and leaves no receipt;
    /// every request sent leaves one (status null when no answer came), and every 200 is
    /// archived and kept raw for two hours before this returns.
    pub async fn fetch(&self, lane: Lane, endpoint: &Endpoint) -> Result<Fetched, UpstreamError> {
        let admission = self.with_budget(|b, now| b.acquire(lane, now)).await??;
        let answer = self.client.get(&endpoint.path()).await;
        let fetched_at = self.clock.now_millis();
        let mut receipt = Receipt {
            endpoint: endpoint.template().to_owned(),
            subject: endpoint.subject(),
            fetched_at,
            status: None,
            payload_sha256: None,
            admission: admission.as_str().to_owned(),
        };
        let answer = match answer {
            Ok(a) => a,
            Err(e) => {
                self.with_budget(|b, _| b.observe_no_answer()).await?;
                self.store.record_fetch(&receipt, None).await?;
                return Err(e);
            }
        };
        receipt.status = Some(i64::from(answer.status));
        let (status, retry_after) = (answer.status, answer.retry_after_ms);
        let reaction = self
            .with_budget(move |b, _| b.observe(status, retry_after, fetched_at))
            .await?;
        log_reaction(endpoint, reaction);
        if answer.status != 200 {
            self.store.record_fetch(&receipt, None).await?;
            let retry_at = match reaction {
                Reaction::Paused { until, .. } => Some(until),
                Reaction::CircuitOpened { probe_at } | Reaction::CircuitStillOpen { probe_at } => {
                    Some(probe_at)
                }
                _ => None,
            };
            return Err(UpstreamError::Status {
                status: answer.status,
                retry_at,
            });
        }
        let sha = payload_sha256(&answer.body);
        if let Err(e) = self.archive.put(&sha, &answer.body).await {
            self.store.record_fetch(&receipt, None).await?;
            return Err(UpstreamError::Archive(e.to_string()));
        }
        receipt.payload_sha256 = Some(sha.clone());
        let raw = std::str::from_utf8(&answer.body)
            .ok()
            .map(|body| RawPayload {
                payload_sha256: sha.clone(),
                endpoint: receipt.endpoint.clone(),
                subject: receipt.subject.clone(),
                body: body.to_owned(),
                fetched_at,
            });
        self.store.record_fetch(&receipt, raw.as_ref()).await?;
        if raw.is_none() {
            return Err(UpstreamError::Payload(format!(
                "the body of {} is not UTF-8 (archived as {sha})",
                endpoint.template()
            )));
        }
        Ok(Fetched {
            body: answer.body,
            payload_sha256: sha,
            fetched_at,
            admission,
            max_age_ms: answer.max_age_ms,
        })
    }
}

fn log_reaction(endpoint: &Endpoint, reaction: Reaction) {
    let endpoint = endpoint.template();
    match reaction {
        Reaction::None => {}
        Reaction::Paused { until, cause } => {
            tracing::warn!(endpoint, until = %iso(until), cause = cause.as_str(), "upstream paused both lanes");
        }
        Reaction::Forbidden { streak } => {
            tracing::warn!(endpoint, streak, "upstream answered 403");
        }
        // The operator alert of §7.3: an error-level event names the circuit and the probe.
        Reaction::CircuitOpened { probe_at } => tracing::error!(
            endpoint,
            probe_at = %iso(probe_at),
            alert = "operator",
            "upstream circuit open after consecutive 403s: check the API token and its allowed IP addresses"
        ),
        Reaction::CircuitStillOpen { probe_at } => {
            tracing::warn!(endpoint, probe_at = %iso(probe_at), "upstream probe answered 403; circuit stays open");
        }
        Reaction::CircuitClosed => tracing::info!(endpoint, "upstream circuit closed"),
    }
}
