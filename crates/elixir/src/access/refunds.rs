//! Refunds off the request path: a call whose day the gate spent but that the door refused
//! before the tool stage gets its day back when its audit record settles ([`settle`], from
//! the audit hook), and a refund the database could not take while the call failed is retried
//! in the background until it answers ([`retry`]). The refund a failing call makes on its way
//! out is the gate's (`access::gate::refund`); the counters are the door store's.

use std::sync::Arc;
use std::time::Duration;

use mcp_door::Extensions;

use crate::access::metering::{Billed, Framed, Resolved};
use crate::model::Window;
use crate::services::Services;
use crate::store::{SharedStore, StoreError};

/// Settles a finished request's metering: a call whose day the framed stage spent but that
/// the door refused before the tool stage (arguments not an object, a header mismatch) gets
/// it back, as if only its hour had been counted. The refund runs in a task of its own (the
/// audit hook that calls this cannot wait).
pub fn settle(services: &Arc<Services>, extensions: &Extensions) {
    if extensions.get::<Framed>() == Some(&Framed::Counted)
        && extensions.get::<Resolved>().is_none()
        && let Some(billed) = extensions.get::<Billed>().cloned()
    {
        let services = Arc::clone(services);
        tokio::spawn(async move {
            if let Err(e) = services
                .store
                .refund(&billed.subject, Window::Day, billed.start)
                .await
            {
                tracing::warn!(error = %e, "refund of an unresolved call not recorded");
            }
        });
    }
}

/// How long a refund the database could not take is retried, and the longest pause between
/// tries (a PostgreSQL outage the door answers with 503 while it lasts).
const REFUND_RETRY_FOR: Duration = Duration::from_secs(600);
const REFUND_RETRY_MAX_PAUSE: Duration = Duration::from_secs(5);

/// Retries one refund, pausing longer each time, until it is recorded or
/// [`REFUND_RETRY_FOR`] has passed.
pub async fn retry(store: SharedStore, billed: Billed) {
    let deadline = tokio::time::Instant::now() + REFUND_RETRY_FOR;
    let mut pause = Duration::from_millis(250);
    loop {
        tokio::time::sleep(pause).await;
        match store
            .refund(&billed.subject, Window::Day, billed.start)
            .await
        {
            Ok(()) => {
                tracing::info!(subject = %billed.subject, "deferred refund recorded");
                return;
            }
            Err(StoreError::Unavailable(_)) if tokio::time::Instant::now() < deadline => {
                pause = (pause * 2).min(REFUND_RETRY_MAX_PAUSE);
            }
            Err(e) => {
                tracing::warn!(error = %e, subject = %billed.subject, "refund not recorded");
                return;
            }
        }
    }
}
