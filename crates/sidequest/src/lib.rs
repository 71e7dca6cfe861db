//! Sidequest: a tabletop-RPG campaign service whose players' own AI assistants facilitate
//! solo, downtime and absence play through the player door `POST /play/mcp`.
//!
//! A player read costs one statement when nothing changed: the play-token check also reads
//! the assignment's version, and the rendered answer of that version is kept in memory
//! ([`mcp::answers`], bounded by `serve --read-cache-bytes` / `SIDEQUEST_READ_CACHE_BYTES`,
//! 32 MiB by default, 0 to keep none). On PostgreSQL a request's statements run on the
//! connection its token was checked on ([`store::Held`]); on a SQLite file the check is read in
//! place on the calling thread (`sqlkit::Db::read_first`) and a later statement takes a pooled
//! connection.

#![deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

pub mod app;
pub mod campaign;
pub mod cli;
pub mod demo;
pub mod domain;
pub mod http;
pub mod i18n;
pub mod mcp;
pub mod render;
pub mod service;
pub mod state;
pub mod store;
pub mod web;
