//! A response being built (status, JSON-RPC body, headers, the audit's error label) and its
//! finishing: request id, the admission permit riding the body until it is sent (an event
//! stream's body shares it with the task writing the stream).

use std::collections::VecDeque;

use axum::response::{IntoResponse, Response};
use http::{HeaderName, HeaderValue, StatusCode, header};
use serde_json::{Value, json};
use uuid::Uuid;

use tokio::sync::oneshot;

use super::REQUEST_ID_HEADER;
use super::sse::{BodyEnd, SseBody, SseStream, StreamEnd};
use crate::admission::{AdmissionError, Permit};
use crate::framing::FramingError;
use crate::gate::GateRefusal;
use crate::jsonrpc;

/// A response body: a JSON value, JSON already written (a tool result, serialized once
/// straight from its struct), or a tool call's event stream ([`super::stream`]).
pub(super) enum Payload {
    Value(Value),
    /// A serialized body, as chunks written in order (one, or a prepared result inside its
    /// envelope).
    Chunks(Vec<bytes::Bytes>),
    Stream(SseStream),
}

impl From<Value> for Payload {
    fn from(value: Value) -> Self {
        Self::Value(value)
    }
}

/// A response being built, before request id and audit are attached.
pub(super) struct Reply {
    pub(super) status: StatusCode,
    pub(super) body: Option<Payload>,
    pub(super) headers: Vec<(HeaderName, String)>,
    pub(super) error: Option<String>,
}

impl Reply {
    pub(super) fn json(body: Value) -> Self {
        Self {
            status: StatusCode::OK,
            body: Some(body.into()),
            headers: Vec::new(),
            error: None,
        }
    }

    /// A 200 whose body is already-serialized JSON.
    pub(super) fn serialized(body: Vec<u8>) -> Self {
        Self {
            status: StatusCode::OK,
            body: Some(Payload::Chunks(vec![bytes::Bytes::from(body)])),
            headers: Vec::new(),
            error: None,
        }
    }

    /// A 200 JSON answer whose body is `chunks`, in order, none of them copied.
    pub(super) fn chunks(chunks: Vec<bytes::Bytes>) -> Self {
        Self {
            status: StatusCode::OK,
            body: Some(Payload::Chunks(chunks)),
            headers: Vec::new(),
            error: None,
        }
    }

    /// A 200 `text/event-stream` answer whose events a tool call's task writes.
    pub(super) fn stream(stream: SseStream) -> Self {
        Self {
            status: StatusCode::OK,
            body: Some(Payload::Stream(stream)),
            headers: Vec::new(),
            error: None,
        }
    }

    pub(super) fn status(status: StatusCode, id: &Value, code: i64, message: &str) -> Self {
        Self {
            status,
            body: Some(jsonrpc::error(id, code, message, None).into()),
            headers: Vec::new(),
            error: Some(status.as_u16().to_string()),
        }
    }

    /// A transport or framing refusal whose JSON-RPC error carries `data`.
    pub(super) fn status_data(status: StatusCode, code: i64, message: &str, data: Value) -> Self {
        Self {
            status,
            body: Some(jsonrpc::error(&Value::Null, code, message, Some(data)).into()),
            headers: Vec::new(),
            error: Some(status.as_u16().to_string()),
        }
    }

    /// −32603: a failure outside any tool call, with the request id to quote.
    /// `status` is the presenter's [`Presenter::internal_error_status`].
    pub(super) fn internal(status: StatusCode, id: &Value, request_id: Uuid) -> Self {
        let mut reply = Self::rpc_error(
            id,
            jsonrpc::INTERNAL_ERROR,
            &format!("Internal error (request id {request_id})"),
            Some(json!({"request_id": request_id.to_string()})),
        );
        reply.status = status;
        reply
    }

    pub(super) fn rpc_error(id: &Value, code: i64, message: &str, data: Option<Value>) -> Self {
        Self {
            status: StatusCode::OK,
            body: Some(jsonrpc::error(id, code, message, data).into()),
            headers: Vec::new(),
            error: Some(code.to_string()),
        }
    }

    pub(super) fn header(mut self, name: HeaderName, value: String) -> Self {
        self.headers.push((name, value));
        self
    }

    pub(super) fn gate(id: &Value, refusal: GateRefusal) -> Self {
        let mut reply = Self {
            status: refusal.status,
            body: Some(jsonrpc::error(id, refusal.code, &refusal.message, refusal.data).into()),
            headers: Vec::new(),
            error: Some(refusal.code.to_string()),
        };
        if let Some(secs) = refusal.retry_after_secs {
            reply = reply.header(header::RETRY_AFTER, secs.to_string());
        }
        reply
    }

    pub(super) fn admission(e: &AdmissionError) -> Self {
        match e {
            AdmissionError::Limited {
                reason,
                retry_after_secs,
            } => Reply::status(
                StatusCode::TOO_MANY_REQUESTS,
                &Value::Null,
                jsonrpc::SERVER_ERROR,
                &format!("Too many requests: {reason}. Retry after {retry_after_secs} s."),
            )
            .header(header::RETRY_AFTER, retry_after_secs.to_string()),
            AdmissionError::Unavailable(detail) => {
                tracing::warn!(%detail, "admission backend unavailable");
                Reply::status(
                    StatusCode::SERVICE_UNAVAILABLE,
                    &Value::Null,
                    jsonrpc::SERVER_ERROR,
                    "Service unavailable: admission backend unreachable",
                )
                .header(header::RETRY_AFTER, "1".into())
            }
        }
    }
}

/// How much of a response has been sent when [`finish`] returns.
pub(super) enum Sent {
    /// The whole body, this many bytes.
    Whole(usize),
    /// An event stream: the call's end (its audit label) and the body's (bytes taken by the
    /// connection, whether the last event was) arrive here when each is over.
    Streaming {
        end: oneshot::Receiver<StreamEnd>,
        body: oneshot::Receiver<BodyEnd>,
    },
}

pub(super) fn finish(reply: Reply, request_id: Uuid, permit: Option<Permit>) -> (Response, Sent) {
    let (mut response, sent) = match reply.body {
        Some(Payload::Stream(stream)) => {
            stream.permit.hold(permit);
            let (body, body_end) = SseBody::new(stream.frames, stream.permit);
            let response = (
                reply.status,
                [
                    (header::CONTENT_TYPE, "text/event-stream"),
                    (header::CACHE_CONTROL, "no-cache"),
                ],
                axum::body::Body::new(body),
            )
                .into_response();
            (
                response,
                Sent::Streaming {
                    end: stream.end,
                    body: body_end,
                },
            )
        }
        Some(body) => {
            let chunks: VecDeque<bytes::Bytes> = match body {
                Payload::Value(v) => [bytes::Bytes::from(v.to_string())].into(),
                Payload::Chunks(chunks) => chunks.into(),
                Payload::Stream(_) => VecDeque::new(),
            };
            let len = chunks.iter().map(bytes::Bytes::len).sum();
            let response = (
                reply.status,
                [(header::CONTENT_TYPE, "application/json")],
                axum::body::Body::new(HoldBody {
                    chunks,
                    left: len as u64,
                    _permit: permit,
                }),
            )
                .into_response();
            (response, Sent::Whole(len))
        }
        None => (reply.status.into_response(), Sent::Whole(0)),
    };
    let headers = response.headers_mut();
    if let Ok(v) = HeaderValue::from_str(&request_id.to_string()) {
        headers.insert(REQUEST_ID_HEADER, v);
    }
    for (name, value) in reply.headers {
        if let Ok(v) = HeaderValue::from_str(&value) {
            headers.insert(name, v);
        }
    }
    (response, sent)
}

/// A response body of known length, written as its chunks (one, or a prepared result inside
/// its envelope: hyper writes them to the socket as they are, so none is copied here), that
/// keeps the request's admission permit until the body has been sent (or the connection
/// dropped): an admitted request holds its slot until its response is complete.
struct HoldBody {
    chunks: VecDeque<bytes::Bytes>,
    /// Bytes not yet handed over (the exact size hint, so the response has a Content-Length).
    left: u64,
    _permit: Option<Permit>,
}

impl http_body::Body for HoldBody {
    type Data = bytes::Bytes;
    type Error = std::convert::Infallible;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        _cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<http_body::Frame<Self::Data>, Self::Error>>> {
        let next = loop {
            match self.chunks.pop_front() {
                Some(chunk) if chunk.is_empty() => continue,
                next => break next,
            }
        };
        if let Some(chunk) = &next {
            self.left -= chunk.len() as u64;
        }
        std::task::Poll::Ready(next.map(|chunk| Ok(http_body::Frame::data(chunk))))
    }

    fn is_end_stream(&self) -> bool {
        self.left == 0
    }

    fn size_hint(&self) -> http_body::SizeHint {
        http_body::SizeHint::with_exact(self.left)
    }
}

pub(super) fn too_large(max: usize) -> Reply {
    Reply::status(
        StatusCode::PAYLOAD_TOO_LARGE,
        &Value::Null,
        jsonrpc::SERVER_ERROR,
        &format!("Request body over {max} bytes"),
    )
}

pub(super) fn framing_error(e: &FramingError) -> Reply {
    Reply::status_data(
        StatusCode::BAD_REQUEST,
        e.code(),
        &e.to_string(),
        json!({"hint": e.hint()}),
    )
}

pub(super) fn method_not_found(id: &Value, method: &str) -> Reply {
    Reply::rpc_error(
        id,
        jsonrpc::METHOD_NOT_FOUND,
        &format!("Method not found: {method}"),
        None,
    )
}
