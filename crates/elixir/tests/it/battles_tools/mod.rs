//! The Battles tools (player side) over a generated cr-fake world recorded into the server's
//! store: every battle of the world is known to the test, so expected numbers are computed
//! from the world itself (`Battle::outcome_for`, crowns, rounds), never from the tools.

mod aggregates;
mod query;

use cr_fake::{BattleType, Outcome, World, WorldConfig};
use elixir::recorder::ingest;
use elixir::store::SharedStore;
use elixir_record::normalize::player::PlayerProfile;
use elixir_record::{Battle, Tag};
use testkit::cr_api as cr_fake;

use crate::support::T0;

/// The seed of the recorded world.
pub const SEED: u64 = 42;

/// A world of `players` players and `days` days of battles ending at [`T0`].
pub fn world(players: u32, days: u32) -> World {
    World::generate(WorldConfig::new(SEED, players, days, T0)).unwrap()
}

/// A player's tag.
pub fn tag(world: &World, p: u32) -> String {
    world.players()[p as usize].tag.clone()
}

/// The player's battles as their own log shows them, normalized, oldest first.
pub fn battles_of(world: &World, p: u32) -> Vec<Battle> {
    world
        .battles_of(p)
        .iter()
        .filter_map(|&b| cr_fake::render::battle_json(world, &world.battles()[b as usize], p))
        .map(|json| Battle::from_upstream(&json).unwrap())
        .collect()
}

/// Records players' whole battle logs (in the order given: the first recorder of a shared
/// battle stores its body) and their profiles at [`T0`].
pub async fn record(store: &SharedStore, world: &World, players: &[u32]) {
    for &p in players {
        let tag = Tag::parse(&tag(world, p)).unwrap();
        let battles = battles_of(world, p);
        let rows = ingest::new_battles(&tag, &battles).unwrap();
        let name = ingest::observer_name(&tag, &battles).map(str::to_owned);
        store
            .ingest_battles(tag.as_str(), name.as_deref(), T0, &rows)
            .await
            .unwrap();
        let json = cr_fake::render::player_json(world, p, T0).unwrap();
        let read = PlayerProfile::from_upstream(json.to_string().as_bytes()).unwrap();
        let (row, snapshot) = ingest::player_rows(&read.profile, T0).unwrap();
        store.put_player(&row, &snapshot).await.unwrap();
    }
}

/// Stores the world's card catalogue, so card names resolve.
pub async fn catalogue(store: &SharedStore, world: &World) {
    let payload = world.catalog().cards_json().to_string();
    let catalogue = elixir_record::cards::normalize(payload.as_bytes()).unwrap();
    store
        .put_cards_catalogue(&elixir::model::StoredCatalogue {
            catalogue,
            payload_sha256: "ab".repeat(32),
            observed_at: T0,
        })
        .await
        .unwrap();
}

/// The wire name of a cr-fake outcome.
pub fn outcome_name(o: Outcome) -> &'static str {
    match o {
        Outcome::Win => "win",
        Outcome::Loss => "loss",
        Outcome::Draw => "draw",
    }
}

/// Whether a cr-fake battle type is a duel (one game per round in deck and card rows).
pub fn is_duel(kind: BattleType) -> bool {
    matches!(
        kind,
        BattleType::RiverRaceDuel | BattleType::RiverRaceDuelColosseum
    )
}
