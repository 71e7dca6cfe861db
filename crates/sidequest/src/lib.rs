//! Sidequest: a tabletop-RPG campaign service whose players' own AI assistants facilitate
//! solo, downtime and absence play through the player door `POST /play/mcp`.

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
