//! mcp-oauth's integration tests, one binary: every negative test of the security page by
//! its number (`nNN_…`), run on SQLite and, with `TEST_DATABASE_URL`, on PostgreSQL; the
//! positive flows; discovery snapshots; metadata documents; shared migrations; insta snapshots
//! of the JSON surface.

// The whole binary is test code; clippy.toml's allow-*-in-tests only covers `#[test]` bodies,
// not the shared helpers.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod harness;

mod authorize;
mod cimd;
mod discovery;
mod email_code;
mod flows;
mod migrations;
mod prop_params;
mod refusals;
mod register;
mod resource;
mod scopes;
mod snapshots;
mod token;
