//! Prometheus metrics of the doors: requests by door, method, tool and outcome with their
//! latency, admission refusals by reason, and gauges a product samples at scrape time (its
//! database pool, its in-process caches); served in the OpenMetrics text format by [`Metrics::router`].
//!
//! Every label value comes from a closed set, so a caller cannot grow the series: the door is
//! its route pattern, the method one of the MCP methods (else `other`), the tool a name in the
//! door's catalog (else `unknown`), the outcome `ok` or the audit's error label (an HTTP
//! status, a JSON-RPC code, or the error code a tool handed over in its `CallOutcome`, never
//! read from its text; anything that is not a plain word becomes `other`), the refusal reason
//! a static string of the admission layer.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError, RwLock};

use axum::Router;
use axum::extract::State;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use http::{StatusCode, header};
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::encoding::text::encode;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

use crate::audit::AuditRecord;

/// The methods counted by name; anything else is `other`.
const METHODS: [&str; 12] = [
    "initialize",
    "ping",
    "tools/list",
    "tools/call",
    "resources/list",
    "resources/read",
    "resources/templates/list",
    "prompts/list",
    "prompts/get",
    "notifications/initialized",
    "notifications/cancelled",
    "batch",
];

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RequestLabels {
    door: String,
    method: String,
    tool: String,
    outcome: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct LatencyLabels {
    door: String,
    method: String,
    tool: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RefusalLabels {
    door: String,
    reason: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct PoolLabels {
    pool: String,
    state: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct CacheLabels {
    cache: String,
}

/// A product's error word as a label value: kept when it is a plain word (letters, digits,
/// `_`, `-`, `.`, at most 40), else `other`, so no caller text reaches the exposition.
fn label_value(word: &str) -> &str {
    let plain = !word.is_empty()
        && word.len() <= 40
        && word
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'));
    if plain { word } else { "other" }
}

/// What a pool reports at scrape time: sqlkit's, so a store's [`sqlkit::Lifecycle`] answers it.
pub use sqlkit::PoolUse;

type PoolSampler = Box<dyn Fn() -> PoolUse + Send + Sync>;

/// What an in-process cache holds at scrape time: its entries and the weight they count
/// against its bound (bytes, for a cache weighed by size).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CacheUse {
    pub entries: u64,
    pub weight: u64,
}

type CacheSampler = Box<dyn Fn() -> CacheUse + Send + Sync>;

/// The metrics of one server process, shared by its doors.
pub struct Metrics {
    registry: Registry,
    requests: Family<RequestLabels, Counter>,
    latency: Family<LatencyLabels, Histogram>,
    refusals: Family<RefusalLabels, Counter>,
    pools: Family<PoolLabels, Gauge>,
    samplers: Mutex<Vec<(String, PoolSampler)>>,
    cache_entries: Family<CacheLabels, Gauge>,
    cache_weight: Family<CacheLabels, Gauge>,
    cache_samplers: Mutex<Vec<(String, CacheSampler)>>,
    /// The request counter and latency histogram of each (door, method, tool, outcome) seen,
    /// keyed by the four joined with NUL, which none of them holds (route patterns, method
    /// names, catalog tool names, plain words): a request finds its pair with one hash instead
    /// of building and hashing both families' label sets. It holds what the families hold, so
    /// it grows no further than they do (every label value is from a closed set).
    per_request: RwLock<HashMap<String, (Counter, Histogram)>>,
}

impl std::fmt::Debug for Metrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Metrics").finish_non_exhaustive()
    }
}

impl Default for Metrics {
    fn default() -> Self {
        Self::new()
    }
}

impl Metrics {
    /// A registry with the door families registered (prefix `mcp_door_`).
    pub fn new() -> Self {
        let mut registry = Registry::with_prefix("mcp_door");
        let requests = Family::<RequestLabels, Counter>::default();
        registry.register(
            "requests",
            "Requests by door, method, tool and outcome",
            requests.clone(),
        );
        let latency = Family::<LatencyLabels, Histogram>::new_with_constructor(
            (|| Histogram::new(exponential_buckets(0.001, 2.0, 15))) as fn() -> Histogram,
        );
        registry.register(
            "request_duration_seconds",
            "Time from the request to its complete response, by door, method and tool",
            latency.clone(),
        );
        let refusals = Family::<RefusalLabels, Counter>::default();
        registry.register(
            "admission_refusals",
            "Requests refused by the admission layer, by door and reason",
            refusals.clone(),
        );
        let pools = Family::<PoolLabels, Gauge>::default();
        registry.register(
            "pool_connections",
            "Database pool connections by pool and state (open, idle, in use)",
            pools.clone(),
        );
        let cache_entries = Family::<CacheLabels, Gauge>::default();
        registry.register(
            "cache_entries",
            "Entries held by an in-process cache, by cache",
            cache_entries.clone(),
        );
        let cache_weight = Family::<CacheLabels, Gauge>::default();
        registry.register(
            "cache_weight",
            "What an in-process cache's entries count against its bound (bytes for a cache bounded by size), by cache",
            cache_weight.clone(),
        );
        Self {
            registry,
            requests,
            latency,
            refusals,
            pools,
            samplers: Mutex::new(Vec::new()),
            cache_entries,
            cache_weight,
            cache_samplers: Mutex::new(Vec::new()),
            per_request: RwLock::new(HashMap::new()),
        }
    }

    /// Samples the in-process cache `cache` at every scrape (`cache` names it in the `cache`
    /// label).
    pub fn sample_cache(
        &self,
        cache: &str,
        sampler: impl Fn() -> CacheUse + Send + Sync + 'static,
    ) {
        if let Ok(mut samplers) = self.cache_samplers.lock() {
            samplers.push((cache.to_owned(), Box::new(sampler)));
        }
    }

    /// Samples `pool` at every scrape (`pool` names it in the `pool` label).
    pub fn sample_pool(&self, pool: &str, sampler: impl Fn() -> PoolUse + Send + Sync + 'static) {
        if let Ok(mut samplers) = self.samplers.lock() {
            samplers.push((pool.to_owned(), Box::new(sampler)));
        }
    }

    /// Counts one finished request. `known_tool` says whether the audited tool name is in the
    /// door's catalog.
    pub(crate) fn observe(&self, record: &AuditRecord, known_tool: bool) {
        let method = match record.method.as_deref() {
            Some(m) if METHODS.contains(&m) => m,
            Some(_) => "other",
            None => "-",
        };
        let tool = match record.tool.as_deref() {
            Some(t) if known_tool => t,
            Some(_) => "unknown",
            None => "-",
        };
        let outcome = record.error.as_deref().map_or("ok", label_value);
        #[allow(clippy::cast_precision_loss)]
        let seconds = record.duration_ms as f64 / 1000.0;
        let labels = [record.door.as_str(), method, tool, outcome];
        let mut key = String::with_capacity(labels.iter().map(|l| l.len() + 1).sum());
        for label in labels {
            key.push_str(label);
            key.push('\0');
        }
        let read = self
            .per_request
            .read()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some((requests, latency)) = read.get(&key) {
            requests.inc();
            latency.observe(seconds);
            return;
        }
        drop(read);
        let requests = self
            .requests
            .get_or_create(&RequestLabels {
                door: record.door.clone(),
                method: method.to_owned(),
                tool: tool.to_owned(),
                outcome: outcome.to_owned(),
            })
            .clone();
        let latency = self
            .latency
            .get_or_create(&LatencyLabels {
                door: record.door.clone(),
                method: method.to_owned(),
                tool: tool.to_owned(),
            })
            .clone();
        requests.inc();
        latency.observe(seconds);
        self.per_request
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(key, (requests, latency));
    }

    /// Counts one admission refusal.
    pub(crate) fn refused(&self, door: &str, reason: &str) {
        self.refusals
            .get_or_create(&RefusalLabels {
                door: door.to_owned(),
                reason: reason.to_owned(),
            })
            .inc();
    }

    /// The OpenMetrics text of every family, pools sampled now.
    pub fn render(&self) -> Result<String, std::fmt::Error> {
        if let Ok(samplers) = self.samplers.lock() {
            for (pool, sample) in samplers.iter() {
                let used = sample();
                for (state, value) in [
                    ("open", used.size),
                    ("idle", used.idle),
                    ("in_use", used.size.saturating_sub(used.idle)),
                ] {
                    self.pools
                        .get_or_create(&PoolLabels {
                            pool: pool.clone(),
                            state: state.to_owned(),
                        })
                        .set(i64::from(value));
                }
            }
        }
        let gauge = |n: u64| i64::try_from(n).unwrap_or(i64::MAX);
        if let Ok(samplers) = self.cache_samplers.lock() {
            for (cache, sample) in samplers.iter() {
                let held = sample();
                let labels = CacheLabels {
                    cache: cache.clone(),
                };
                self.cache_entries
                    .get_or_create(&labels)
                    .set(gauge(held.entries));
                self.cache_weight
                    .get_or_create(&labels)
                    .set(gauge(held.weight));
            }
        }
        let mut out = String::new();
        encode(&mut out, &self.registry)?;
        Ok(out)
    }

    /// `GET /metrics`. Serve it on a listener of its own (operators' network), not beside
    /// the doors.
    pub fn router(self: &Arc<Self>) -> Router {
        Router::new()
            .route("/metrics", get(scrape))
            .with_state(Arc::clone(self))
    }
}

/// Serves [`Metrics::router`] on `listener` in a task of its own until `stop` turns true.
/// The caller binds, so a bad address fails the server's start.
pub fn serve(
    metrics: &Arc<Metrics>,
    listener: tokio::net::TcpListener,
    mut stop: tokio::sync::watch::Receiver<bool>,
) -> std::io::Result<()> {
    tracing::info!(address = %listener.local_addr()?, "serving GET /metrics");
    let router = metrics.router();
    tokio::spawn(async move {
        let served = axum::serve(listener, router)
            .with_graceful_shutdown(async move {
                let _ = stop.wait_for(|s| *s).await;
            })
            .await;
        if let Err(e) = served {
            tracing::warn!(error = %e, "metrics listener failed");
        }
    });
    Ok(())
}

async fn scrape(State(metrics): State<Arc<Metrics>>) -> Response {
    match metrics.render() {
        Ok(text) => (
            [(
                header::CONTENT_TYPE,
                "application/openmetrics-text; version=1.0.0; charset=utf-8",
            )],
            text,
        )
            .into_response(),
        Err(_) => StatusCode::INTERNAL_SERVER_ERROR.into_response(),
    }
}

#[cfg(test)]
mod tests {
    use super::{CacheUse, Metrics, PoolUse, label_value};

    #[test]
    fn a_sampled_cache_is_read_at_each_scrape() {
        let metrics = Metrics::new();
        let held = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(3));
        let sampled = std::sync::Arc::clone(&held);
        metrics.sample_cache("reads", move || CacheUse {
            entries: sampled.load(std::sync::atomic::Ordering::Relaxed),
            weight: 4096,
        });
        let text = metrics.render().unwrap();
        assert!(
            text.contains("mcp_door_cache_entries{cache=\"reads\"} 3"),
            "{text}"
        );
        assert!(
            text.contains("mcp_door_cache_weight{cache=\"reads\"} 4096"),
            "{text}"
        );
        held.store(7, std::sync::atomic::Ordering::Relaxed);
        let text = metrics.render().unwrap();
        assert!(
            text.contains("mcp_door_cache_entries{cache=\"reads\"} 7"),
            "{text}"
        );
    }

    #[tokio::test]
    async fn pool_use_reads_the_pool_of_a_db() {
        let settings = sqlkit::PoolSettings {
            max_connections: 4,
            ..crate::DEFAULT_POOL
        };
        let db = sqlkit::Db::open("sqlite::memory:", &settings)
            .await
            .unwrap();
        // An in-memory database keeps exactly one connection, idle between statements.
        assert_eq!(PoolUse::of(&db), PoolUse { size: 1, idle: 1 });
    }

    fn record(tool: &str, error: Option<&str>) -> crate::audit::AuditRecord {
        crate::audit::AuditRecord {
            request_id: uuid::Uuid::nil(),
            door: "/play/mcp".into(),
            principal: None,
            principal_kind: None,
            subject: None,
            method: Some("tools/call".into()),
            tool: Some(tool.into()),
            arguments: None,
            http_status: 200,
            error: error.map(str::to_owned),
            duration_ms: 3,
            response_bytes: 10,
            extensions: crate::outcome::Extensions::default(),
        }
    }

    #[test]
    fn every_request_is_counted_once_in_its_series_from_many_threads() {
        let metrics = std::sync::Arc::new(Metrics::new());
        let threads: Vec<_> = (0..8)
            .map(|t| {
                let metrics = std::sync::Arc::clone(&metrics);
                std::thread::spawn(move || {
                    for i in 0..250 {
                        let error = (i % 5 == 0).then_some("not_found");
                        metrics.observe(&record("get_play_context", error), t % 2 == 0);
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        let text = metrics.render().unwrap();
        let series = |labels: &str| {
            let prefix = format!("mcp_door_requests_total{{{labels}}} ");
            text.lines()
                .find_map(|l| l.strip_prefix(prefix.as_str()))
                .unwrap_or_else(|| panic!("no {prefix}in {text}"))
                .to_owned()
        };
        let door = r#"door="/play/mcp",method="tools/call""#;
        // Known to the even threads' doors, unknown to the odd ones'; one in five refused.
        assert_eq!(
            series(&format!(r#"{door},tool="get_play_context",outcome="ok""#)),
            "800"
        );
        assert_eq!(
            series(&format!(
                r#"{door},tool="get_play_context",outcome="not_found""#
            )),
            "200"
        );
        assert_eq!(
            series(&format!(r#"{door},tool="unknown",outcome="ok""#)),
            "800"
        );
        assert_eq!(
            series(&format!(r#"{door},tool="unknown",outcome="not_found""#)),
            "200"
        );
        assert!(
            text.contains(&format!(
                r#"mcp_door_request_duration_seconds_count{{{door},tool="get_play_context"}} 1000"#
            )),
            "{text}"
        );
    }

    #[test]
    fn only_plain_words_become_label_values() {
        assert_eq!(label_value("bad_request"), "bad_request");
        assert_eq!(label_value("-32602"), "-32602");
        assert_eq!(label_value("422"), "422");
        assert_eq!(label_value("{\"error\""), "other");
        assert_eq!(label_value("a b"), "other");
        assert_eq!(label_value(""), "other");
        assert_eq!(label_value(&"x".repeat(40)), "x".repeat(40));
        assert_eq!(label_value(&"x".repeat(41)), "other");
    }
}
