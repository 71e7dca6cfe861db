//! The SSE answer of a `tools/call` that asked for progress (`_meta.progressToken`) from a
//! client whose `Accept` allows `text/event-stream`: the handler runs as its own task under
//! the same deadline; if it ends before reporting anything the answer is the usual JSON body,
//! else the POST is answered `text/event-stream` with each `notifications/progress` and then
//! the JSON-RPC response as the last event (Streamable HTTP, every revision the door speaks).
//! The admission permit is held until the tool has ended and the body is done; the audit
//! record closes when both are over ([`StreamEnd`], [`BodyEnd`]), with the bytes the body
//! handed to the connection. A client that leaves mid-stream does not cancel the call (the
//! transport specification: disconnection is not cancellation).
//! What a tool may report is [`crate::progress`]'s.

use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use bytes::Bytes;
use serde_json::{Map, Value, json};
use tokio::sync::{mpsc, oneshot};
use tracing::Instrument;
use uuid::Uuid;

use super::Inner;
use super::call::{Answer, HandlerEnd};
use super::reply::{Payload, Reply};
use super::version::Version;
use crate::admission::Permit;
use crate::catalog::{CallContext, Handler, ToolFailure};
use crate::outcome::Extensions;
use crate::progress::{Notes, Progress, QUEUE};

/// The audit label of a streamed call whose client left before its answer was sent (the
/// tool's own label, if it has one, wins).
pub const CLIENT_CLOSED: &str = "client_closed";

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

/// What the audit learns from the task when the call has ended.
#[derive(Debug)]
pub(super) struct StreamEnd {
    /// The audit label: the tool's error code, else the final answer's (`504`, `-32603`…).
    pub(super) label: Option<String>,
    pub(super) extensions: Extensions,
}

/// What the audit learns from the body when the connection is done with it.
#[derive(Debug, Clone, Copy)]
pub(super) struct BodyEnd {
    /// Bytes handed to the connection.
    pub(super) bytes: usize,
    /// Whether the last event was among them; not when the client left first.
    pub(super) complete: bool,
}

impl BodyEnd {
    /// The audit label of a stream whose call ended with `label`: that label, else
    /// [`CLIENT_CLOSED`] when the body was dropped before its last event.
    pub(super) fn label(self, label: Option<String>) -> Option<String> {
        label.or_else(|| (!self.complete).then(|| CLIENT_CLOSED.to_owned()))
    }
}

/// The body of a streamed answer and what rides with it.
pub(super) struct SseStream {
    pub(super) frames: mpsc::Receiver<Bytes>,
    pub(super) permit: PermitSlot,
    pub(super) end: oneshot::Receiver<StreamEnd>,
}

/// The response body of an event stream: the events the call's task writes, counted as the
/// connection takes them, with the permit slot it shares with that task. When the connection
/// is done with it (every event taken, or the client gone) it reports a [`BodyEnd`].
pub(super) struct SseBody {
    frames: mpsc::Receiver<Bytes>,
    _permit: PermitSlot,
    bytes: usize,
    complete: bool,
    done: Option<oneshot::Sender<BodyEnd>>,
}

impl SseBody {
    pub(super) fn new(
        frames: mpsc::Receiver<Bytes>,
        permit: PermitSlot,
    ) -> (Self, oneshot::Receiver<BodyEnd>) {
        let (done, ended) = oneshot::channel();
        let body = Self {
            frames,
            _permit: permit,
            bytes: 0,
            complete: false,
            done: Some(done),
        };
        (body, ended)
    }
}

impl http_body::Body for SseBody {
    type Data = Bytes;
    type Error = std::convert::Infallible;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Self::Data>, Self::Error>>> {
        match self.frames.poll_recv(cx) {
            Poll::Ready(Some(frame)) => {
                self.bytes += frame.len();
                Poll::Ready(Some(Ok(http_body::Frame::data(frame))))
            }
            Poll::Ready(None) => {
                // the task closes the channel only after writing the answer
                self.complete = true;
                Poll::Ready(None)
            }
            Poll::Pending => Poll::Pending,
        }
    }
}

impl Drop for SseBody {
    fn drop(&mut self) {
        if let Some(done) = self.done.take() {
            let _ = done.send(BodyEnd {
                bytes: self.bytes,
                complete: self.complete,
            });
        }
    }
}

/// The request's admission permit, shared by the response body and the task that runs the
/// tool: released when both are done.
#[derive(Clone, Default)]
pub(super) struct PermitSlot(Arc<Mutex<Option<Permit>>>);

impl PermitSlot {
    pub(super) fn hold(&self, permit: Option<Permit>) {
        if let Ok(mut slot) = self.0.lock() {
            *slot = permit;
        }
    }
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
    super::call::answer(
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
        Some(Payload::Bytes(b)) => b,
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
