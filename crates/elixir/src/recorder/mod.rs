//! The recorder's scheduled reads (SURFACE §7.1), through the recorder lane. `/cards` once per
//! game day (10:00Z to 10:00Z, so as soon as possible after 10:00Z, and at once on a server
//! that has not read the current game day yet), claimed by one instance however many run; and
//! the players' battle logs and profiles and the clans' member lists by the cadence of
//! [`schedule`], leased row by row by [`worker`], stored by [`ingest`]'s mapping. A claim or
//! lease whose instance vanished lapses. Reading, budgeting and archiving are `upstream`'s;
//! what a payload means is `elixir_record`'s.

pub mod ingest;
pub mod live;
pub mod schedule;
pub mod worker;

use std::sync::Arc;
use std::time::Duration;

use mcp_door::Clock;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::domain::{Millis, game_day, iso};
use crate::model::{PollClaim, StoredCatalogue};
use crate::store::{SharedStore, StoreError};
use crate::upstream::{Endpoint, Lane, Upstream, UpstreamConfig, UpstreamError};
use elixir_record::cards::{self, CardsError};

/// The claim job of the daily `/cards` read.
pub const CARDS_JOB: &str = "cards";
/// How long the database keeps raw JSON (§7.5).
pub const RAW_RETENTION_MS: Millis = 2 * 3_600_000;

/// A failed scheduled read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RecorderError {
    #[error(transparent)]
    Upstream(#[from] UpstreamError),
    /// The payload arrived (and is archived) but the catalogue rules refuse it.
    #[error("the /cards payload was rejected: {0}")]
    Rejected(#[from] CardsError),
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A payload the normalization rules refuse as a whole (archived all the same).
    #[error("the payload was rejected: {0}")]
    Payload(String),
    /// A normalized value that could not be written as JSON (a bug).
    #[error("encoding failed: {0}")]
    Encode(String),
}

/// What one `/cards` read stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CardsRefreshed {
    pub cards: usize,
    pub tower_troops: usize,
    pub observed_at: Millis,
    pub payload_sha256: String,
    /// Whether the payload differs from the one the previous catalogue came from.
    pub changed: bool,
}

impl CardsRefreshed {
    /// The one-line summary `elixir cards refresh` prints.
    pub fn summary(&self) -> String {
        format!(
            "card catalogue: {} cards, {} tower troops, observed {} ({}, payload {})",
            self.cards,
            self.tower_troops,
            iso(self.observed_at),
            if self.changed { "changed" } else { "unchanged" },
            &self.payload_sha256[..self.payload_sha256.len().min(12)],
        )
    }

    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "cards": self.cards,
            "tower_troops": self.tower_troops,
            "observed_at": iso(self.observed_at),
            "payload_sha256": self.payload_sha256,
            "changed": self.changed,
        })
    }
}

/// Reads `/cards` once through the recorder lane, normalizes it and stores the catalogue;
/// then drops raw JSON older than two hours, whatever the read's outcome.
pub async fn refresh_cards(
    upstream: &Upstream,
    store: &SharedStore,
    clock: &dyn Clock,
) -> Result<CardsRefreshed, RecorderError> {
    let outcome = read_cards(upstream, store).await;
    let before = clock.now_millis() - RAW_RETENTION_MS;
    match store.purge_raw(before).await {
        Ok(0) => {}
        Ok(n) => tracing::debug!(removed = n, "raw payload purge"),
        Err(e) => tracing::warn!(error = %e, "raw payload purge failed"),
    }
    outcome
}

async fn read_cards(
    upstream: &Upstream,
    store: &SharedStore,
) -> Result<CardsRefreshed, RecorderError> {
    let fetched = upstream.fetch(Lane::Recorder, &Endpoint::Cards).await?;
    let catalogue = cards::normalize(&fetched.body)?;
    let previous = store.cards_catalogue().await?;
    let refreshed = CardsRefreshed {
        cards: catalogue.cards.len(),
        tower_troops: catalogue.tower_troops.len(),
        observed_at: fetched.fetched_at,
        payload_sha256: fetched.payload_sha256.clone(),
        changed: previous.is_none_or(|p| p.payload_sha256 != fetched.payload_sha256),
    };
    store
        .put_cards_catalogue(&StoredCatalogue {
            catalogue,
            payload_sha256: fetched.payload_sha256,
            observed_at: fetched.fetched_at,
        })
        .await?;
    Ok(refreshed)
}

/// How often the poller looks and how long a claim holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PollSettings {
    /// Between two looks at the schedule (one claim statement each).
    pub check_every: Duration,
    /// An unfinished claim of a vanished instance lapses after this.
    pub lease: Duration,
    /// Retry delay after a failure the budget has no time for (a transport error, a 500).
    pub retry_after_failure: Duration,
}

impl Default for PollSettings {
    fn default() -> Self {
        Self {
            check_every: Duration::from_secs(60),
            lease: Duration::from_secs(15 * 60),
            retry_after_failure: Duration::from_secs(15 * 60),
        }
    }
}

/// The scheduled reads of one instance.
pub struct Poller {
    pub upstream: Arc<Upstream>,
    pub store: SharedStore,
    pub clock: Arc<dyn Clock>,
    /// This instance's name on its claims.
    pub owner: String,
    pub settings: PollSettings,
}

impl std::fmt::Debug for Poller {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Poller")
            .field("owner", &self.owner)
            .field("settings", &self.settings)
            .finish_non_exhaustive()
    }
}

/// What one look at the schedule did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Tick {
    /// This game day's read is done, or another instance holds it.
    NotDue,
    /// This instance read and stored the catalogue.
    Read(CardsRefreshed),
    /// The read failed; look again at this instant (the claim stays this instance's).
    RetryAt(Millis),
}

fn millis(d: Duration) -> Millis {
    Millis::try_from(d.as_millis()).unwrap_or(Millis::MAX)
}

impl Poller {
    /// A poller named `owner` reading through its own client of `config`, over `store` and
    /// `clock`.
    pub fn over(
        config: &UpstreamConfig,
        store: SharedStore,
        clock: Arc<dyn Clock>,
        owner: impl Into<String>,
        settings: PollSettings,
    ) -> Result<Self, UpstreamError> {
        Ok(Self {
            upstream: Arc::new(Upstream::new(
                config,
                Arc::clone(&store),
                Arc::clone(&clock),
            )?),
            store,
            clock,
            owner: owner.into(),
            settings,
        })
    }

    /// Claims this game day's `/cards` read and, if won, performs it.
    pub async fn tick(&self) -> Result<Tick, StoreError> {
        let now = self.clock.now_millis();
        let slot = game_day(now);
        let won = self
            .store
            .claim_poll(&PollClaim {
                job: CARDS_JOB.to_owned(),
                slot: slot.clone(),
                owner: self.owner.clone(),
                at: now,
                lapsed_before: now - millis(self.settings.lease),
            })
            .await?;
        if !won {
            return Ok(Tick::NotDue);
        }
        match refresh_cards(&self.upstream, &self.store, self.clock.as_ref()).await {
            Ok(refreshed) => {
                self.finish(&slot).await?;
                tracing::info!(
                    cards = refreshed.cards,
                    tower_troops = refreshed.tower_troops,
                    changed = refreshed.changed,
                    game_day = %slot,
                    "card catalogue read"
                );
                Ok(Tick::Read(refreshed))
            }
            // Re-reading the same payload today would be refused again: the day is done, and
            // the archived payload waits for the fixed rule.
            Err(RecorderError::Rejected(e)) => {
                self.finish(&slot).await?;
                tracing::error!(error = %e, game_day = %slot, "card catalogue payload rejected");
                Ok(Tick::NotDue)
            }
            Err(e) => {
                let at = match &e {
                    RecorderError::Upstream(u) => u.retry_at(),
                    _ => None,
                }
                .unwrap_or(now + millis(self.settings.retry_after_failure));
                tracing::warn!(error = %e, retry_at = %iso(at), "card catalogue read failed");
                Ok(Tick::RetryAt(at))
            }
        }
    }

    async fn finish(&self, slot: &str) -> Result<(), StoreError> {
        self.store
            .finish_poll(CARDS_JOB, slot, &self.owner, self.clock.now_millis())
            .await
    }
}

/// Rows of the schedule one pass reads at most.
pub const PASS_LIMIT: i64 = 50;
/// Between two passes over the subjects' schedule when the last one found nothing to read.
pub const IDLE_PASS: Duration = Duration::from_secs(2);

/// Runs `poller` until `cancel`: the card catalogue's look every `check_every` (none before a
/// failed read's retry instant), and passes over the players' and clans' schedule, back to
/// back while there is work and every [`IDLE_PASS`] when there is none.
pub fn spawn_poller(poller: Poller, cancel: CancellationToken) -> JoinHandle<()> {
    tokio::spawn(async move {
        let mut not_before: Millis = Millis::MIN;
        let mut next_look: Millis = Millis::MIN;
        loop {
            let now = poller.clock.now_millis();
            if now >= not_before && now >= next_look {
                // A read in flight is abandoned on shutdown: its transaction rolls back, and
                // the claim lapses for the next instance.
                let ticked = tokio::select! {
                    () = cancel.cancelled() => break,
                    t = poller.tick() => t,
                };
                next_look = now + millis(poller.settings.check_every);
                not_before = match ticked {
                    Ok(Tick::RetryAt(at)) => at,
                    Ok(_) => Millis::MIN,
                    Err(e) => {
                        tracing::warn!(error = %e, "poll claim failed");
                        Millis::MIN
                    }
                };
            }
            let passed = tokio::select! {
                () = cancel.cancelled() => break,
                p = poller.pass(PASS_LIMIT) => p,
            };
            let busy = match passed {
                Ok(p) => p.read + p.failed > 0 && p.throttled == 0,
                Err(e) => {
                    tracing::warn!(error = %e, "recorder pass failed");
                    false
                }
            };
            let pause = if busy {
                Duration::ZERO
            } else {
                IDLE_PASS.min(poller.settings.check_every)
            };
            tokio::select! {
                () = cancel.cancelled() => break,
                () = tokio::time::sleep(pause) => {}
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_refresh_summary_and_its_json() {
        let r = CardsRefreshed {
            cards: 12,
            tower_troops: 4,
            observed_at: 1_767_225_600_000,
            payload_sha256: "ab".repeat(32),
            changed: true,
        };
        assert_eq!(
            r.summary(),
            "card catalogue: 12 cards, 4 tower troops, observed 2026-01-01T00:00:00Z (changed, payload abababababab)"
        );
        assert_eq!(
            r.to_json(),
            serde_json::json!({"cards": 12, "tower_troops": 4, "observed_at": "2026-01-01T00:00:00Z", "payload_sha256": "ab".repeat(32), "changed": true})
        );
        let settings = PollSettings::default();
        assert_eq!(settings.check_every, Duration::from_secs(60));
        assert_eq!(millis(settings.lease), 15 * 60_000);
    }
}
