//! The cr-fake integration tests: one binary, one module per behaviour.

// The whole binary is test code.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod record;
mod server;
mod shapes;
mod world;

use cr_fake::{World, WorldConfig};

/// 2026-10-10T22:00:00Z: a week back reaches Sunday 2026-10-04, the Colosseum war day of
/// season 136, and Thursday to Saturday of season 137's first war week.
pub const END_MILLIS: i64 = 1_791_669_600_000;

/// A small world: 60 players, 7 days ending at [`END_MILLIS`].
pub fn small_world(seed: u64) -> World {
    World::generate(WorldConfig::new(seed, 60, 7, END_MILLIS)).expect("world")
}
