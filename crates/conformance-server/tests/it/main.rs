//! The conformance fixture server under the official suite (`conformance`) and on its own
//! (`fixtures`).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod conformance;
