//! The queue in front of the call log, off the request path: the door's audit hook hands each
//! row to a bounded queue and one writer task stores what has gathered in one multi-row
//! `INSERT` per flush (at most [`AUDIT_BATCH`] rows), so a call never waits for its audit row
//! and a busy server writes one statement per batch instead of one per call.
//! [`AuditWriter::flush`] waits until everything queued so far is stored (the feedback tool
//! uses it to find the caller's previous call; `app::run` on a clean stop, after the last
//! request has answered). What goes into a row is the hook's (`crate::mcp::audit`).
//!
//! A full queue never drops a row: the hook cannot wait (it is synchronous, called as the
//! response leaves), so the row goes to a task that waits for room in the queue (back-pressure
//! on the writer's pace, bounded by the door's in-flight limit, since each waiting row belongs
//! to a request that has just answered). [`AuditWriter::flush`] waits for those rows too. Each
//! spill is counted and logged. A batch the database refuses is retried
//! ([`WRITE_ATTEMPTS`]) and only then logged with its size and first request id.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use tokio::sync::{Notify, mpsc, oneshot};

use crate::model::AuditEntry;
use crate::store::{AUDIT_BATCH, SharedStore};

/// Rows the queue holds before a submit spills to a waiting task.
pub const DEFAULT_QUEUE: usize = 4_096;
/// Attempts at storing one batch before it is logged as lost.
pub const WRITE_ATTEMPTS: u32 = 3;

enum Msg {
    Entry(Box<AuditEntry>),
    Flush(oneshot::Sender<()>),
}

impl std::fmt::Debug for Msg {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("audit message")
    }
}

/// Rows waiting for room in a full queue, and the total spilled so far.
#[derive(Debug, Default)]
struct Spills {
    waiting: AtomicU64,
    total: AtomicU64,
    drained: Notify,
}

/// The queue in front of the writer task.
#[derive(Debug, Clone)]
pub struct AuditWriter {
    tx: mpsc::Sender<Msg>,
    spills: Arc<Spills>,
}

impl AuditWriter {
    /// Starts the writer task on the current runtime with a queue of `capacity` rows (at least
    /// one). It ends when every writer is dropped, after storing what was queued.
    pub fn spawn(store: SharedStore, capacity: usize) -> Self {
        let (tx, rx) = mpsc::channel::<Msg>(capacity.max(1));
        tokio::spawn(write_loop(store, rx));
        Self {
            tx,
            spills: Arc::default(),
        }
    }

    /// Queues a row without waiting. When the queue is full the row waits for room in a task
    /// of its own (counted in [`spilled`](Self::spilled)); it is lost only if the writer task
    /// is gone, which is logged.
    pub fn submit(&self, entry: AuditEntry) {
        match self.tx.try_send(Msg::Entry(Box::new(entry))) {
            Ok(()) => {}
            Err(mpsc::error::TrySendError::Full(msg)) => {
                let total = self.spills.total.fetch_add(1, Ordering::Relaxed) + 1;
                if total.is_power_of_two() {
                    tracing::warn!(
                        spilled = total,
                        "audit queue full: rows wait for the writer (raise the queue or look at the database)"
                    );
                }
                self.spills.waiting.fetch_add(1, Ordering::SeqCst);
                let (tx, spills) = (self.tx.clone(), Arc::clone(&self.spills));
                tokio::spawn(async move {
                    if tx.send(msg).await.is_err() {
                        tracing::error!("audit writer gone: a spilled row was not stored");
                    }
                    if spills.waiting.fetch_sub(1, Ordering::SeqCst) == 1 {
                        spills.drained.notify_waiters();
                    }
                });
            }
            Err(mpsc::error::TrySendError::Closed(_)) => {
                tracing::error!("audit writer gone: a row was not stored");
            }
        }
    }

    /// How many rows found the queue full since start.
    pub fn spilled(&self) -> u64 {
        self.spills.total.load(Ordering::Relaxed)
    }

    /// Resolves once every row submitted before this call has been written (or, after its
    /// attempts, logged as failed), spilled rows included.
    pub async fn flush(&self) {
        loop {
            let drained = self.spills.drained.notified();
            if self.spills.waiting.load(Ordering::SeqCst) == 0 {
                break;
            }
            drained.await;
        }
        let (tx, rx) = oneshot::channel();
        if self.tx.send(Msg::Flush(tx)).await.is_ok() {
            let _ = rx.await;
        }
    }
}

/// The writer task: takes whatever has gathered (up to [`AUDIT_BATCH`] rows), stores it in one
/// statement, and answers the flushes queued behind those rows.
async fn write_loop(store: SharedStore, mut rx: mpsc::Receiver<Msg>) {
    let mut batch: Vec<AuditEntry> = Vec::with_capacity(AUDIT_BATCH);
    let mut flushes: Vec<oneshot::Sender<()>> = Vec::new();
    while let Some(first) = rx.recv().await {
        let mut next = Some(first);
        while let Some(msg) = next.take() {
            match msg {
                Msg::Entry(entry) => batch.push(*entry),
                Msg::Flush(done) => flushes.push(done),
            }
            if batch.len() >= AUDIT_BATCH {
                break;
            }
            next = rx.try_recv().ok();
        }
        write(&store, &mut batch).await;
        for done in flushes.drain(..) {
            let _ = done.send(());
        }
    }
}

/// Stores `batch` (emptying it), retrying a refused statement.
async fn write(store: &SharedStore, batch: &mut Vec<AuditEntry>) {
    if batch.is_empty() {
        return;
    }
    let mut attempt = 1;
    loop {
        match store.insert_audits(batch).await {
            Ok(()) => break,
            Err(e) if attempt < WRITE_ATTEMPTS => {
                tracing::warn!(rows = batch.len(), attempt, error = %e, "audit batch not stored; retrying");
                tokio::time::sleep(Duration::from_millis(100 * u64::from(attempt))).await;
                attempt += 1;
            }
            Err(e) => {
                tracing::error!(
                    rows = batch.len(),
                    first_request_id = ?batch.first().map(|e| e.request_id),
                    error = %e,
                    "audit batch not stored"
                );
                break;
            }
        }
    }
    batch.clear();
}
