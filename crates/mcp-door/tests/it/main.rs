//! Integration tests of the door's request path, driven through a toy product (`support`):
//! route tests with `tower::ServiceExt::oneshot`, one module on a real port-0 listener, and
//! the Redis admission backend when `TEST_REDIS_URL` is set.

// The whole binary is test code; clippy.toml's allow-*-in-tests only covers `#[test]` bodies,
// not the shared helpers.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod admission;
mod audit;
mod auth;
mod body;
mod edge;
mod eras;
mod framing;
mod gate;
mod lifecycle;
mod listener;
mod metrics;
mod progress;
mod prop_framing;
mod provisional;
mod redis;
mod seam;
mod serve;
mod slow_clients;
mod snapshots;
mod staged_close;
mod support;
mod tls;
mod tools;
mod transport;
