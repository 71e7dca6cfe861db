//! Property-test support shared by the workspace's test crates: [`settings`] (a fixed seed and a
//! small case count by default, more on demand through proptest's own `PROPTEST_CASES` and
//! `PROPTEST_RNG_SEED`, no failure-persistence files, the seed printed when a property fails)
//! [`schema`] (tool arguments generated from a published JSON Schema, valid and mutated) and
//! [`door`] (those arguments checked against a door's validator and over HTTP).

pub mod door;
pub mod schema;
pub mod settings;

pub use settings::{DEFAULT_CASES, DEFAULT_SEED, config, config_with_cases, sample};
