//! A battle's mode (SURFACE §2.1 MODE, §6.5): the closed list of modes, the mapping from
//! upstream `type` (and players per side), and the MODE argument's families. The battle that
//! carries a mode is `battle`'s.

use serde::{Deserialize, Serialize};

/// A battle's mode (SURFACE §2.1 MODE, §6.5), derived from upstream `type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[non_exhaustive]
pub enum Mode {
    /// `PvP`: trophy road.
    #[serde(rename = "ladder")]
    Ladder,
    /// `pathOfLegend`.
    #[serde(rename = "path_of_legend")]
    PathOfLegend,
    /// `riverRacePvP`.
    #[serde(rename = "war")]
    War,
    /// `riverRaceDuel*`.
    #[serde(rename = "war_duel")]
    WarDuel,
    /// `boatBattle`.
    #[serde(rename = "boat")]
    Boat,
    /// Two players a side.
    #[serde(rename = "2v2")]
    TwoVTwo,
    /// `friendly`, `clanMate*`.
    #[serde(rename = "friendly")]
    Friendly,
    /// `tournament`.
    #[serde(rename = "tournament")]
    Tournament,
    /// `trail`, `challenge*`.
    #[serde(rename = "event")]
    Event,
    /// Anything else; the battle keeps its `type` verbatim.
    #[serde(rename = "other")]
    Other,
}

impl Mode {
    /// Every mode, in SURFACE order.
    pub const ALL: [Mode; 10] = [
        Mode::Ladder,
        Mode::PathOfLegend,
        Mode::War,
        Mode::WarDuel,
        Mode::Boat,
        Mode::TwoVTwo,
        Mode::Friendly,
        Mode::Tournament,
        Mode::Event,
        Mode::Other,
    ];

    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Ladder => "ladder",
            Mode::PathOfLegend => "path_of_legend",
            Mode::War => "war",
            Mode::WarDuel => "war_duel",
            Mode::Boat => "boat",
            Mode::TwoVTwo => "2v2",
            Mode::Friendly => "friendly",
            Mode::Tournament => "tournament",
            Mode::Event => "event",
            Mode::Other => "other",
        }
    }

    /// Reads the wire name.
    pub fn parse(text: &str) -> Option<Mode> {
        Mode::ALL.into_iter().find(|m| m.as_str() == text)
    }

    /// The mode of an upstream battle, first rule that applies: `PvP` ladder, `pathOfLegend`,
    /// `riverRacePvP` war, `riverRaceDuel*` war duel, `boatBattle`, two players a side 2v2,
    /// `friendly`/`clanMate*` friendly, `tournament`, `trail`/`challenge*` event, else other.
    pub fn of_upstream(battle_type: &str, players_per_side: usize) -> Mode {
        match battle_type {
            "PvP" => Mode::Ladder,
            "pathOfLegend" => Mode::PathOfLegend,
            "riverRacePvP" => Mode::War,
            t if t.starts_with("riverRaceDuel") => Mode::WarDuel,
            "boatBattle" => Mode::Boat,
            _ if players_per_side == 2 => Mode::TwoVTwo,
            t if t == "friendly" || t.starts_with("clanMate") => Mode::Friendly,
            "tournament" => Mode::Tournament,
            t if t == "trail" || t.starts_with("challenge") => Mode::Event,
            _ => Mode::Other,
        }
    }
}

/// The MODE argument: one mode, or a family of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ModeFilter {
    /// Every mode.
    All,
    /// Ladder and Path of Legend.
    Competitive,
    /// War, war duels and boat battles.
    RiverRace,
    /// Exactly one mode.
    Only(Mode),
}

impl ModeFilter {
    /// Every value the argument accepts, in SURFACE order.
    pub fn names() -> Vec<&'static str> {
        let mut names = vec!["all", "competitive", "river_race"];
        names.extend(Mode::ALL.map(Mode::as_str));
        names
    }

    /// Reads the argument.
    pub fn parse(text: &str) -> Option<ModeFilter> {
        match text {
            "all" => Some(ModeFilter::All),
            "competitive" => Some(ModeFilter::Competitive),
            "river_race" => Some(ModeFilter::RiverRace),
            other => Mode::parse(other).map(ModeFilter::Only),
        }
    }

    /// Whether a battle of `mode` passes.
    pub fn includes(self, mode: Mode) -> bool {
        match self {
            ModeFilter::All => true,
            ModeFilter::Competitive => matches!(mode, Mode::Ladder | Mode::PathOfLegend),
            ModeFilter::RiverRace => matches!(mode, Mode::War | Mode::WarDuel | Mode::Boat),
            ModeFilter::Only(m) => m == mode,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_follow_upstream_type_in_rule_order() {
        for (battle_type, per_side, mode) in [
            ("PvP", 1, Mode::Ladder),
            ("pathOfLegend", 1, Mode::PathOfLegend),
            ("riverRacePvP", 1, Mode::War),
            ("riverRaceDuel", 1, Mode::WarDuel),
            ("riverRaceDuelColosseum", 1, Mode::WarDuel),
            ("boatBattle", 1, Mode::Boat),
            ("clanMate2v2", 2, Mode::TwoVTwo),
            ("friendly", 2, Mode::TwoVTwo),
            ("friendly", 1, Mode::Friendly),
            ("clanMate", 1, Mode::Friendly),
            ("tournament", 1, Mode::Tournament),
            ("trail", 1, Mode::Event),
            ("challenge", 1, Mode::Event),
            ("challengeGrand", 1, Mode::Event),
            ("PvP", 2, Mode::Ladder),
            ("seasonalBattle", 1, Mode::Other),
            ("", 0, Mode::Other),
        ] {
            assert_eq!(
                Mode::of_upstream(battle_type, per_side),
                mode,
                "{battle_type} {per_side}"
            );
        }
        for mode in Mode::ALL {
            assert_eq!(Mode::parse(mode.as_str()), Some(mode));
            assert_eq!(serde_json::to_value(mode).unwrap(), mode.as_str());
        }
        assert_eq!(Mode::parse("Ladder"), None);
    }

    #[test]
    fn mode_filters_name_their_families() {
        assert_eq!(
            ModeFilter::names(),
            [
                "all",
                "competitive",
                "river_race",
                "ladder",
                "path_of_legend",
                "war",
                "war_duel",
                "boat",
                "2v2",
                "friendly",
                "tournament",
                "event",
                "other"
            ]
        );
        let kept = |f: &str| -> Vec<Mode> {
            let filter = ModeFilter::parse(f).unwrap();
            Mode::ALL
                .into_iter()
                .filter(|m| filter.includes(*m))
                .collect()
        };
        assert_eq!(kept("all"), Mode::ALL);
        assert_eq!(kept("competitive"), [Mode::Ladder, Mode::PathOfLegend]);
        assert_eq!(kept("river_race"), [Mode::War, Mode::WarDuel, Mode::Boat]);
        assert_eq!(kept("2v2"), [Mode::TwoVTwo]);
        assert_eq!(ModeFilter::parse("pvp"), None);
    }
}
