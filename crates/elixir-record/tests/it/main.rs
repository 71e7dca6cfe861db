//! The crate's fixture tests: the golden `deck_hash` / `battle_id` vectors, the battle shapes
//! and normalization traps of the upstream battle log, the player and clan profiles, and
//! STATS over the log, read from `tests/fixtures/` (copies of the shared upstream fixtures);
//! property tests of tags, windows and time zones (`prop_*`).

// The whole binary is test code.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod battlelog;
mod derived_ids;
mod profiles;
mod prop_tag;
mod prop_window;
mod stats;

/// The workspace's property-test settings (a fixed seed and a small case count unless
/// `PROPTEST_RNG_SEED` / `PROPTEST_CASES` say otherwise), shared with `testkit` by path: this
/// pure crate does not depend on the test kit.
#[path = "../../../testkit/src/prop/settings.rs"]
#[allow(dead_code)]
mod prop_settings;

/// A fixture file's bytes.
fn fixture(name: &str) -> Vec<u8> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}
