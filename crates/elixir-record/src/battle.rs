//! Battles as the record keeps them (SURFACE §2.4, §6.2–6.5): the battle, its participants,
//! cards and duel rounds, the outcome rule (§6.4), and the views the tools read (the
//! subject's side and outcome, its opponents, the games a battle counts as, deck levels,
//! card keys). Modes are `mode`'s (re-exported here); reading upstream JSON into these types
//! is `normalize::battlelog`'s.

use jiff::Timestamp;
use serde::{Deserialize, Serialize};

pub use crate::mode::{Mode, ModeFilter};
use crate::tag::Tag;
use crate::time::iso_serde;

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

    /// The form's number in a card key and a `deck_hash` input: 0 base, 1 evolution, 2 hero.
    pub fn code(self) -> i64 {
        match self {
            Form::Base => 0,
            Form::Evolution => 1,
            Form::Hero => 2,
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
    /// In-game level (API level + rarity offset, §6.4); `None` when the level or the rarity
    /// is unknown.
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

impl BattleCard {
    /// The card's key, `"<id>:<form>"` with the form as its `deck_hash` number (0 base,
    /// 1 evolution, 2 hero; any other bit field verbatim), so one card played in two forms
    /// makes two keys, as it makes two decks.
    pub fn key(&self) -> String {
        format!("{}:{}", self.id, self.evolution_level.unwrap_or(0))
    }
}

/// The mean in-game level of `cards`; `None` unless the deck is fully known (at least one
/// card, and every card's level known). Tower troops are not part of a deck's level.
pub fn mean_level(cards: &[BattleCard]) -> Option<f64> {
    if cards.is_empty() {
        return None;
    }
    let mut sum = 0i64;
    for card in cards {
        sum += card.level?;
    }
    // a deck has a handful of cards, far inside f64's exact integers
    #[allow(clippy::cast_precision_loss)]
    Some(sum as f64 / cards.len() as f64)
}

/// One duel round of one participant.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Round {
    /// Crowns taken in the round.
    pub crowns: Option<i64>,
    /// The King's Tower's hit points at the round's end.
    pub king_tower_hp: Option<i64>,
    /// The princess towers at the round's end (§6.5): survivors, then 0 per destroyed one.
    pub princess_towers_hp: Option<[i64; 2]>,
    /// Elixir leaked in the round.
    pub elixir_leaked: Option<f64>,
    /// The round's deck hash.
    pub deck_hash: Option<String>,
    /// The round's cards, each with `used`.
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

impl Side {
    /// The other side.
    pub fn other(self) -> Side {
        match self {
            Side::Team => Side::Opponent,
            Side::Opponent => Side::Team,
        }
    }
}

/// A participant's clan as the battle reports it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ParticipantClan {
    /// The clan's normalized tag.
    pub tag: Tag,
    /// Its name.
    pub name: String,
    /// Upstream `badgeId`.
    pub badge_id: Option<i64>,
}

/// One participant of a battle.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Participant {
    /// Team or opponent.
    pub side: Side,
    /// The normalized tag; `None` for a tagless participant.
    pub tag: Option<Tag>,
    /// The in-game name.
    pub name: String,
    /// The clan; `None` for a clanless participant.
    pub clan: Option<ParticipantClan>,
    /// Crowns taken (a duel's: the sum of its rounds, §6.5).
    pub crowns: Option<i64>,
    /// The King's Tower's hit points at the end (a duel's: the last round's).
    pub king_tower_hp: Option<i64>,
    /// The princess towers at the end (§6.5): the surviving towers' hit points, then 0 for
    /// each destroyed one, to length 2 (upstream `null`: both destroyed, `[0,0]`); `None`
    /// when upstream did not report them. Positions carry no meaning.
    pub princess_towers_hp: Option<[i64; 2]>,
    /// Elixir leaked.
    pub elixir_leaked: Option<f64>,
    /// Trophies before the battle.
    pub starting_trophies: Option<i64>,
    /// Trophy change; `None` when unreported.
    pub trophy_change: Option<i64>,
    /// The deck's hash; `None` for duels (each round has its own), boat defence lists and
    /// undisclosed decks (`cards: []`).
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

impl Participant {
    /// The participant's card keys (`"id:form"`), in upstream order.
    pub fn card_keys(&self) -> Vec<String> {
        self.cards.iter().map(BattleCard::key).collect()
    }

    /// The mean in-game level of the deck played; `None` unless it is fully known. A duel's
    /// is over every round's cards; a boat defender has no deck.
    pub fn mean_level(&self) -> Option<f64> {
        mean_level(&self.cards)
    }
}

/// A battle's game mode as upstream names it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GameMode {
    /// Upstream `gameMode.id`.
    pub id: i64,
    /// Upstream `gameMode.name`.
    pub name: String,
}

/// The arena a battle was played in.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Arena {
    /// Upstream `arena.id`.
    pub id: i64,
    /// Upstream `arena.name`.
    pub name: String,
}

/// What a boat battle reports beyond the participants.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Boat {
    /// Upstream `boatBattleSide` verbatim (`attacker` or `defender`): the log owner's role.
    pub side: Option<String>,
    /// Upstream `boatBattleWon`: whether the log owner's side won.
    pub won: Option<bool>,
    /// Towers destroyed in this battle.
    pub new_towers_destroyed: Option<i64>,
    /// Towers destroyed before it.
    pub prev_towers_destroyed: Option<i64>,
    /// Towers left standing.
    pub remaining_towers: Option<i64>,
}

/// One recorded battle.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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
    /// Upstream `arena`.
    pub arena: Option<Arena>,
    /// Upstream `gameMode`.
    pub game_mode: Option<GameMode>,
    /// Upstream `deckSelection`, verbatim.
    pub deck_selection: Option<String>,
    /// Upstream `leagueNumber`.
    pub league_number: Option<i64>,
    /// Boat battles only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub boat: Option<Boat>,
    /// The log owner's side.
    pub team: Vec<Participant>,
    /// The other side.
    pub opponent: Vec<Participant>,
}

/// One game a battle counts as in a deck or card row (SURFACE §3.4): a duel is one game per
/// round, with the round's outcome, deck and cards; any other battle is one game.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Game<'a> {
    /// The 1-based round of a duel; `None` for a battle that is not one.
    pub round: Option<usize>,
    /// The subject's outcome of the game.
    pub outcome: Option<Outcome>,
    /// The deck's hash; `None` when the deck is undisclosed (or a boat defence list).
    pub deck_hash: Option<&'a str>,
    /// The cards played in the game.
    pub cards: &'a [BattleCard],
    /// The tower troop, when reported.
    pub tower_troop: Option<&'a BattleCard>,
}

impl Game<'_> {
    /// The game's mean in-game deck level; `None` unless the deck is fully known.
    pub fn mean_level(&self) -> Option<f64> {
        mean_level(self.cards)
    }
}

/// One side of a duel round, as battles_query shows it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RoundSide<'a> {
    /// Crowns the side took in the round.
    pub crowns: Option<i64>,
    /// The side's deck in the round.
    pub deck_hash: Option<&'a str>,
    /// The side's cards in the round, each with `used`.
    pub cards: &'a [BattleCard],
}

/// A duel round seen from the team's side (SURFACE §2.4 `rounds[]`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BattleRound<'a> {
    /// 1-based.
    pub index: usize,
    /// The team's outcome of the round, by crowns.
    pub outcome: Option<Outcome>,
    /// The team's side (its first participant).
    pub team: RoundSide<'a>,
    /// The opponent's side (its first participant).
    pub opponent: RoundSide<'a>,
}

fn round_side(round: &Round) -> RoundSide<'_> {
    RoundSide {
        crowns: round.crowns,
        deck_hash: round.deck_hash.as_deref(),
        cards: &round.cards,
    }
}

fn by_crowns(ours: Option<i64>, theirs: Option<i64>) -> Option<Outcome> {
    Some(Outcome::of_order(ours?, theirs?))
}

fn seen_from(side: Side, team_outcome: Option<Outcome>) -> Option<Outcome> {
    match side {
        Side::Team => team_outcome,
        Side::Opponent => team_outcome.map(Outcome::flip),
    }
}

impl Battle {
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
            boat_battle_won: self.boat.as_ref().and_then(|b| b.won),
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
        seen_from(side, outcome(&self.outcome_input()))
    }

    /// The participants on `side`.
    pub fn side(&self, side: Side) -> &[Participant] {
        match side {
            Side::Team => &self.team,
            Side::Opponent => &self.opponent,
        }
    }

    /// The battle as `tag`'s own log shows it: `tag`'s side on `team` with `tag` first among
    /// teammates, each participant's side and the boat's result and role turned with it.
    /// Unchanged when `tag` did not play.
    pub fn turned_to(mut self, tag: &Tag) -> Battle {
        if self.side_of(tag) == Some(Side::Opponent) {
            std::mem::swap(&mut self.team, &mut self.opponent);
            for p in self.team.iter_mut().chain(self.opponent.iter_mut()) {
                p.side = p.side.other();
            }
            if let Some(boat) = self.boat.as_mut() {
                boat.won = boat.won.map(|w| !w);
                boat.side = boat.side.as_deref().map(|s| match s {
                    "attacker" => "defender".to_owned(),
                    "defender" => "attacker".to_owned(),
                    other => other.to_owned(),
                });
            }
        }
        if let Some(i) = self.team.iter().position(|p| p.tag.as_ref() == Some(tag)) {
            self.team.swap(0, i);
        }
        self
    }

    /// The participant with `tag`, on either side.
    pub fn participant(&self, tag: &Tag) -> Option<&Participant> {
        self.team
            .iter()
            .chain(&self.opponent)
            .find(|p| p.tag.as_ref() == Some(tag))
    }

    /// The side the player `tag` played on; `None` when they did not play.
    pub fn side_of(&self, tag: &Tag) -> Option<Side> {
        self.participant(tag).map(|p| p.side)
    }

    /// The outcome for the player `tag`; `None` when they did not play or the rule cannot
    /// tell.
    pub fn outcome_of(&self, tag: &Tag) -> Option<Outcome> {
        self.outcome(self.side_of(tag)?)
    }

    /// The participants `tag` played against (both of them in 2v2); empty when `tag` did not
    /// play.
    pub fn opponents_of(&self, tag: &Tag) -> &[Participant] {
        match self.side_of(tag) {
            Some(side) => self.side(side.other()),
            None => &[],
        }
    }

    /// Whether the battle is a duel (it has rounds).
    pub fn is_duel(&self) -> bool {
        self.team
            .iter()
            .chain(&self.opponent)
            .any(|p| !p.rounds.is_empty())
    }

    /// Each duel round's outcome for `side`, by crowns; empty for a battle without rounds.
    pub fn round_outcomes(&self, side: Side) -> Vec<Option<Outcome>> {
        match (self.team.first(), self.opponent.first()) {
            (Some(t), Some(o)) => t
                .rounds
                .iter()
                .zip(&o.rounds)
                .map(|(a, b)| seen_from(side, by_crowns(a.crowns, b.crowns)))
                .collect(),
            _ => Vec::new(),
        }
    }

    /// The duel rounds from the team's side, as battles_query lists them; empty for a battle
    /// without rounds.
    pub fn rounds(&self) -> Vec<BattleRound<'_>> {
        match (self.team.first(), self.opponent.first()) {
            (Some(t), Some(o)) => t
                .rounds
                .iter()
                .zip(&o.rounds)
                .enumerate()
                .map(|(i, (a, b))| BattleRound {
                    index: i + 1,
                    outcome: by_crowns(a.crowns, b.crowns),
                    team: round_side(a),
                    opponent: round_side(b),
                })
                .collect(),
            _ => Vec::new(),
        }
    }

    /// The games the battle counts as for `tag`'s deck and card rows: one per duel round
    /// (with the round's outcome, deck and cards), else one with the battle's outcome. Empty
    /// when `tag` did not play.
    pub fn games_of(&self, tag: &Tag) -> Vec<Game<'_>> {
        let Some(me) = self.participant(tag) else {
            return Vec::new();
        };
        let tower_troop = me.tower_troop.as_ref();
        if me.rounds.is_empty() {
            return vec![Game {
                round: None,
                outcome: self.outcome(me.side),
                deck_hash: me.deck_hash.as_deref(),
                cards: &me.cards,
                tower_troop,
            }];
        }
        let outcomes = self.round_outcomes(me.side);
        me.rounds
            .iter()
            .enumerate()
            .map(|(i, round)| Game {
                round: Some(i + 1),
                outcome: outcomes.get(i).copied().flatten(),
                deck_hash: round.deck_hash.as_deref(),
                cards: &round.cards,
                tower_troop,
            })
            .collect()
    }

    /// `tag`'s mean in-game deck level minus their opponents' (over every opponent's cards
    /// in 2v2); `None` unless both sides' decks are fully known.
    pub fn level_gap(&self, tag: &Tag) -> Option<f64> {
        let mine = self.participant(tag)?.mean_level()?;
        let opponents = self.opponents_of(tag);
        let cards: Vec<BattleCard> = opponents.iter().flat_map(|p| p.cards.clone()).collect();
        if opponents.iter().any(|p| p.cards.is_empty()) {
            return None;
        }
        Some(mine - mean_level(&cards)?)
    }
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
    /// A participant's (or their clan's) tag fails §6.1, so the `battle_id` cannot be made.
    #[error("{what} tag {tag:?} is not a valid tag")]
    Tag {
        /// Whose tag: `participant` or `clan`.
        what: &'static str,
        /// The tag as upstream sent it.
        tag: String,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

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

    fn side_input() -> impl proptest::strategy::Strategy<Value = OutcomeInput> {
        use proptest::prelude::*;
        let crowns = proptest::option::of(0i64..4);
        let trophies = proptest::option::of(-40i64..40);
        (
            proptest::option::of(any::<bool>()),
            proptest::collection::vec((crowns.clone(), crowns.clone()), 0..4),
            (trophies.clone(), trophies),
            (crowns.clone(), crowns),
        )
            .prop_map(
                |(boat_battle_won, rounds, trophy_change, crowns)| OutcomeInput {
                    boat_battle_won,
                    rounds,
                    trophy_change,
                    crowns,
                },
            )
    }

    proptest::proptest! {
        #![proptest_config(crate::prop_settings::config())]
        /// Seen from the other side, every rule gives the flipped outcome.
        #[test]
        fn the_rule_is_symmetric(input in side_input()) {
            let swap = |(a, b): (Option<i64>, Option<i64>)| (b, a);
            let other = OutcomeInput {
                boat_battle_won: input.boat_battle_won.map(|won| !won),
                rounds: input.rounds.iter().copied().map(swap).collect(),
                trophy_change: swap(input.trophy_change),
                crowns: swap(input.crowns),
            };
            proptest::prop_assert_eq!(outcome(&other), outcome(&input).map(Outcome::flip));
        }
    }

    #[test]
    fn played_forms_read_the_bit_field() {
        assert_eq!(Form::played(None), Some(Form::Base));
        assert_eq!(Form::played(Some(0)), Some(Form::Base));
        assert_eq!(Form::played(Some(1)), Some(Form::Evolution));
        assert_eq!(Form::played(Some(2)), Some(Form::Hero));
        assert_eq!(Form::played(Some(3)), None);
    }
}
