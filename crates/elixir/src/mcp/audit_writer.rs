//! The queue in front of the call log: the door's audit hook must not block, so `audit` rows
//! go through a channel to one writer task that stores them; [`AuditWriter::flush`] waits
//! until everything queued so far is stored (the feedback tool uses it to find the caller's
//! previous call). What goes into a row is the hook's (`crate::mcp::audit`).

use tokio::sync::{mpsc, oneshot};

use crate::model::AuditEntry;
use crate::store::SharedStore;

enum Msg {
    Entry(Box<AuditEntry>),
    Flush(oneshot::Sender<()>),
}

/// The queue in front of the writer task.
#[derive(Debug, Clone)]
pub struct AuditWriter {
    tx: mpsc::UnboundedSender<Msg>,
}

impl std::fmt::Debug for Msg {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("audit message")
    }
}

impl AuditWriter {
    /// Starts the writer task on the current runtime. It ends when every writer is dropped.
    pub fn spawn(store: SharedStore) -> Self {
        let (tx, mut rx) = mpsc::unbounded_channel::<Msg>();
        tokio::spawn(async move {
            while let Some(msg) = rx.recv().await {
                match msg {
                    Msg::Entry(entry) => {
                        if let Err(e) = store.insert_audit(&entry).await {
                            tracing::warn!(request_id = %entry.request_id, error = %e, "audit row not stored");
                        }
                    }
                    Msg::Flush(done) => {
                        let _ = done.send(());
                    }
                }
            }
        });
        Self { tx }
    }

    /// Queues a row; never blocks (a row the task cannot store is logged and dropped).
    pub fn submit(&self, entry: AuditEntry) {
        let _ = self.tx.send(Msg::Entry(Box::new(entry)));
    }

    /// Resolves once every row queued before this call has been written (or failed).
    pub async fn flush(&self) {
        let (tx, rx) = oneshot::channel();
        if self.tx.send(Msg::Flush(tx)).is_ok() {
            let _ = rx.await;
        }
    }
}
