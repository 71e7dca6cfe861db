//! How an upstream read fails ([`UpstreamError`]), shared by the client, the fetch that
//! puts budget, client and archive together, and the recorder that branches on it.

use super::budget::Refusal;
use crate::domain::{Millis, iso};
use crate::store::StoreError;

/// A failed upstream read, as the recorder and (later) the live lane branch on it.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum UpstreamError {
    /// The budget refused: both lanes pause, or the lane has no token yet.
    #[error("the upstream budget refuses until {}: {reason}", iso(*until))]
    Throttled { until: Millis, reason: &'static str },
    /// Five consecutive 403s opened the circuit; only the recorder's probe may go, at
    /// `probe_at`.
    #[error("the upstream circuit is open after repeated 403s; next probe at {}", iso(*probe_at))]
    CircuitOpen { probe_at: Millis },
    /// The API answered with a status other than 200. `retry_at` is set when the budget paused
    /// (429, 503) or the circuit opened.
    #[error("the Clash Royale API answered HTTP {status}")]
    Status {
        status: u16,
        retry_at: Option<Millis>,
    },
    /// No HTTP answer (connection, TLS, timeout).
    #[error("the Clash Royale API could not be reached: {0}")]
    Transport(String),
    /// An answer that cannot be used as it is (too large, not UTF-8).
    #[error("the Clash Royale API's answer is unusable: {0}")]
    Payload(String),
    #[error("archiving the payload failed: {0}")]
    Archive(String),
    #[error("upstream configuration: {0}")]
    Config(String),
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl UpstreamError {
    /// The earliest instant worth trying again, when the budget knows it.
    pub fn retry_at(&self) -> Option<Millis> {
        match self {
            UpstreamError::Throttled { until, .. } => Some(*until),
            UpstreamError::CircuitOpen { probe_at } => Some(*probe_at),
            UpstreamError::Status { retry_at, .. } => *retry_at,
            _ => None,
        }
    }
}

impl From<Refusal> for UpstreamError {
    fn from(refusal: Refusal) -> Self {
        match refusal {
            Refusal::Paused { until, cause } => UpstreamError::Throttled {
                until,
                reason: cause.as_str(),
            },
            Refusal::Empty { until } => UpstreamError::Throttled {
                until,
                reason: "the lane has no token yet",
            },
            Refusal::CircuitOpen { probe_at } => UpstreamError::CircuitOpen { probe_at },
        }
    }
}
