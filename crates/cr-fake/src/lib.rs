//! A generated Clash Royale world and a fake of the official API
//! (`https://api.clashroyale.com/v1`) that serves it, for Elixir's tests, `elixir demo` and
//! the benchmark generator.
//!
//! - [`World::generate`] builds a deterministic world from a [`WorldConfig`] (seed, players,
//!   days, end instant): clans with roles, players with collections and decks, name changes,
//!   clan moves and promotions on given days, and every battle over the days, in every
//!   upstream type ([`BattleType`]), with the expected outcome per participant
//!   ([`Battle::outcome_for`]) so tests can compute expected statistics.
//! - [`FakeCrApi::start`] serves the world on `127.0.0.1:0` under `/v1` with the real API's
//!   JSON shapes, error bodies, `cache-control` and bearer check; the world's "now" is the
//!   injected [`mcp_door::Clock`], so moving a `FakeClock` makes new battles appear.
//!   Switches ([`FakeCrApi::throttle`], [`FakeCrApi::maintenance`] …) flip failures at run
//!   time, and every request is recorded ([`FakeCrApi::requests`], [`FakeCrApi::received`]).
//! - [`render`] turns world data into the API's JSON, usable without a server.
//!
//! The card catalogue is the shared `cards.json` fixture plus the cards the shared battle log
//! and profile fixtures show (34 playable cards, 4 tower troops), so four war decks of 32
//! distinct cards exist. See `docs/fake-upstream.md`.

#![deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

pub mod calendar;
pub mod catalog;
mod generate;
pub mod render;
pub mod server;
pub mod world;

pub use catalog::{Card, Catalog, Rarity};
pub use server::{Endpoint, FakeCrApi, RequestRecord};
pub use world::{
    Activity, Battle, BattleType, Clan, ClanMove, Deck, Membership, NameChange, Outcome, OwnedCard,
    Participant, Player, Role, Script, Totals, Who, World, WorldConfig,
};

/// Why a world could not be generated.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WorldError {
    /// The config is out of range; the message names the field and the accepted range.
    #[error("invalid world config: {0}")]
    Config(String),
    /// An embedded fixture did not parse (a build defect, not a runtime condition).
    #[error("embedded fixture: {0}")]
    Fixture(String),
}
