//! Elixir: a Clash Royale history recorder whose MCP doors (`/mcp` for people,
//! `/a/{public_id}/mcp` for agents, `/i/{public_id}/mcp` for integrations) sit behind OAuth 2.1
//! and service keys. This build is the protocol surface (versioned, metered, well-formed
//! envelopes, proven with the Help and Account tools) and the first piece of the record: the
//! upstream client with its budget and archive, and the daily card catalogue behind
//! `cards_catalog` and `elixir://cards`.

#![deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

pub mod admin;
pub mod app;
pub mod audit;
pub mod audit_writer;
pub mod auth;
pub mod cards;
pub mod cli;
pub mod content;
pub mod domain;
pub mod door_path;
pub mod envelope;
pub mod limits;
pub mod mcp;
pub mod model;
pub mod oauth;
pub mod recorder;
pub mod resources;
pub mod services;
pub mod store;
pub mod tools;
pub mod upstream;
pub mod web;

/// Where client addresses come from (re-exported for configuration).
pub use mcp_oauth::AddressSource;
