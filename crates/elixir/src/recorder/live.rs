//! The live lane (SURFACE §4.4): what `live: true` does for a tool. A record younger than the
//! upstream cache is served as is; otherwise one read is sent through the live lane of the
//! shared budget and awaited up to 2.5 s; if it has not landed the tool answers from the
//! record with `pending` (the read still lands and is stored). The caller's daily live count
//! is spent only when a request is sent: a refusal of the budget gives it back. Tools reach the
//! recorder only through this handle.

use std::sync::Arc;
use std::time::Duration;

use elixir_record::Tag;
use serde_json::{Value, json};

use super::Poller;
use crate::domain::{Millis, iso};
use crate::model::PollEndpoint;
use crate::upstream::{Lane, UpstreamError};

/// How long a call waits for its live read.
pub const LIVE_WAIT: Duration = Duration::from_millis(2_500);

/// The upstream cache of an endpoint (§4.4): a record this young is already live.
pub fn cache_ms(endpoint: PollEndpoint) -> Millis {
    match endpoint {
        PollEndpoint::Battlelog | PollEndpoint::Player => 60_000,
        PollEndpoint::Clan => 120_000,
    }
}

/// What a live request came to: the `live_status` of the answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LiveStatus {
    /// The record is as fresh as the API's cache.
    Fresh { observed_at: Millis },
    /// The read has not landed (or the lane is empty); ask again after `retry_after_s`.
    Pending {
        retry_after_s: i64,
        observed_at: Option<Millis>,
    },
    /// No live read is possible: `reason` says why.
    Unavailable {
        reason: &'static str,
        resets_at: Option<Millis>,
    },
}

impl LiveStatus {
    /// The `live_status` object.
    pub fn to_json(&self) -> Value {
        match self {
            LiveStatus::Fresh { observed_at } => {
                json!({"state": "fresh", "observed_at": iso(*observed_at)})
            }
            LiveStatus::Pending {
                retry_after_s,
                observed_at,
            } => {
                json!({"state": "pending", "retry_after_s": retry_after_s, "observed_at": observed_at.map(iso)})
            }
            LiveStatus::Unavailable { reason, resets_at } => {
                let mut v = json!({"state": "unavailable", "reason": reason});
                if let Some(at) = resets_at {
                    v["resets_at"] = json!(iso(*at));
                }
                v
            }
        }
    }
}

/// The spending side of a live read, the caller's: take one of today's live fetches (`false`
/// when the cap is spent), or give one back.
#[async_trait::async_trait]
pub trait LiveAllowance: Send + Sync {
    async fn take(&self) -> Result<bool, crate::store::StoreError>;
    async fn give_back(&self);
    /// When the cap resets (the next 00:00 UTC).
    fn resets_at(&self) -> Millis;
}

/// The handle tools hold: `None` lane when no API token is configured.
pub struct LiveLane {
    poller: Option<Arc<Poller>>,
}

impl std::fmt::Debug for LiveLane {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LiveLane")
            .field("configured", &self.poller.is_some())
            .finish()
    }
}

impl LiveLane {
    /// A lane over `poller`'s upstream and store.
    pub fn new(poller: Arc<Poller>) -> Self {
        Self {
            poller: Some(poller),
        }
    }

    /// No upstream: every live request is `unavailable`.
    pub fn unconfigured() -> Self {
        Self { poller: None }
    }

    /// Makes `tag`'s `endpoint` record live, if it can within [`LIVE_WAIT`].
    pub async fn refresh(
        &self,
        endpoint: PollEndpoint,
        tag: &Tag,
        observed_at: Option<Millis>,
        allowance: &dyn LiveAllowance,
    ) -> Result<LiveStatus, crate::store::StoreError> {
        let Some(poller) = &self.poller else {
            return Ok(match observed_at {
                Some(at) if fresh(endpoint, at, None) => LiveStatus::Fresh { observed_at: at },
                _ => LiveStatus::Unavailable {
                    reason: "not_configured",
                    resets_at: None,
                },
            });
        };
        let now = poller.clock.now_millis();
        if let Some(at) = observed_at
            && fresh(endpoint, at, Some(now))
        {
            return Ok(LiveStatus::Fresh { observed_at: at });
        }
        if !allowance.take().await? {
            return Ok(LiveStatus::Unavailable {
                reason: "quota_exceeded",
                resets_at: Some(allowance.resets_at()),
            });
        }
        let read = {
            let poller = Arc::clone(poller);
            let tag = tag.clone();
            // The read lands and is stored even when the call stops waiting for it.
            tokio::spawn(async move { poller.read_now(Lane::Live, endpoint, &tag).await })
        };
        let landed = match tokio::time::timeout(LIVE_WAIT, read).await {
            Err(_) => {
                return Ok(LiveStatus::Pending {
                    retry_after_s: 5,
                    observed_at,
                });
            }
            Ok(Err(join)) => return Err(crate::store::StoreError::Internal(join.to_string())),
            Ok(Ok(result)) => result,
        };
        let now = poller.clock.now_millis();
        Ok(match landed {
            Ok(at) => LiveStatus::Fresh { observed_at: at },
            Err(UpstreamError::Throttled { until, .. }) => {
                allowance.give_back().await;
                LiveStatus::Pending {
                    retry_after_s: ((until - now).max(0) + 999) / 1000,
                    observed_at,
                }
            }
            Err(UpstreamError::CircuitOpen { .. }) => {
                allowance.give_back().await;
                LiveStatus::Unavailable {
                    reason: "circuit_open",
                    resets_at: None,
                }
            }
            Err(UpstreamError::Status { status: 503, .. }) => LiveStatus::Unavailable {
                reason: "maintenance",
                resets_at: None,
            },
            Err(UpstreamError::Status {
                status: 429,
                retry_at,
                ..
            }) => LiveStatus::Pending {
                retry_after_s: retry_at.map_or(60, |at| ((at - now).max(0) + 999) / 1000),
                observed_at,
            },
            Err(UpstreamError::Status { status: 404, .. }) => LiveStatus::Unavailable {
                reason: "not_found_upstream",
                resets_at: None,
            },
            Err(UpstreamError::Payload(_)) => LiveStatus::Unavailable {
                reason: "payload_rejected",
                resets_at: None,
            },
            Err(e) => {
                tracing::warn!(error = %e, subject = %tag, "live read failed");
                LiveStatus::Unavailable {
                    reason: "upstream_error",
                    resets_at: None,
                }
            }
        })
    }
}

fn fresh(endpoint: PollEndpoint, observed_at: Millis, now: Option<Millis>) -> bool {
    now.is_some_and(|now| now - observed_at < cache_ms(endpoint))
}
