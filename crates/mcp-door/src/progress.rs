//! Request-scoped progress: the typed reporter a tool handler receives in
//! [`crate::CallContext::progress`], which checks each report and queues it as a
//! `notifications/progress` for the door. Whether anything reaches the client — a
//! `_meta.progressToken` on the call and an `Accept` that allows `text/event-stream` — and how
//! (an SSE answer to that POST) is the door's (`door/stream.rs`); a tool only reports.

use std::sync::{Arc, Mutex};

use serde_json::{Map, Value, json};
use tokio::sync::mpsc;

/// Notifications a reporter may queue ahead of the client; past them a report is skipped
/// (progress is advisory, and a later report still tells the client where the call is).
pub(crate) const QUEUE: usize = 32;

/// A report a [`Progress`] refused; nothing was queued.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ProgressError {
    /// `progress` or `total` is NaN or infinite.
    #[error("progress and total must be finite numbers, got {0}")]
    NotFinite(f64),
    /// The specification requires every report to increase `progress`.
    #[error("progress must increase with each report: {given} after {last}")]
    NotIncreasing { last: f64, given: f64 },
    /// A `total` below the `progress` it accompanies.
    #[error("total {total} is below progress {progress}")]
    TotalBelowProgress { progress: f64, total: f64 },
}

/// What the door reads from a reporter: the `params` of each `notifications/progress`, in
/// the order reported.
pub(crate) type Notes = mpsc::Receiver<Value>;

struct Sink {
    token: Value,
    tx: mpsc::Sender<Value>,
}

/// The progress reporter of one call. Cloning it shares the same call's reporting (one
/// increasing sequence). When the client asked for no progress — or cannot read an event
/// stream — reports are still checked but go nowhere; [`Progress::is_requested`] says which.
#[derive(Clone, Default)]
pub struct Progress {
    sink: Option<Arc<Sink>>,
    last: Arc<Mutex<Option<f64>>>,
}

impl std::fmt::Debug for Progress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Progress")
            .field("token", &self.sink.as_ref().map(|s| &s.token))
            .finish_non_exhaustive()
    }
}

impl Progress {
    /// A reporter whose reports go nowhere (a call without a progress token).
    pub fn disabled() -> Self {
        Self::default()
    }

    /// A reporter for `token` and the queue the door reads it from.
    pub(crate) fn channel(token: Value) -> (Self, Notes) {
        let (tx, rx) = mpsc::channel(QUEUE);
        let reporter = Self {
            sink: Some(Arc::new(Sink { token, tx })),
            last: Arc::default(),
        };
        (reporter, rx)
    }

    /// Whether the client asked for progress on this call and can receive it.
    pub fn is_requested(&self) -> bool {
        self.sink.is_some()
    }

    /// Reports `progress` (of `total`, when known) with an optional human-readable `message`.
    /// Each report must increase `progress`; a refused report changes nothing. A report the
    /// client has no room for yet, or one made after the call was answered, is dropped: it is
    /// advisory and the specification lets a server send progress at whatever rate it likes.
    pub fn report(
        &self,
        progress: f64,
        total: Option<f64>,
        message: Option<&str>,
    ) -> Result<(), ProgressError> {
        for n in std::iter::once(progress).chain(total) {
            if !n.is_finite() {
                return Err(ProgressError::NotFinite(n));
            }
        }
        if let Some(total) = total
            && total < progress
        {
            return Err(ProgressError::TotalBelowProgress { progress, total });
        }
        // A poisoned lock only means another clone panicked mid-report; the value is a number.
        let mut last = self.last.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(before) = *last
            && progress <= before
        {
            return Err(ProgressError::NotIncreasing {
                last: before,
                given: progress,
            });
        }
        *last = Some(progress);
        drop(last);
        if let Some(sink) = &self.sink {
            let mut params = Map::new();
            params.insert("progressToken".into(), sink.token.clone());
            params.insert("progress".into(), number(progress));
            if let Some(total) = total {
                params.insert("total".into(), number(total));
            }
            if let Some(message) = message {
                params.insert("message".into(), Value::String(message.to_owned()));
            }
            // Full (the client is behind) or closed (the call is answered): dropped, see above.
            let _ = sink.tx.try_send(Value::Object(params));
        }
        Ok(())
    }
}

/// A whole number as an integer (`50`, not `50.0`), anything else as a float.
fn number(n: f64) -> Value {
    const EXACT: f64 = 9_007_199_254_740_992.0; // 2^53
    if n.fract() == 0.0 && n.abs() < EXACT {
        #[allow(clippy::cast_possible_truncation)]
        return json!(n as i64);
    }
    json!(n)
}

/// The `_meta.progressToken` of a request's `params`: `Ok(None)` without one, an error
/// message when it is neither a string nor an integer (the specification's only two kinds).
pub(crate) fn token(params: &Map<String, Value>) -> Result<Option<Value>, &'static str> {
    match params.get("_meta").and_then(|m| m.get("progressToken")) {
        None | Some(Value::Null) => Ok(None),
        Some(t @ Value::String(_)) => Ok(Some(t.clone())),
        Some(t @ Value::Number(n)) if n.is_i64() || n.is_u64() => Ok(Some(t.clone())),
        Some(_) => Err("params._meta.progressToken must be a string or an integer"),
    }
}

/// Whether an `Accept` header allows a `text/event-stream` answer (`text/event-stream`,
/// `text/*` or `*/*`, not with `q=0`). No header allows only the door's JSON answer: a
/// client that never said it reads event streams gets none.
pub(crate) fn accepts_event_stream(headers: &http::HeaderMap) -> bool {
    headers
        .get_all(http::header::ACCEPT)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|range| {
            let mut parts = range.split(';');
            let media = parts.next().unwrap_or_default().trim();
            let refused = parts.any(|p| {
                p.trim()
                    .strip_prefix("q=")
                    .and_then(|q| q.trim().parse::<f64>().ok())
                    .is_some_and(|q| q == 0.0)
            });
            !refused
                && ["text/event-stream", "text/*", "*/*"]
                    .iter()
                    .any(|m| media.eq_ignore_ascii_case(m))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reports_must_increase_and_a_refused_one_changes_nothing() {
        let (p, mut rx) = Progress::channel(json!("t-1"));
        p.report(0.0, Some(100.0), None).unwrap();
        p.report(50.0, Some(100.0), Some("half")).unwrap();
        assert_eq!(
            p.report(50.0, Some(100.0), None),
            Err(ProgressError::NotIncreasing {
                last: 50.0,
                given: 50.0
            })
        );
        assert_eq!(
            p.report(f64::NAN, None, None).unwrap_err().to_string(),
            "progress and total must be finite numbers, got NaN"
        );
        assert_eq!(
            p.report(60.0, Some(10.0), None),
            Err(ProgressError::TotalBelowProgress {
                progress: 60.0,
                total: 10.0
            })
        );
        p.clone().report(62.5, None, None).unwrap();
        let got: Vec<Value> = std::iter::from_fn(|| rx.try_recv().ok()).collect();
        assert_eq!(
            got,
            vec![
                json!({"progressToken": "t-1", "progress": 0, "total": 100}),
                json!({"progressToken": "t-1", "progress": 50, "total": 100, "message": "half"}),
                json!({"progressToken": "t-1", "progress": 62.5}),
            ]
        );
    }

    #[test]
    fn a_disabled_reporter_checks_but_sends_nothing() {
        let p = Progress::disabled();
        assert!(!p.is_requested());
        p.report(1.0, None, None).unwrap();
        assert!(p.report(0.5, None, None).is_err());
    }

    #[test]
    fn a_client_that_is_behind_loses_reports_not_the_call() {
        let (p, mut rx) = Progress::channel(json!(7));
        for i in 0..(QUEUE + 10) {
            #[allow(clippy::cast_precision_loss)]
            p.report(i as f64, None, None).unwrap();
        }
        assert_eq!(std::iter::from_fn(|| rx.try_recv().ok()).count(), QUEUE);
    }

    #[test]
    fn tokens_are_strings_or_integers() {
        let params = |meta: Value| json!({"_meta": meta}).as_object().unwrap().clone();
        assert_eq!(token(&Map::new()), Ok(None));
        assert_eq!(token(&params(json!({}))), Ok(None));
        assert_eq!(
            token(&params(json!({"progressToken": "a"}))),
            Ok(Some(json!("a")))
        );
        assert_eq!(
            token(&params(json!({"progressToken": 3}))),
            Ok(Some(json!(3)))
        );
        assert!(token(&params(json!({"progressToken": 1.5}))).is_err());
        assert!(token(&params(json!({"progressToken": {"x": 1}}))).is_err());
    }

    #[test]
    fn accept_headers() {
        let allows = |v: &str| {
            let mut h = http::HeaderMap::new();
            h.insert(http::header::ACCEPT, v.parse().unwrap());
            accepts_event_stream(&h)
        };
        assert!(allows("application/json, text/event-stream"));
        assert!(allows("text/event-stream;q=0.5"));
        assert!(allows("*/*"));
        assert!(!allows("application/json"));
        assert!(!allows("application/json, text/event-stream;q=0"));
        assert!(!accepts_event_stream(&http::HeaderMap::new()));
    }
}
