//! Elixir: a Clash Royale history recorder whose MCP doors (`/mcp` for people,
//! `/a/{public_id}/mcp` for agents, `/i/{public_id}/mcp` for integrations) sit behind OAuth 2.1
//! and service keys. This build is the protocol surface (versioned, metered, well-formed
//! envelopes, proven with the Help and Account tools) and the first piece of the record: the
//! upstream client with its budget and archive, and the daily card catalogue behind
//! `cards_catalog` and `elixir://cards`.
//!
//! The folders follow one request's path, dependencies pointing down:
//! - [`access`]: principal kinds, tiers, scopes and service keys, the door-path grammar,
//!   bearer authentication, OAuth verification, the hourly rate and daily quota;
//! - [`mcp`]: the tool-spec framework, arguments and the SURFACE §2.1 blocks, the envelope,
//!   `meta`, resources and prompts, the audit hook, the door presenter;
//! - [`tools`]: the registry and one file per tool group;
//! - [`upstream`]: the Clash Royale API client, its budget and archive;
//! - [`recorder`]: the scheduled reads;
//! - [`store`]: the area traits and their SQL on SQLite and PostgreSQL;
//! - [`web`]: the sign-in, account and docs pages, over one page module.
//!
//! Beside them: [`domain`] (shared vocabulary), [`model`] (stored entities), [`services`]
//! (what one server shares), [`admin`] (account and agent administration), [`content`] (the
//! docs content), and composition in [`app`] and [`cli`].

#![deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

pub mod access;
pub mod admin;
pub mod app;
pub mod cli;
pub mod content;
pub mod domain;
pub mod mcp;
pub mod model;
pub mod recorder;
pub mod services;
pub mod store;
pub mod tools;
pub mod upstream;
pub mod web;

/// Where client addresses come from (re-exported for configuration).
pub use mcp_oauth::AddressSource;
