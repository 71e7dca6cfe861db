//! Admission: the pre-auth gate and the per-credential gate (sliding-window rate, per-credential
//! concurrency, global concurrency), in-process or in Redis so the numbers hold across
//! instances. A refused request spends no budget; an admitted one holds its concurrency slot
//! until its [`Permit`] is dropped.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::clock::Clock;

/// The refusal reason of a credential at its concurrency limit.
const CREDENTIAL_CONCURRENCY: &str = "per-token concurrency exceeded";

/// The per-credential and global limits. Configuration, not constants.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    /// Admitted requests per credential per sliding window.
    pub rate_per_window: u32,
    /// The sliding window (60 s for "per minute").
    pub window: Duration,
    /// Admitted requests in flight per credential.
    pub credential_concurrency: u32,
    /// Admitted requests in flight across every door sharing this admission.
    pub global_concurrency: u32,
    /// How long a Redis concurrency lease lives if its instance dies without releasing it.
    pub lease: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            rate_per_window: 60,
            window: Duration::from_secs(60),
            credential_concurrency: 2,
            global_concurrency: 8,
            lease: Duration::from_secs(120),
        }
    }
}

/// Why a request was not admitted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AdmissionError {
    /// A limit is reached → 429 with `Retry-After: retry_after_secs` (at least 1).
    #[error("{reason}; retry after {retry_after_secs} s")]
    Limited {
        reason: &'static str,
        retry_after_secs: u64,
    },
    /// The admission backend cannot be reached → 503.
    #[error("admission backend unavailable: {0}")]
    Unavailable(String),
}

/// An admitted request's hold on its concurrency slots; released on drop.
pub struct Permit {
    release: Option<Box<dyn FnOnce() + Send>>,
}

impl std::fmt::Debug for Permit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Permit")
            .field("held", &self.release.is_some())
            .finish()
    }
}

impl Permit {
    pub fn new(release: impl FnOnce() + Send + 'static) -> Self {
        Self {
            release: Some(Box::new(release)),
        }
    }
}

impl Drop for Permit {
    fn drop(&mut self) {
        if let Some(release) = self.release.take() {
            release();
        }
    }
}

/// The per-credential gate. Shared by every door that must share the global limit.
#[async_trait]
pub trait Admission: Send + Sync + 'static {
    async fn admit(&self, credential: &str) -> Result<Permit, AdmissionError>;
}

fn retry_secs(millis: i64) -> u64 {
    u64::try_from(millis.max(0))
        .unwrap_or(0)
        .div_ceil(1000)
        .max(1)
}

/// The gate in front of authentication: bounds how many requests this instance authenticates
/// at once, so floods of bad credentials cannot exhaust the credential store.
#[derive(Debug, Clone)]
pub struct PreAuthGate(Arc<Semaphore>);

impl PreAuthGate {
    pub fn new(capacity: usize) -> Self {
        Self(Arc::new(Semaphore::new(capacity)))
    }

    pub fn try_enter(&self) -> Result<OwnedSemaphorePermit, AdmissionError> {
        self.0
            .clone()
            .try_acquire_owned()
            .map_err(|_| AdmissionError::Limited {
                reason: "pre-auth admission exceeded",
                retry_after_secs: 1,
            })
    }
}

#[derive(Default)]
struct CredentialState {
    admitted: VecDeque<i64>,
    in_flight: u32,
}

#[derive(Default)]
struct LocalState {
    credentials: HashMap<String, CredentialState>,
    global_in_flight: u32,
    admits_since_sweep: u32,
}

/// In-process admission for one instance (the embedded default).
pub struct LocalAdmission {
    limits: Limits,
    clock: Arc<dyn Clock>,
    state: Arc<Mutex<LocalState>>,
}

impl LocalAdmission {
    pub fn new(limits: Limits, clock: Arc<dyn Clock>) -> Self {
        Self {
            limits,
            clock,
            state: Arc::new(Mutex::new(LocalState::default())),
        }
    }

    fn window_millis(&self) -> i64 {
        i64::try_from(self.limits.window.as_millis()).unwrap_or(i64::MAX)
    }
}

#[async_trait]
impl Admission for LocalAdmission {
    async fn admit(&self, credential: &str) -> Result<Permit, AdmissionError> {
        let now = self.clock.now_millis();
        let window = self.window_millis();
        let mut guard = self
            .state
            .lock()
            .map_err(|_| AdmissionError::Unavailable("poisoned".into()))?;
        let state = &mut *guard;
        state.admits_since_sweep += 1;
        if state.admits_since_sweep >= 1024 {
            state.admits_since_sweep = 0;
            state.credentials.retain(|_, c| {
                while c.admitted.front().is_some_and(|t| *t <= now - window) {
                    c.admitted.pop_front();
                }
                c.in_flight > 0 || !c.admitted.is_empty()
            });
        }
        let entry = state.credentials.entry(credential.to_owned()).or_default();
        while entry.admitted.front().is_some_and(|t| *t <= now - window) {
            entry.admitted.pop_front();
        }
        if entry.admitted.len() >= self.limits.rate_per_window as usize {
            let oldest = entry.admitted.front().copied().unwrap_or(now);
            return Err(AdmissionError::Limited {
                reason: "per-token rate exceeded",
                retry_after_secs: retry_secs(oldest + window - now),
            });
        }
        if entry.in_flight >= self.limits.credential_concurrency {
            return Err(AdmissionError::Limited {
                reason: CREDENTIAL_CONCURRENCY,
                retry_after_secs: 1,
            });
        }
        if state.global_in_flight >= self.limits.global_concurrency {
            return Err(AdmissionError::Limited {
                reason: "global concurrency exceeded",
                retry_after_secs: 1,
            });
        }
        entry.admitted.push_back(now);
        entry.in_flight += 1;
        state.global_in_flight += 1;
        drop(guard);
        let shared = Arc::clone(&self.state);
        let credential = credential.to_owned();
        Ok(Permit::new(move || {
            if let Ok(mut s) = shared.lock() {
                s.global_in_flight = s.global_in_flight.saturating_sub(1);
                if let Some(c) = s.credentials.get_mut(&credential) {
                    c.in_flight = c.in_flight.saturating_sub(1);
                }
            }
        }))
    }
}

/// Checks every limit and records the admission atomically. Time is Redis's own, so every
/// instance agrees. Concurrency slots are leases (sorted-set members scored by expiry), so a
/// crashed instance cannot leak them forever.
const ADMIT_SCRIPT: &str = r#"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local window = tonumber(ARGV[1])
local rate = tonumber(ARGV[2])
local cred_conc = tonumber(ARGV[3])
local global_conc = tonumber(ARGV[4])
local lease_id = ARGV[5]
local lease_ms = tonumber(ARGV[6])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now)
if redis.call('ZCARD', KEYS[1]) >= rate then
  local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
  return {1, tonumber(oldest[2]) + window - now}
end
if redis.call('ZCARD', KEYS[2]) >= cred_conc then return {2, 1000} end
if redis.call('ZCARD', KEYS[3]) >= global_conc then return {3, 1000} end
redis.call('ZADD', KEYS[1], now, lease_id)
redis.call('PEXPIRE', KEYS[1], window + 1000)
redis.call('ZADD', KEYS[2], now + lease_ms, lease_id)
redis.call('PEXPIRE', KEYS[2], lease_ms + 1000)
redis.call('ZADD', KEYS[3], now + lease_ms, lease_id)
redis.call('PEXPIRE', KEYS[3], lease_ms + 1000)
return {0, 0}
"#;

/// How long admission waits for Redis to connect, and for each answer: far above a healthy
/// round trip (well under a millisecond), well below the doors' 25 s tool deadline.
const REDIS_TIMEOUT: Duration = Duration::from_secs(2);

/// Removes a concurrency lease, off the request path, retrying while Redis does not answer
/// (a cut, a black hole, a restart), with a backoff from 100 ms up to 2 s, for as long as the
/// lease would live: a release lost to a fault would otherwise hold the slot until its lease
/// ends, and a lease taken by a script whose answer was lost would lock the credential out.
/// The release is counted in `releasing` from this call until Redis acknowledges it (or it is
/// given up).
fn release_lease(
    mut conn: redis::aio::ConnectionManager,
    releasing: Arc<Releasing>,
    cred_key: String,
    global_key: String,
    lease_id: String,
    lease: Duration,
) {
    if let Ok(handle) = tokio::runtime::Handle::try_current() {
        releasing.begin(&cred_key);
        handle.spawn(async move {
            let until = tokio::time::Instant::now() + lease;
            let mut backoff = Duration::from_millis(100);
            loop {
                let released: Result<(), _> = redis::pipe()
                    .zrem(&cred_key, &lease_id)
                    .ignore()
                    .zrem(&global_key, &lease_id)
                    .ignore()
                    .query_async(&mut conn)
                    .await;
                if released.is_ok() || tokio::time::Instant::now() + backoff > until {
                    releasing.end(&cred_key);
                    return;
                }
                tokio::time::sleep(backoff).await;
                backoff = (backoff * 2).min(Duration::from_secs(2));
            }
        });
    }
}

/// The lease releases this instance has begun and Redis has not acknowledged yet, per
/// credential key. A permit is released when its response is complete, but Redis hears of it a
/// round trip later: a client that sends its next requests as soon as it has read an answer
/// could find its own finished request still counted. A request refused for the credential's
/// concurrency while one of its releases is pending here waits for them, then asks once more
/// (as does one whose refusal raced a release that landed meanwhile).
#[derive(Debug, Default)]
struct Releasing {
    /// Per credential key: its releases not acknowledged yet, and what wakes their waiters.
    pending: Mutex<HashMap<String, (usize, Arc<tokio::sync::Notify>)>>,
    /// Releases acknowledged so far, of any credential: a refusal that raced one (the script
    /// counted the lease, then the release landed) asks once more too.
    acknowledged: std::sync::atomic::AtomicU64,
}

impl Releasing {
    fn ended(&self) -> u64 {
        self.acknowledged.load(std::sync::atomic::Ordering::SeqCst)
    }

    fn begin(&self, key: &str) {
        if let Ok(mut pending) = self.pending.lock() {
            pending.entry(key.to_owned()).or_default().0 += 1;
        }
    }

    fn end(&self, key: &str) {
        self.acknowledged
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let Ok(mut pending) = self.pending.lock() else {
            return;
        };
        if let Some((count, done)) = pending.get_mut(key) {
            *count -= 1;
            if *count == 0 {
                done.notify_waiters();
                pending.remove(key);
            }
        }
    }

    /// Waits, at most `limit`, until no release of `key` is pending; whether one was.
    async fn settled(&self, key: &str, limit: Duration) -> bool {
        let done = match self.pending.lock() {
            Ok(pending) => match pending.get(key) {
                Some((_, done)) => Arc::clone(done),
                None => return false,
            },
            Err(_) => return false,
        };
        let notified = done.notified();
        tokio::pin!(notified);
        // Registered before the count is looked at again, so an `end` in between wakes it.
        notified.as_mut().enable();
        let still = self
            .pending
            .lock()
            .map(|pending| pending.contains_key(key))
            .unwrap_or(false);
        if still {
            let _ = tokio::time::timeout(limit, notified).await;
        }
        true
    }
}

/// Admission whose counters live in Redis and hold across every server instance.
#[derive(Clone)]
pub struct RedisAdmission {
    conn: redis::aio::ConnectionManager,
    limits: Limits,
    prefix: String,
    script: Arc<redis::Script>,
    releasing: Arc<Releasing>,
}

impl RedisAdmission {
    /// Connects to `url`. Keys are namespaced by `prefix` (one per product deployment).
    ///
    /// Every exchange with Redis is bounded on the client: [`REDIS_TIMEOUT`] to connect and
    /// [`REDIS_TIMEOUT`] for an answer, so a Redis that is gone or stops answering (a
    /// black hole) costs a request at most a few seconds and a 503; the connection manager
    /// reconnects by itself on the next request once Redis is back.
    pub async fn connect(url: &str, prefix: &str, limits: Limits) -> Result<Self, AdmissionError> {
        let client =
            redis::Client::open(url).map_err(|e| AdmissionError::Unavailable(e.to_string()))?;
        let config = redis::aio::ConnectionManagerConfig::new()
            .set_connection_timeout(REDIS_TIMEOUT)
            .set_response_timeout(REDIS_TIMEOUT)
            .set_number_of_retries(1);
        let conn = redis::aio::ConnectionManager::new_with_config(client, config)
            .await
            .map_err(|e| AdmissionError::Unavailable(e.to_string()))?;
        Ok(Self {
            conn,
            limits,
            prefix: prefix.to_owned(),
            script: Arc::new(redis::Script::new(ADMIT_SCRIPT)),
            releasing: Arc::default(),
        })
    }

    fn keys(&self, credential: &str) -> [String; 3] {
        [
            format!("{}:rate:{credential}", self.prefix),
            self.concurrency_key(credential),
            format!("{}:conc:global", self.prefix),
        ]
    }

    /// The key of `credential`'s leases in flight.
    fn concurrency_key(&self, credential: &str) -> String {
        format!("{}:conc:{credential}", self.prefix)
    }
}

#[async_trait]
impl Admission for RedisAdmission {
    async fn admit(&self, credential: &str) -> Result<Permit, AdmissionError> {
        let ended = self.releasing.ended();
        match self.try_admit(credential).await {
            Err(AdmissionError::Limited {
                reason: CREDENTIAL_CONCURRENCY,
                ..
            }) if self
                .releasing
                .settled(&self.concurrency_key(credential), REDIS_TIMEOUT)
                .await
                || self.releasing.ended() != ended =>
            {
                self.try_admit(credential).await
            }
            answer => answer,
        }
    }
}

impl RedisAdmission {
    /// One admission script run: the rate, then both concurrency limits, in one atomic step.
    async fn try_admit(&self, credential: &str) -> Result<Permit, AdmissionError> {
        let keys = self.keys(credential);
        let lease_id = uuid::Uuid::new_v4().simple().to_string();
        let mut conn = self.conn.clone();
        let admitted: Result<(i64, i64), _> = self
            .script
            .key(&keys[0])
            .key(&keys[1])
            .key(&keys[2])
            .arg(self.limits.window.as_millis() as u64)
            .arg(self.limits.rate_per_window)
            .arg(self.limits.credential_concurrency)
            .arg(self.limits.global_concurrency)
            .arg(&lease_id)
            .arg(self.limits.lease.as_millis() as u64)
            .invoke_async(&mut conn)
            .await;
        let [_, cred_key, global_key] = keys;
        let (code, wait) = match admitted {
            Ok(answer) => answer,
            Err(e) => {
                // Unanswered is not undone: the script may still run (a partition that heals
                // delivers it) and take a lease no one would release until it expires,
                // locking the credential out. The release queued behind it removes it.
                let releasing = Arc::clone(&self.releasing);
                release_lease(
                    conn,
                    releasing,
                    cred_key,
                    global_key,
                    lease_id,
                    self.limits.lease,
                );
                return Err(AdmissionError::Unavailable(e.to_string()));
            }
        };
        match code {
            0 => {}
            1 => {
                return Err(AdmissionError::Limited {
                    reason: "per-token rate exceeded",
                    retry_after_secs: retry_secs(wait),
                });
            }
            2 => {
                return Err(AdmissionError::Limited {
                    reason: CREDENTIAL_CONCURRENCY,
                    retry_after_secs: 1,
                });
            }
            _ => {
                return Err(AdmissionError::Limited {
                    reason: "global concurrency exceeded",
                    retry_after_secs: 1,
                });
            }
        }
        let (lease, releasing) = (self.limits.lease, Arc::clone(&self.releasing));
        Ok(Permit::new(move || {
            release_lease(conn, releasing, cred_key, global_key, lease_id, lease)
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::FakeClock;

    fn local(rate: u32, conc: u32, global: u32) -> (LocalAdmission, FakeClock) {
        let clock = FakeClock::new(1_000_000);
        let limits = Limits {
            rate_per_window: rate,
            credential_concurrency: conc,
            global_concurrency: global,
            ..Limits::default()
        };
        (LocalAdmission::new(limits, Arc::new(clock.clone())), clock)
    }

    #[tokio::test]
    async fn a_pending_release_is_waited_for_and_none_is_not() {
        let releasing = Arc::new(Releasing::default());
        assert!(!releasing.settled("k", Duration::from_secs(5)).await);
        releasing.begin("k");
        releasing.begin("k");
        let ending = Arc::clone(&releasing);
        let ends = tokio::spawn(async move {
            ending.end("k");
            tokio::task::yield_now().await;
            ending.end("k");
        });
        assert!(releasing.settled("k", Duration::from_secs(5)).await);
        ends.await.unwrap();
        assert!(!releasing.settled("k", Duration::from_secs(5)).await);
        assert!(
            releasing.pending.lock().unwrap().is_empty(),
            "nothing is kept once settled"
        );
    }

    #[tokio::test]
    async fn rate_is_a_sliding_window_and_refusals_spend_nothing() {
        let (a, clock) = local(3, 10, 10);
        for _ in 0..3 {
            drop(a.admit("t").await.unwrap());
            clock.advance_millis(10_000);
        }
        // oldest admitted at 1_000_000, now 1_030_000 → frees at 1_060_000 → 30 s
        let err = a.admit("t").await.unwrap_err();
        assert_eq!(
            err,
            AdmissionError::Limited {
                reason: "per-token rate exceeded",
                retry_after_secs: 30
            }
        );
        // the refusal did not count: once the oldest leaves the window exactly one slot opens
        clock.set_millis(1_060_000);
        drop(a.admit("t").await.unwrap());
        assert!(a.admit("t").await.is_err());
        // another credential is unaffected
        drop(a.admit("u").await.unwrap());
    }

    #[tokio::test]
    async fn concurrency_per_credential_and_global() {
        let (a, _clock) = local(100, 2, 3);
        let p1 = a.admit("t").await.unwrap();
        let _p2 = a.admit("t").await.unwrap();
        let err = a.admit("t").await.unwrap_err();
        assert_eq!(
            err,
            AdmissionError::Limited {
                reason: "per-token concurrency exceeded",
                retry_after_secs: 1
            }
        );
        let _p3 = a.admit("u").await.unwrap();
        let err = a.admit("v").await.unwrap_err();
        assert_eq!(
            err,
            AdmissionError::Limited {
                reason: "global concurrency exceeded",
                retry_after_secs: 1
            }
        );
        drop(p1);
        let _p4 = a.admit("v").await.unwrap();
    }

    #[test]
    fn retry_after_is_whole_seconds_at_least_one() {
        assert_eq!(retry_secs(0), 1);
        assert_eq!(retry_secs(1), 1);
        assert_eq!(retry_secs(1000), 1);
        assert_eq!(retry_secs(1001), 2);
        assert_eq!(retry_secs(-5), 1);
    }
}
