//! The SSE answer of a `tools/call` that asked for progress (`_meta.progressToken`) from a
//! client whose `Accept` allows `text/event-stream`: the handler runs as its own task under
//! the same deadline; if it ends before reporting anything the answer is the usual JSON body,
//! else the POST is answered `text/event-stream` with each `notifications/progress` and then
//! the JSON-RPC response as the last event (Streamable HTTP, every revision the door speaks).
//! The admission permit is held until the tool has ended and the body is done; the audit
//! record closes when both are over ([`super::sse`]), with the bytes the body
//! handed to the connection. A client that leaves mid-stream does not cancel the call (the
//! transport specification: disconnection is not cancellation).
//! What a tool may report is [`crate::progress`]'s.

use std::sync::Arc;

use bytes::Bytes;
use serde_json::{Map, Value, json};
use tokio::sync::{mpsc, oneshot};
use tracing::Instrument;
use uuid::Uuid;

use super::Inner;
use super::answer::{Answer, HandlerEnd};
use super::reply::{Payload, Reply};
use super::sse::{PermitSlot, SseStream, StreamEnd};
use super::version::Version;
use crate::catalog::{CallContext, Handler, ToolFailure};
use crate::progress::{Notes, Progress, QUEUE};

/// What the door knows of one call it may stream.
pub(super) struct ToolRun {
    pub(super) inner: Arc<Inner>,
    pub(super) id: Value,
    pub(super) request_id: Uuid,
    pub(super) version: Version,
    pub(super) name: String,
    pub(super) params: Map<String, Value>,
    pub(super) token: Value,
}

/// How a call that asked for progress is answered.
pub(super) enum Ran {
    /// The handler ended before reporting: the usual answer, as one JSON body.
    Finished(Answer),
    /// The handler reported first: a `text/event-stream` reply whose body carries the rest.
    Streaming(Reply),
}

/// Runs the handler with a live progress reporter; see the module comment.
pub(super) async fn run(
    run: ToolRun,
    handler: Handler,
    mut ctx: CallContext,
    args: Map<String, Value>,
) -> Ran {
    let (progress, mut notes) = Progress::channel(run.token.clone());
    ctx.progress = progress;
    let deadline = run.inner.config.tool_deadline;
    let mut task = tokio::spawn(
        async move { tokio::time::timeout(deadline, handler(ctx, args)).await }.in_current_span(),
    );
    let first = tokio::select! {
        biased;
        joined = &mut task => return Ran::Finished(answer(&run, joined)),
        Some(note) = notes.recv() => note,
    };
    let (frames_tx, frames) = mpsc::channel(QUEUE);
    let (end_tx, end) = oneshot::channel();
    let permit = PermitSlot::default();
    tokio::spawn(
        drive(
            run,
            task,
            notes,
            first,
            Out {
                tx: frames_tx,
                gone: false,
            },
            end_tx,
            permit.clone(),
        )
        .in_current_span(),
    );
    Ran::Streaming(Reply::stream(SseStream {
        frames,
        permit,
        end,
    }))
}

/// The answer of a handler task that ended (a panic is an internal error, logged).
fn answer(run: &ToolRun, joined: Result<HandlerEnd, tokio::task::JoinError>) -> Answer {
    let end = joined.unwrap_or_else(|e| Ok(Err(ToolFailure::Internal(format!("tool task: {e}")))));
    super::answer::answer(
        &run.inner,
        &run.id,
        run.request_id,
        run.version,
        &run.params,
        &run.name,
        end,
    )
}

/// The events written to the body; a body that was dropped (the client left) stops the
/// writing, not the call.
struct Out {
    tx: mpsc::Sender<Bytes>,
    gone: bool,
}

impl Out {
    async fn event(&mut self, message: &[u8]) {
        if self.gone {
            return;
        }
        let mut frame = Vec::with_capacity(message.len() + 24);
        frame.extend_from_slice(b"event: message\ndata: ");
        frame.extend_from_slice(message);
        frame.extend_from_slice(b"\n\n");
        if self.tx.send(Bytes::from(frame)).await.is_err() {
            self.gone = true;
        }
    }

    async fn progress(&mut self, params: Value) {
        let note = json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": params});
        self.event(note.to_string().as_bytes()).await;
    }
}

/// Writes the reports as they come, then the answer, then tells the audit.
async fn drive(
    run: ToolRun,
    mut task: tokio::task::JoinHandle<HandlerEnd>,
    mut notes: Notes,
    first: Value,
    mut out: Out,
    end: oneshot::Sender<StreamEnd>,
    permit: PermitSlot,
) {
    out.progress(first).await;
    let joined = loop {
        tokio::select! {
            biased;
            Some(note) = notes.recv() => out.progress(note).await,
            joined = &mut task => break joined,
        }
    };
    // Reports made just before the handler returned still precede its answer.
    while let Ok(note) = notes.try_recv() {
        out.progress(note).await;
    }
    let answer = answer(&run, joined);
    let message = match answer.reply.body {
        // one event: the answer is written whole (a stream is the rare case)
        Some(Payload::Chunks(chunks)) => chunks.concat(),
        Some(Payload::Value(v)) => v.to_string().into_bytes(),
        Some(Payload::Stream(_)) | None => Vec::new(),
    };
    out.event(&message).await;
    drop(out.tx);
    // The permit goes with this task's end (and the body's): the call is over.
    drop(permit);
    let _ = end.send(StreamEnd {
        label: answer.label.or(answer.reply.error),
        extensions: answer.extensions,
    });
}
