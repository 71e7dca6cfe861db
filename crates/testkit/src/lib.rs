//! Dev-only helpers shared by the workspace's tests: fresh databases and the
//! environment rules for optional services, the official SDKs' HTTP clients (`clients`), an
//! MCP client, a TCP proxy a test can cut, counting randomness, property-test settings and
//! schema-driven arguments (`prop`), self-signed certificates and an HTTPS GET (`tls`),
//! serving a router on port 0, a WebDriver client for headless Chromium, snapshot redaction,
//! the fake Clash Royale API with its generated world (`cr_api`), the check of a command
//! line's environment names (`cli`), and the drivers both
//! products' suites run: the edge checks (`edge`), the official SDKs in both eras (`sdk`), the
//! README recipes (`recipes`) and the argument properties of a door (`prop::door`).

// A test kit fails loudly: a helper that cannot set up its fixture panics with the reason.
#![allow(clippy::panic, clippy::expect_used)]

/// The fake Clash Royale API and its generated world (the `cr-fake` crate).
pub use cr_fake as cr_api;
pub mod cli;
pub mod clients;
pub mod db;
pub mod edge;
pub mod mcp;
pub mod prop;
pub mod proxy;
pub mod random;
pub mod recipes;
pub mod sdk;
pub mod serve;
pub mod snapshot;
pub mod tls;
pub mod webdriver;
