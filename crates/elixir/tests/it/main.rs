//! Integration tests of Elixir's protocol surface over a real port-0 listener: SQLite always,
//! PostgreSQL too when `TEST_DATABASE_URL` is set.

// The whole binary is test code.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod auth;
mod declarations;
mod docs;
mod errors;
mod feedback;
mod initialize;
mod limits;
mod support;
