//! Sidequest's one integration-test binary (one binary keeps link time down); each module
//! owns one area.

// Test code: a failed expectation is a panic, in helpers as much as in `#[test]` functions.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod audit_log;
mod author;
mod backup;
mod cluster;
mod crash;
mod deferred;
mod edge;
mod login_memory;
mod metrics;
mod outage;
mod output_schema;
mod player;
mod prop_arguments;
mod prop_text;
mod python_sdk;
mod read_cache;
mod recipes;
mod rest;
mod sdk_eras;
mod snapshots;
mod store;
mod support;
mod unauthorized;
mod web;

/// The both-backends test generator, from testkit (modules import it as `crate::on_both_backends`).
pub(crate) use testkit::on_both_backends;
