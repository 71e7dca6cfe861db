//! The body of a streamed `tools/call` answer ([`super::stream`] writes it): the events as the
//! connection takes them, the admission permit it shares with the call's task, and what the
//! audit learns when the call ([`StreamEnd`]) and the body ([`BodyEnd`]) are over.

use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use bytes::Bytes;
use tokio::sync::{mpsc, oneshot};

use crate::admission::Permit;
use crate::outcome::Extensions;

/// The audit label of a streamed call whose client left before its answer was sent (the
/// tool's own label, if it has one, wins).
pub const CLIENT_CLOSED: &str = "client_closed";

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
