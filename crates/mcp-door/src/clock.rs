//! Wall-clock time for the platform and its products, injected so tests can move it.

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

/// Milliseconds since the Unix epoch. The only way code outside this module reads the time.
pub trait Clock: Send + Sync + 'static {
    fn now_millis(&self) -> i64;
}

/// The real clock.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

impl Clock for SystemClock {
    #[allow(clippy::disallowed_methods)] // the one sanctioned read of the system clock
    fn now_millis(&self) -> i64 {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
            .unwrap_or(0)
    }
}

/// A clock that only moves when told to; shared by clones.
#[derive(Debug, Clone)]
pub struct FakeClock(Arc<AtomicI64>);

impl FakeClock {
    pub fn new(start_millis: i64) -> Self {
        Self(Arc::new(AtomicI64::new(start_millis)))
    }
    pub fn advance_millis(&self, by: i64) {
        self.0.fetch_add(by, Ordering::SeqCst);
    }
    pub fn set_millis(&self, to: i64) {
        self.0.store(to, Ordering::SeqCst);
    }
}

impl Clock for FakeClock {
    fn now_millis(&self) -> i64 {
        self.0.load(Ordering::SeqCst)
    }
}
