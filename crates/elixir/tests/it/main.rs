//! Integration tests of Elixir over a real port-0 listener: the protocol surface, OAuth, the
//! web pages (also in headless Chromium when it is installed), the card catalogue read from a
//! fake Clash Royale API; SQLite always, PostgreSQL too when `TEST_DATABASE_URL` is set (and
//! two instances sharing it), the real binary with the official Python SDK when
//! `SIDEQUEST_PY` is set and with the official TypeScript SDK when `ELIXIR_NODE_DIR` is set.

// The whole binary is test code.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod account_pages;
mod account_tools;
mod auth;
mod backup;
mod battles_tools;
mod browser;
mod cards;
mod chromium;
mod clock;
mod cluster;
mod counting_store;
mod declarations;
mod demo;
mod docs;
mod edge;
mod errors;
mod feedback;
mod initialize;
mod lifecycle;
mod limits;
mod live;
mod meta_rollups;
mod meta_tools;
mod metrics;
mod node_oauth;
mod oauth;
mod oauth_scopes;
mod outage;
mod outage_tools;
mod output_schemas;
mod pages;
mod players_tools;
mod prop_arguments;
mod python_oauth;
mod recipes;
mod record_store;
mod recorder;
mod refusals;
mod sdk_eras;
mod service_tools;
mod signin;
mod snapshots;
mod support;
mod time_travel;

/// The both-backends test generator, from testkit (modules import it as `crate::on_both_backends`).
pub(crate) use testkit::on_both_backends;
