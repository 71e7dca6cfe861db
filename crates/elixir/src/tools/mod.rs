//! The registry: the tools of this build (only what answers), one file per group
//! ([`account`], [`players`], [`battles`], [`meta`], [`cards`], [`war`], [`service`], [`help`]), declared with `crate::mcp::spec`; plus the names and
//! pointers the checks walk (the planned v1 surface, retired names, fixed docs pointers).

pub mod account;
pub mod battles;
pub mod cards;
pub mod help;
pub mod identities;
pub mod meta;
pub mod players;
pub mod players_search;
pub mod players_timeline;
pub mod service;
pub mod subject;
pub mod tracking;
pub mod war;

use std::sync::Arc;

use mcp_door::{Catalog, CatalogError};

use crate::access::kinds::Kind;
use crate::content::Generated;
use crate::mcp::spec::ToolSpec;
use crate::services::Services;

/// Every tool of this build, in declaration order (group, then title).
pub fn registry() -> Vec<ToolSpec> {
    let mut specs = vec![account::settings()];
    specs.extend(tracking::specs());
    specs.extend(identities::specs());
    specs.extend(players::specs());
    specs.extend(battles::specs());
    specs.extend(meta::specs());
    specs.extend(cards::specs());
    specs.extend(war::specs());
    specs.extend(service::specs());
    specs.extend(help::specs());
    specs.sort_by(|a, b| (a.group, a.title).cmp(&(b.group, b.title)));
    specs
}

/// The catalog of one kind of door: every tool (so hidden ones answer −32601, not −32602),
/// with this kind's declarations.
pub fn catalog(
    specs: &[ToolSpec],
    kind: Kind,
    services: &Arc<Services>,
) -> Result<Catalog, CatalogError> {
    Catalog::new(specs.iter().map(|s| s.decl(kind, services)).collect())
}

/// The generated documentation sections of every tool.
pub fn docs_sections(specs: &[ToolSpec]) -> Vec<Generated> {
    specs.iter().map(ToolSpec::docs_section).collect()
}

/// Pointers the code emits besides each tool's default (hints, fixed answers). The pointer
/// test walks these together with every spec's `docs`.
pub const FIXED_POINTERS: &[&str] = &[
    "limits#hourly-rate",
    "limits#daily-quota",
    "limits#result-cap",
    "responses#error-codes",
    "protocol#scopes",
    "protocol#versioning",
    "clocks#timezones",
    "tools-help#feedback",
    "tools-help#documentation-pointers",
    cards::NEVER_READ_DOCS,
    "quickstart",
    "choosing-a-tool",
];

/// Every `docs` pointer the registry can emit.
pub fn doc_pointers(specs: &[ToolSpec]) -> Vec<String> {
    let mut all: Vec<String> = specs.iter().map(|s| s.docs.clone()).collect();
    all.extend(FIXED_POINTERS.iter().map(|p| (*p).to_owned()));
    all.sort();
    all.dedup();
    all
}

/// The whole v1 surface (SURFACE §2), for checks on names the docs and examples mention
/// before every tool is built.
pub const PLANNED_TOOLS: [&str; 44] = [
    "elixir_my_players",
    "elixir_nickname",
    "elixir_my_identities",
    "elixir_settings",
    "elixir_track_clan",
    "elixir_track_player",
    "elixir_identify",
    "players_collection",
    "players_timeline",
    "players_search",
    "players_profile",
    "players_summary",
    "battles_query",
    "battles_cards",
    "battles_decks",
    "battles_levels",
    "battles_meta_cards",
    "battles_meta_decks",
    "battles_opponents",
    "battles_performance",
    "cards_catalog",
    "clans_standings",
    "clans_roster",
    "clans_participation",
    "war_current",
    "game_clock",
    "war_rivals",
    "war_history",
    "rankings_timeline",
    "rankings_clan_ladder",
    "rankings_players",
    "collections_browse",
    "collections_get",
    "collections_edit",
    "live_fetch",
    "elixir_timeline",
    "elixir_coverage",
    "elixir_data_insights",
    "elixir_changelog",
    "elixir_docs",
    "elixir_examples",
    "elixir_my_feedback",
    "elixir_feedback",
    "elixir_updates",
];

/// Names that must never be declared (SURFACE §2.9 "Not in v1", §9 rule 14).
pub const RETIRED_TOOLS: &[&str] = &[
    "elixir_events",
    "elixir_send_feedback",
    "cards_synergy",
    "cards_card",
    "cards_archetype",
    "battles_trends",
    "battles_compare",
    "battles_deck_sets",
    "battles_deck_upgrades",
    "clans_pilot_scores",
    "clans_timeline",
    "players_names",
    "game_events",
    "rankings_clans",
    "elixir_collectors",
];
