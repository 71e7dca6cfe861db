//! Who is calling and how much they may do, the first stretch of a request's path after the
//! door: the principal [`kinds`] (tiers, scopes, service keys, public ids), the one
//! [`door_path`] grammar, bearer authentication ([`auth`]), OAuth verification and the
//! mcp-oauth glue ([`oauth`]: the verifier, the resource directory, Elixir's accounts), and
//! metering ([`limits`]: the hourly rate and the daily quota). What a tool does is `tools`'.

pub mod auth;
pub mod door_path;
pub mod kinds;
pub mod limits;
pub mod oauth;
