//! Elixir: a Clash Royale history recorder whose MCP doors (`/mcp` for people,
//! `/a/{public_id}/mcp` for agents, `/i/{public_id}/mcp` for integrations) sit behind OAuth 2.1
//! and service keys: the protocol surface (versioned, metered, well-formed envelopes), the
//! recorder (tracked players' battle logs and profiles, tracked clans' member lists, the daily
//! card catalogue, each read archived and receipted) and the tools that answer from the record.
//!
//! The folders follow one request's path, dependencies pointing down:
//! - [`access`]: principal kinds, tiers, scopes and service keys, the door-path grammar,
//!   bearer authentication and OAuth verification, the hourly rate and daily quota;
//! - [`mcp`]: the tool call (its run, the envelope, `meta`), the tool-spec declarations,
//!   arguments and the SURFACE §2.1 blocks, resources and prompts, the audit hook, the door
//!   presenter;
//! - [`tools`]: the registry and one file per tool group;
//! - [`upstream`]: the Clash Royale API client, its budget and archive;
//! - [`recorder`]: what to read when, and the worker that reads and stores it;
//! - [`store`]: the area traits and their SQL on SQLite and PostgreSQL;
//! - [`web`]: the sign-in, account and docs pages, over one page module.
//!
//! One tool call, bearer → JSON result (`cards_catalog` as the example), makes two statements
//! of its own before the tool's query and reads in four files, one per layer:
//! 1. `access/gate.rs`: bearer → principal (a service key, or an OAuth token through
//!    `OAuthVerifier`), then the framed stage meters the call's hour and day and the tool
//!    stage answers what the day decided;
//! 2. `store/door.rs`: the door read that finds the caller (with its owner and waiting
//!    replies), and the one metering statement, which also reads the card catalogue's stamp;
//! 3. `mcp/call.rs`: the call's run (handler context, refunds of a failed call, `meta`), the
//!    envelope and the render into the tool result the door sends;
//! 4. `tools/cards.rs`: the tool, served from `CatalogueCache` while the stamp is the held
//!    copy's.
//!
//! Read beside them only for a type, a constant or a pure helper: `access/kinds.rs`,
//! `access/door_path.rs`, `access/refusals.rs`, `access/metering.rs`, `mcp/args.rs`,
//! `services.rs`, [`model`], [`domain`] and `store/rows.rs` (the column lists and entity
//! decoders); mcp-door looks the tool's lenient arguments up in the presenter's table
//! (`mcp/presenter.rs`, built at start-up). The audit row leaves the request path through
//! `mcp/audit.rs` (which also settles a refused call's day, `access/refunds.rs`) into the
//! batched queue of `mcp/audit_writer.rs`.
//!
//! Beside them: [`domain`] (shared vocabulary), [`model`] (stored entities), [`services`]
//! (what one server shares), [`admin`] (account and agent administration), [`content`] (the
//! docs content), and composition in [`app`] and [`cli`]. With the `test-clock` feature,
//! `test_clock` lets a test outside the process move the server's time.

#![deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

pub mod access;
pub mod admin;
pub mod app;
pub mod cli;
pub mod content;
pub mod demo;
pub mod domain;
pub mod mcp;
pub mod model;
pub mod recorder;
pub mod services;
pub mod store;
#[cfg(feature = "test-clock")]
pub mod test_clock;
pub mod tools;
pub mod upstream;
pub mod web;

/// Where client addresses come from (re-exported for configuration).
pub use mcp_oauth::AddressSource;
