//! Battles as the record keeps them (SURFACE §2.4, §6.2–6.5): the battle, its participants
//! and their cards, the outcome rule, and the closed list of modes with the mapping from
//! upstream `type`. `from_upstream` reads one entry of `/players/{tag}/battlelog` as far as
//! the ids, the decks, the mode and the outcome need; richer normalization (towers, clans,
//! trophies per league) is left to the recorder's normalizer.

use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use crate::cards::Rarity;
use crate::ids::{self, BattleClass};
use crate::tag::Tag;
use crate::time::{iso_serde, parse_battle_time};

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

/// A battle's result for one side; `None` (`null` on the wire) when it cannot be told.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// The side won.
    Win,
    /// The side lost.
    Loss,
    /// Neither side won.
    Draw,
}

impl Outcome {
    /// The other side's result.
    pub fn flip(self) -> Outcome {
        match self {
            Outcome::Win => Outcome::Loss,
            Outcome::Loss => Outcome::Win,
            Outcome::Draw => Outcome::Draw,
        }
    }

    fn of_order(ours: i64, theirs: i64) -> Outcome {
        match ours.cmp(&theirs) {
            std::cmp::Ordering::Greater => Outcome::Win,
            std::cmp::Ordering::Less => Outcome::Loss,
            std::cmp::Ordering::Equal => Outcome::Draw,
        }
    }
}

/// What the outcome rule reads, from the team's side.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OutcomeInput {
    /// Upstream `boatBattleWon`.
    pub boat_battle_won: Option<bool>,
    /// Each duel round's crowns, (team, opponent).
    pub rounds: Vec<(Option<i64>, Option<i64>)>,
    /// Trophy change, (team, opponent).
    pub trophy_change: (Option<i64>, Option<i64>),
    /// Crowns, (team, opponent).
    pub crowns: (Option<i64>, Option<i64>),
}

/// The outcome rule (SURFACE §6.4), first rule that applies: (1) `boatBattleWon`; (2) duels,
/// more rounds won, each round by crowns; (3) the sign of the trophy change, only when the
/// sides moved in opposite directions (a Path of Legend draw costs both); (4) crowns, more
/// wins and equal draws; (5) otherwise unknown.
pub fn outcome(input: &OutcomeInput) -> Option<Outcome> {
    if let Some(won) = input.boat_battle_won {
        return Some(if won { Outcome::Win } else { Outcome::Loss });
    }
    let (mut ours, mut theirs) = (0, 0);
    for (a, b) in &input.rounds {
        match (a, b) {
            (Some(a), Some(b)) if a > b => ours += 1,
            (Some(a), Some(b)) if a < b => theirs += 1,
            _ => {}
        }
    }
    if ours != theirs {
        return Some(Outcome::of_order(ours, theirs));
    }
    if let (Some(a), Some(b)) = input.trophy_change
        && ((a > 0 && b < 0) || (a < 0 && b > 0))
    {
        return Some(Outcome::of_order(a, 0));
    }
    match input.crowns {
        (Some(a), Some(b)) => Some(Outcome::of_order(a, b)),
        _ => None,
    }
}

/// The form a card was played in (upstream `evolutionLevel` in a battle).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Form {
    /// Absent or 0.
    Base,
    /// 1.
    Evolution,
    /// 2.
    Hero,
}

impl Form {
    /// The form of a played card's `evolutionLevel`; `None` for a value a played card never
    /// carries (a boat defence list reports forms owned, 3 = both).
    pub fn played(evolution_level: Option<i64>) -> Option<Form> {
        match evolution_level.unwrap_or(0) {
            0 => Some(Form::Base),
            1 => Some(Form::Evolution),
            2 => Some(Form::Hero),
            _ => None,
        }
    }
}

/// One card (or tower troop) in a battle.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BattleCard {
    /// The game's card id.
    pub id: i64,
    /// Its name as upstream sent it.
    pub name: String,
    /// In-game level (API level + rarity offset); `None` when the rarity is unknown.
    pub level: Option<i64>,
    /// Upstream `evolutionLevel`, as the deck hash reads it (absent is `None`).
    pub evolution_level: Option<i64>,
    /// The form played; `None` when the bit field is not a played form.
    pub form: Option<Form>,
    /// The elixir cost; `None` when upstream sends none.
    pub elixir: Option<i64>,
    /// In duel rounds, whether the card was played.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub used: Option<bool>,
}

/// One duel round of one participant.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Round {
    /// Crowns taken in the round.
    pub crowns: Option<i64>,
    /// The round's deck hash.
    pub deck_hash: Option<String>,
    /// The round's cards.
    pub cards: Vec<BattleCard>,
}

/// Which side of a battle a participant is on, seen from the log's owner.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Side {
    /// The log owner's side.
    Team,
    /// The other side.
    Opponent,
}

/// One participant of a battle.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Participant {
    /// Team or opponent.
    pub side: Side,
    /// The normalized tag; `None` for a tagless participant.
    pub tag: Option<Tag>,
    /// The in-game name.
    pub name: String,
    /// Crowns taken (summed over a duel's rounds, as upstream reports it).
    pub crowns: Option<i64>,
    /// Trophies before the battle.
    pub starting_trophies: Option<i64>,
    /// Trophy change; `None` when unreported.
    pub trophy_change: Option<i64>,
    /// The deck's hash; `None` for duels (each round has its own), boat defence lists and
    /// undisclosed decks.
    pub deck_hash: Option<String>,
    /// The tower troop (upstream `supportCards[0]`); `None` in war battles, which report none.
    pub tower_troop: Option<BattleCard>,
    /// The cards played (a duel's rounds concatenated, as upstream sends them).
    pub cards: Vec<BattleCard>,
    /// A boat defender's defence list (not a deck).
    pub defence_cards: Vec<BattleCard>,
    /// Duel rounds.
    pub rounds: Vec<Round>,
}

/// A battle's game mode as upstream names it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GameMode {
    /// Upstream `gameMode.id`.
    pub id: i64,
    /// Upstream `gameMode.name`.
    pub name: String,
}

/// One recorded battle.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Battle {
    /// SHA-256 hex over time, tags and class (§6.3).
    pub battle_id: String,
    /// When it was played.
    #[serde(with = "iso_serde")]
    pub battle_time: Timestamp,
    /// Upstream `type`, verbatim.
    #[serde(rename = "type")]
    pub battle_type: String,
    /// The mode derived from it.
    pub mode: Mode,
    /// Upstream `gameMode`.
    pub game_mode: Option<GameMode>,
    /// Upstream `deckSelection`.
    pub deck_selection: Option<String>,
    /// Upstream `leagueNumber`.
    pub league_number: Option<i64>,
    /// Upstream `boatBattleWon` (boat battles only).
    pub boat_battle_won: Option<bool>,
    /// The log owner's side.
    pub team: Vec<Participant>,
    /// The other side.
    pub opponent: Vec<Participant>,
}

/// Why an upstream battle cannot be recorded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum BattleError {
    /// Not the expected JSON.
    #[error("the battle is not the expected JSON: {0}")]
    Shape(String),
    /// A `battleTime` not of the form `YYYYMMDDTHHMMSS.fffZ`.
    #[error("unreadable battleTime {0:?}")]
    Time(String),
}

/// The parts of an upstream battlelog entry this module reads.
mod upstream {
    use serde::Deserialize;

    #[derive(Debug, Deserialize)]
    #[serde(rename_all = "camelCase")]
    pub struct Battle {
        #[serde(rename = "type")]
        pub battle_type: String,
        pub battle_time: String,
        pub game_mode: Option<super::GameMode>,
        pub deck_selection: Option<String>,
        pub league_number: Option<i64>,
        pub boat_battle_side: Option<String>,
        pub boat_battle_won: Option<bool>,
        #[serde(default)]
        pub team: Vec<Participant>,
        #[serde(default)]
        pub opponent: Vec<Participant>,
    }

    #[derive(Debug, Deserialize)]
    #[serde(rename_all = "camelCase")]
    pub struct Participant {
        pub tag: Option<String>,
        #[serde(default)]
        pub name: String,
        pub crowns: Option<i64>,
        pub starting_trophies: Option<i64>,
        pub trophy_change: Option<i64>,
        #[serde(default)]
        pub cards: Vec<Card>,
        #[serde(default)]
        pub support_cards: Vec<Card>,
        #[serde(default)]
        pub rounds: Vec<Round>,
    }

    #[derive(Debug, Deserialize)]
    #[serde(rename_all = "camelCase")]
    pub struct Round {
        pub crowns: Option<i64>,
        #[serde(default)]
        pub cards: Vec<Card>,
    }

    #[derive(Debug, Deserialize)]
    #[serde(rename_all = "camelCase")]
    pub struct Card {
        pub id: i64,
        #[serde(default)]
        pub name: String,
        pub level: Option<i64>,
        pub evolution_level: Option<i64>,
        pub rarity: Option<String>,
        pub elixir_cost: Option<i64>,
        pub used: Option<bool>,
    }
}

fn card(c: upstream::Card) -> BattleCard {
    let rarity = c.rarity.as_deref().and_then(Rarity::parse);
    BattleCard {
        id: c.id,
        name: c.name,
        level: c.level.zip(rarity).map(|(l, r)| r.in_game_level(l)),
        evolution_level: c.evolution_level,
        form: Form::played(c.evolution_level),
        elixir: c.elixir_cost,
        used: c.used,
    }
}

fn hash_of(cards: &[BattleCard], tower_troop: Option<&BattleCard>) -> Option<String> {
    ids::deck_hash(
        cards.iter().map(|c| (c.id, c.evolution_level)),
        tower_troop.map(|t| t.id),
    )
}

fn participant(p: upstream::Participant, side: Side, defends_boat: bool) -> Participant {
    let tower_troop = p.support_cards.into_iter().next().map(card);
    let cards: Vec<BattleCard> = p.cards.into_iter().map(card).collect();
    let rounds: Vec<Round> = p
        .rounds
        .into_iter()
        .map(|r| {
            let cards: Vec<BattleCard> = r.cards.into_iter().map(card).collect();
            Round {
                crowns: r.crowns,
                deck_hash: hash_of(&cards, tower_troop.as_ref()),
                cards,
            }
        })
        .collect();
    let (cards, defence_cards) = if defends_boat {
        (Vec::new(), cards)
    } else {
        (cards, Vec::new())
    };
    let deck_hash = if rounds.is_empty() {
        hash_of(&cards, tower_troop.as_ref())
    } else {
        None
    };
    Participant {
        side,
        tag: p.tag.as_deref().and_then(|t| Tag::parse(t).ok()),
        name: p.name,
        crowns: p.crowns,
        starting_trophies: p.starting_trophies,
        trophy_change: p.trophy_change,
        deck_hash,
        tower_troop,
        cards,
        defence_cards,
        rounds,
    }
}

impl Battle {
    /// Reads one entry of upstream `/players/{tag}/battlelog`: normalized tags, the mode,
    /// in-game levels, played forms, every deck hash and the `battle_id`.
    pub fn from_upstream(entry: &serde_json::Value) -> Result<Battle, BattleError> {
        let api: upstream::Battle = serde::Deserialize::deserialize(entry)
            .map_err(|e: serde_json::Error| BattleError::Shape(e.to_string()))?;
        let battle_time =
            parse_battle_time(&api.battle_time).ok_or(BattleError::Time(api.battle_time))?;
        let per_side = api.team.len().max(api.opponent.len());
        let mode = Mode::of_upstream(&api.battle_type, per_side);
        let team_defends = api.boat_battle_side.as_deref() == Some("defender");
        let is_boat = mode == Mode::Boat;
        let team: Vec<Participant> = api
            .team
            .into_iter()
            .map(|p| participant(p, Side::Team, is_boat && team_defends))
            .collect();
        let opponent: Vec<Participant> = api
            .opponent
            .into_iter()
            .map(|p| participant(p, Side::Opponent, is_boat && !team_defends))
            .collect();
        let battle_id = ids::battle_id(
            battle_time,
            team.iter().chain(&opponent).filter_map(|p| p.tag.as_ref()),
            BattleClass::of_type(&api.battle_type),
        );
        Ok(Battle {
            battle_id,
            battle_time,
            battle_type: api.battle_type,
            mode,
            game_mode: api.game_mode,
            deck_selection: api.deck_selection,
            league_number: api.league_number,
            boat_battle_won: api.boat_battle_won,
            team,
            opponent,
        })
    }

    /// Reads a whole `/players/{tag}/battlelog` payload (a bare array).
    pub fn from_battlelog(payload: &[u8]) -> Result<Vec<Battle>, BattleError> {
        let entries: Vec<serde_json::Value> =
            serde_json::from_slice(payload).map_err(|e| BattleError::Shape(e.to_string()))?;
        entries.iter().map(Battle::from_upstream).collect()
    }

    /// What the outcome rule reads, from the team's side (the first participant of each side
    /// speaks for it: teammates share crowns and results).
    pub fn outcome_input(&self) -> OutcomeInput {
        let (team, opponent) = (self.team.first(), self.opponent.first());
        let rounds = match (team, opponent) {
            (Some(t), Some(o)) => t
                .rounds
                .iter()
                .zip(&o.rounds)
                .map(|(a, b)| (a.crowns, b.crowns))
                .collect(),
            _ => Vec::new(),
        };
        OutcomeInput {
            boat_battle_won: self.boat_battle_won,
            rounds,
            trophy_change: (
                team.and_then(|p| p.trophy_change),
                opponent.and_then(|p| p.trophy_change),
            ),
            crowns: (team.and_then(|p| p.crowns), opponent.and_then(|p| p.crowns)),
        }
    }

    /// The outcome for `side`; `None` when the rule cannot tell.
    pub fn outcome(&self, side: Side) -> Option<Outcome> {
        let team = outcome(&self.outcome_input());
        match side {
            Side::Team => team,
            Side::Opponent => team.map(Outcome::flip),
        }
    }

    /// The participant with `tag`, on either side.
    pub fn participant(&self, tag: &Tag) -> Option<&Participant> {
        self.team
            .iter()
            .chain(&self.opponent)
            .find(|p| p.tag.as_ref() == Some(tag))
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

    #[test]
    fn the_outcome_rule_takes_the_first_that_applies() {
        let input = |boat, rounds: &[(i64, i64)], trophies, crowns| OutcomeInput {
            boat_battle_won: boat,
            rounds: rounds.iter().map(|(a, b)| (Some(*a), Some(*b))).collect(),
            trophy_change: trophies,
            crowns,
        };
        // (1) boat battles: boatBattleWon, whatever the crowns
        assert_eq!(
            outcome(&input(Some(true), &[], (None, None), (Some(0), Some(3)))),
            Some(Outcome::Win)
        );
        assert_eq!(
            outcome(&input(Some(false), &[], (None, None), (Some(3), Some(0)))),
            Some(Outcome::Loss)
        );
        // (2) duels: rounds won, each by crowns, beat summed crowns
        assert_eq!(
            outcome(&input(
                None,
                &[(1, 0), (0, 3), (1, 0)],
                (None, None),
                (Some(2), Some(3))
            )),
            Some(Outcome::Win)
        );
        // level rounds fall through to the next rules
        assert_eq!(
            outcome(&input(None, &[(1, 1)], (None, None), (Some(1), Some(1)))),
            Some(Outcome::Draw)
        );
        // (3) trophy change in opposite directions
        assert_eq!(
            outcome(&input(None, &[], (Some(-18), Some(18)), (Some(1), Some(1)))),
            Some(Outcome::Loss)
        );
        assert_eq!(
            outcome(&input(None, &[], (Some(31), Some(-31)), (Some(0), Some(0)))),
            Some(Outcome::Win)
        );
        // a Path of Legend draw costs both: the crowns decide
        assert_eq!(
            outcome(&input(None, &[], (Some(-5), Some(-5)), (Some(1), Some(1)))),
            Some(Outcome::Draw)
        );
        assert_eq!(
            outcome(&input(None, &[], (Some(31), None), (Some(0), Some(1)))),
            Some(Outcome::Loss)
        );
        // (4) crowns; (5) unknown
        assert_eq!(
            outcome(&input(None, &[], (None, None), (Some(2), Some(1)))),
            Some(Outcome::Win)
        );
        assert_eq!(
            outcome(&input(None, &[], (None, None), (Some(2), None))),
            None
        );
        assert_eq!(outcome(&OutcomeInput::default()), None);
        assert_eq!(Outcome::Win.flip(), Outcome::Loss);
        assert_eq!(Outcome::Draw.flip(), Outcome::Draw);
        assert_eq!(serde_json::to_value(Some(Outcome::Draw)).unwrap(), "draw");
        assert_eq!(
            serde_json::to_value(None::<Outcome>).unwrap(),
            serde_json::Value::Null
        );
    }

    #[test]
    fn played_forms_read_the_bit_field() {
        assert_eq!(Form::played(None), Some(Form::Base));
        assert_eq!(Form::played(Some(0)), Some(Form::Base));
        assert_eq!(Form::played(Some(1)), Some(Form::Evolution));
        assert_eq!(Form::played(Some(2)), Some(Form::Hero));
        assert_eq!(Form::played(Some(3)), None);
    }

    #[test]
    fn unreadable_entries_are_refused() {
        let bad_time = serde_json::json!({"type": "PvP", "battleTime": "2026-09-18T19:34:12Z"});
        assert_eq!(
            Battle::from_upstream(&bad_time),
            Err(BattleError::Time("2026-09-18T19:34:12Z".into()))
        );
        assert!(matches!(
            Battle::from_upstream(&serde_json::json!({"battleTime": "20260918T193412.000Z"})),
            Err(BattleError::Shape(_))
        ));
        assert!(matches!(
            Battle::from_battlelog(b"{}"),
            Err(BattleError::Shape(_))
        ));
        // a tagless participant is kept, without a tag, and left out of the battle_id
        let entry = serde_json::json!({
            "type": "PvP", "battleTime": "20260918T193412.000Z",
            "team": [{"tag": "#2QY8LRJC9", "name": "a", "crowns": 1}],
            "opponent": [{"name": "b", "crowns": 0}],
        });
        let battle = Battle::from_upstream(&entry).unwrap();
        assert_eq!(battle.opponent[0].tag, None);
        let tag = Tag::parse("#2QY8LRJC9").unwrap();
        assert_eq!(
            battle.battle_id,
            ids::battle_id(battle.battle_time, [&tag], BattleClass::Pvp)
        );
        assert_eq!(battle.outcome(Side::Team), Some(Outcome::Win));
        assert_eq!(battle.outcome(Side::Opponent), Some(Outcome::Loss));
        assert_eq!(battle.team[0].deck_hash, None);
    }
}
