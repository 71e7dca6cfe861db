//! The generated world's data and the questions a test asks of it: players (names over time,
//! collection, decks), clans and memberships over time, and every battle as generated with
//! the expected outcome per participant. Generation (`World::generate`) lives in `generate`, JSON in `render`.

use std::collections::HashMap;

use crate::WorldError;
use crate::catalog::Catalog;

/// What to generate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WorldConfig {
    /// Everything follows from the seed: the same config gives the same world.
    pub seed: u64,
    /// Tracked players (1 ..= 100,000).
    pub players: u32,
    /// Days of battle history (1 ..= 400).
    pub days: u32,
    /// The instant the history ends (exclusive), in Unix milliseconds.
    pub end_millis: i64,
    /// Tracked clans; `None` is one per 45 players. At least enough for every player under
    /// the game's 50-member cap, at most one per player (some may then stay empty)
    /// ([`WorldConfig::with_clans`]).
    pub clans: Option<u32>,
    /// Every opponent (and 2v2 partner) a tracked player, so each battle is in at least two
    /// tracked logs (the ingest benchmark's dedupe); off by default: most opponents are
    /// synthetic, as for a recorder of a few clans ([`WorldConfig::with_tracked_opponents`]).
    pub tracked_opponents: bool,
}

impl WorldConfig {
    /// The largest world the generator accepts.
    pub const MAX_PLAYERS: u32 = 100_000;
    /// The longest history the generator accepts.
    pub const MAX_DAYS: u32 = 400;
    /// The members a clan holds at most (the game's cap).
    pub const MAX_MEMBERS: u32 = 50;

    /// A config; [`World::generate`] checks it.
    pub fn new(seed: u64, players: u32, days: u32, end_millis: i64) -> WorldConfig {
        WorldConfig {
            seed,
            players,
            days,
            end_millis,
            clans: None,
            tracked_opponents: false,
        }
    }

    /// The same config with every opponent a tracked player (see
    /// [`WorldConfig::tracked_opponents`]). The other draws are unchanged: a battle keeps its
    /// type, time, owner's deck and result, and only its synthetic slots are filled.
    pub fn with_tracked_opponents(mut self) -> WorldConfig {
        self.tracked_opponents = true;
        self
    }

    /// The same config with `clans` tracked clans (checked by [`World::generate`]).
    pub fn with_clans(mut self, clans: u32) -> WorldConfig {
        self.clans = Some(clans);
        self
    }

    /// The fewest clans that hold every player of the world (50 members each at most).
    pub fn min_clans(&self) -> u32 {
        self.players.div_ceil(Self::MAX_MEMBERS).max(1)
    }

    /// The clans the world will have.
    pub fn clan_count(&self) -> u32 {
        self.clans
            .unwrap_or_else(|| self.players.div_ceil(45).max(1))
    }

    /// Where the history starts (inclusive): `end - days × 24 h`.
    pub fn start_millis(&self) -> i64 {
        self.end_millis - i64::from(self.days) * crate::calendar::DAY_MS
    }

    pub(crate) fn check(&self) -> Result<(), WorldError> {
        if self.players == 0 || self.players > Self::MAX_PLAYERS {
            return Err(WorldError::Config(format!(
                "players must be 1..={}, got {}",
                Self::MAX_PLAYERS,
                self.players
            )));
        }
        if self.days == 0 || self.days > Self::MAX_DAYS {
            return Err(WorldError::Config(format!(
                "days must be 1..={}, got {}",
                Self::MAX_DAYS,
                self.days
            )));
        }
        if let Some(clans) = self.clans
            && (clans < self.min_clans() || clans > self.players)
        {
            return Err(WorldError::Config(format!(
                "clans must be {}..={} for {} players (50 members at most, one per player at most), \
                 got {clans}",
                self.min_clans(),
                self.players,
                self.players
            )));
        }
        // Keep every generated instant inside what the API format (and jiff) can write.
        const YEAR_2000: i64 = 946_684_800_000;
        const YEAR_2100: i64 = 4_102_444_800_000;
        if self.start_millis() < YEAR_2000 || self.end_millis > YEAR_2100 {
            return Err(WorldError::Config(format!(
                "the history must lie between 2000 and 2100, got end_millis {}",
                self.end_millis
            )));
        }
        Ok(())
    }
}

/// A clan role.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Role {
    /// `leader`.
    Leader,
    /// `coLeader`.
    CoLeader,
    /// `elder`.
    Elder,
    /// `member`.
    Member,
}

impl Role {
    /// The API's spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Leader => "leader",
            Role::CoLeader => "coLeader",
            Role::Elder => "elder",
            Role::Member => "member",
        }
    }
}

/// How often a player plays.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Activity {
    /// Probability (per mille) that a day is an active day.
    pub active_per_mille: u16,
    /// Battles on an active day, inclusive range (between 5 and 40; 0 for idle players).
    pub battles_per_day: (u8, u8),
}

impl Activity {
    /// Whether the player never plays.
    pub fn is_idle(&self) -> bool {
        self.active_per_mille == 0
    }
}

/// A card a player owns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OwnedCard {
    /// Index into [`Catalog::cards`] (or [`Catalog::tower_troops`] for tower troops).
    pub card: u16,
    /// Rarity-relative API level (1 ..= the rarity's `maxLevel`).
    pub level: u8,
    /// Forms owned, as the API's bit field (0 none, 1 evolution, 2 hero, 3 both).
    pub evolution_level: u8,
    /// Star level (0 = absent on the wire).
    pub star_level: u8,
    /// Spare copies.
    pub count: u32,
}

/// An eight-card deck with the form played in each slot and a tower troop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Deck {
    /// Catalogue indices of the eight cards.
    pub cards: [u16; 8],
    /// The form played per slot: 0 none, 1 evolution, 2 hero.
    pub forms: [u8; 8],
    /// Catalogue index of the tower troop ([`Catalog::tower_troops`]).
    pub tower_troop: u16,
}

/// A tracked player.
#[derive(Debug, Clone)]
pub struct Player {
    /// `#…` tag.
    pub tag: String,
    /// Names over time: `(from_millis, name)`, ascending; the first starts before the history.
    pub names: Vec<(i64, String)>,
    /// Experience level.
    pub exp_level: u8,
    /// King tower level (1 ..= 16).
    pub king_tower_level: u8,
    /// Ladder trophies when the history starts.
    pub start_trophies: i32,
    /// Best ladder trophies before the history.
    pub best_trophies_before: i32,
    /// Path of Legend league (1 ..= 10).
    pub pol_league: u8,
    /// Path of Legend trophies when the history starts.
    pub pol_start_trophies: i32,
    /// Owned playable cards.
    pub collection: Vec<OwnedCard>,
    /// Owned tower troops (Tower Princess always first).
    pub tower_troops: Vec<OwnedCard>,
    /// Ladder decks (played in rotation) followed by four war decks with 32 distinct cards.
    pub decks: Vec<Deck>,
    /// How often the player plays.
    pub activity: Activity,
    /// Battles, wins, losses and three-crown wins before the history.
    pub totals_before: Totals,
}

/// Lifetime counters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Totals {
    /// `battleCount`.
    pub battles: u32,
    /// `wins`.
    pub wins: u32,
    /// `losses`.
    pub losses: u32,
    /// `threeCrownWins`.
    pub three_crown_wins: u32,
}

impl Player {
    /// The name in use at `millis`.
    pub fn name_at(&self, millis: i64) -> &str {
        self.names
            .iter()
            .rev()
            .find(|(from, _)| *from <= millis)
            .or(self.names.first())
            .map(|(_, name)| name.as_str())
            .unwrap_or("")
    }

    /// How many ladder decks precede the four war decks in [`Player::decks`].
    pub fn ladder_decks(&self) -> usize {
        self.decks.len().saturating_sub(4)
    }

    /// The owned entry of a playable card.
    pub fn owned(&self, card: u16) -> Option<&OwnedCard> {
        self.collection.iter().find(|owned| owned.card == card)
    }

    /// The owned entry of a tower troop.
    pub fn owned_tower_troop(&self, card: u16) -> Option<&OwnedCard> {
        self.tower_troops.iter().find(|owned| owned.card == card)
    }
}

/// A tracked clan.
#[derive(Debug, Clone)]
pub struct Clan {
    /// `#…` tag.
    pub tag: String,
    /// Name.
    pub name: String,
    /// Description.
    pub description: String,
    /// `open`, `inviteOnly` or `closed`.
    pub kind: &'static str,
    /// Badge id (16000000 + n).
    pub badge_id: u32,
    /// Location `(id, name, isCountry, countryCode)`.
    pub location: (u32, &'static str, bool, Option<&'static str>),
    /// Required trophies.
    pub required_trophies: u32,
    /// Clan war trophies.
    pub war_trophies: u32,
}

/// One stretch of a player's membership of a clan with one role.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Membership {
    /// Index into [`World::players`].
    pub player: u32,
    /// Index into [`World::clans`].
    pub clan: u32,
    /// The role held during the stretch.
    pub role: Role,
    /// Inclusive start, Unix milliseconds (before the history for founding members).
    pub from_millis: i64,
    /// Exclusive end; `None` while it lasts.
    pub to_millis: Option<i64>,
}

impl Membership {
    /// Whether the stretch covers `millis`.
    pub fn covers(&self, millis: i64) -> bool {
        self.from_millis <= millis && self.to_millis.is_none_or(|to| millis < to)
    }
}

/// A name change on a given day.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NameChange {
    /// Index into [`World::players`].
    pub player: u32,
    /// When, Unix milliseconds.
    pub at_millis: i64,
    /// The name before.
    pub from: String,
    /// The name after.
    pub to: String,
}

/// A clan move on a given day: the player leaves one clan and, a few hours later, joins another.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClanMove {
    /// Index into [`World::players`].
    pub player: u32,
    /// The clan left.
    pub from_clan: u32,
    /// When the player left.
    pub left_millis: i64,
    /// The clan joined (as `member`).
    pub to_clan: u32,
    /// When the player joined.
    pub joined_millis: i64,
}

/// Who fills a battle slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Who {
    /// A tracked player (index into [`World::players`]).
    Tracked(u32),
    /// An untracked player, invented from the battle's seed and the slot.
    Synthetic,
}

/// How one battle ended for one side: the record's type (elixir-record). The world decides
/// it from its own winner ([`Battle::outcome`]), never by the record's rule over the rendered
/// JSON, so the cross-check of that rule stays independent.
pub use elixir_record::Outcome;

const SYNTHETIC: u32 = u32::MAX;
const EMPTY: u32 = u32::MAX - 1;
const ABSENT_TROPHIES: i32 = i32::MIN;
const ABSENT_CHANGE: i16 = i16::MIN;

/// One participant slot of a battle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Participant {
    who: u32,
    deck: u8,
    starting_trophies: i32,
    trophy_change: i16,
}

impl Participant {
    pub(crate) const EMPTY: Participant = Participant {
        who: EMPTY,
        deck: 0,
        starting_trophies: ABSENT_TROPHIES,
        trophy_change: ABSENT_CHANGE,
    };

    pub(crate) fn tracked(player: u32, deck: u8) -> Participant {
        Participant {
            who: player,
            deck,
            ..Participant::EMPTY
        }
    }

    pub(crate) fn synthetic() -> Participant {
        Participant {
            who: SYNTHETIC,
            ..Participant::EMPTY
        }
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.who == EMPTY
    }

    /// Who plays in this slot.
    pub fn who(&self) -> Who {
        if self.who == SYNTHETIC {
            Who::Synthetic
        } else {
            Who::Tracked(self.who)
        }
    }

    /// The tracked player's index, if tracked.
    pub fn player(&self) -> Option<u32> {
        match self.who() {
            Who::Tracked(index) => Some(index),
            Who::Synthetic => None,
        }
    }

    /// The index into the tracked player's [`Player::decks`] played (the first of four war
    /// decks for duels).
    pub fn deck(&self) -> u8 {
        self.deck
    }

    /// `startingTrophies`, when the battle type reports it.
    pub fn starting_trophies(&self) -> Option<i32> {
        (self.starting_trophies != ABSENT_TROPHIES).then_some(self.starting_trophies)
    }

    /// `trophyChange`, when reported and not null.
    pub fn trophy_change(&self) -> Option<i16> {
        (self.trophy_change != ABSENT_CHANGE).then_some(self.trophy_change)
    }

    pub(crate) fn set_trophies(&mut self, start: i32, change: Option<i16>) {
        self.starting_trophies = start;
        self.trophy_change = change.unwrap_or(ABSENT_CHANGE);
    }
}

/// One battle as generated. Side 0 is the side of the player whose log generated it; the
/// API shows it from each tracked participant's side (`team` = that player's side).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Battle {
    pub(crate) time_millis: i64,
    pub(crate) seed: u32,
    pub(crate) kind: BattleType,
    pub(crate) winner: Option<u8>,
    pub(crate) null_trophy_change: bool,
    pub(crate) crowns: [u8; 2],
    /// Duel rounds: `count` in bits 0–1, round `i` side `s` crowns at bit `2 + 4i + 2s`.
    pub(crate) rounds: u16,
    pub(crate) slots: [Participant; 4],
}

impl Battle {
    /// When it was played (whole seconds), Unix milliseconds.
    pub fn time_millis(&self) -> i64 {
        self.time_millis
    }

    /// The upstream `type`.
    pub fn kind(&self) -> BattleType {
        self.kind
    }

    /// The seed the battle's invented details (untracked players, hit points …) come from.
    pub fn seed(&self) -> u32 {
        self.seed
    }

    /// Players per side: 1, or 2 for `clanMate2v2`.
    pub fn per_side(&self) -> usize {
        if self.slots[1].is_empty() { 1 } else { 2 }
    }

    /// The participants of a side (0 or 1).
    pub fn side(&self, side: usize) -> &[Participant] {
        let start = if side == 0 { 0 } else { 2 };
        &self.slots[start..start + self.per_side()]
    }

    pub(crate) fn side_mut(&mut self, side: usize) -> &mut [Participant] {
        let per_side = self.per_side();
        let start = if side == 0 { 0 } else { 2 };
        &mut self.slots[start..start + per_side]
    }

    /// The crowns a side took (summed over rounds for duels).
    pub fn crowns(&self, side: usize) -> u8 {
        self.crowns[side.min(1)]
    }

    /// Whether the battle's trophy change is reported as `null` (a ladder oddity the
    /// recorder must survive).
    pub fn null_trophy_change(&self) -> bool {
        self.null_trophy_change
    }

    /// Duel rounds as `(side 0 crowns, side 1 crowns)`; empty for other types.
    pub fn rounds(&self) -> Vec<(u8, u8)> {
        let count = usize::from(self.rounds & 0b11);
        (0..count)
            .map(|i| {
                let at = 2 + 4 * i;
                let side0 = ((self.rounds >> at) & 0b11) as u8;
                let side1 = ((self.rounds >> (at + 2)) & 0b11) as u8;
                (side0, side1)
            })
            .collect()
    }

    /// Which side a tracked player is on.
    pub fn side_of(&self, player: u32) -> Option<usize> {
        (0..2).find(|&side| self.side(side).iter().any(|p| p.player() == Some(player)))
    }

    /// The expected outcome for a side, by the rules of SURFACE §6.4 (boat won, duel rounds,
    /// opposite trophy changes, crowns).
    pub fn outcome(&self, side: usize) -> Outcome {
        match self.winner {
            None => Outcome::Draw,
            Some(w) if usize::from(w) == side => Outcome::Win,
            Some(_) => Outcome::Loss,
        }
    }

    /// The expected outcome for a tracked player, if they played in it.
    pub fn outcome_for(&self, player: u32) -> Option<Outcome> {
        self.side_of(player).map(|side| self.outcome(side))
    }

    /// Tracked players in the battle.
    pub fn tracked(&self) -> impl Iterator<Item = u32> + '_ {
        self.slots
            .iter()
            .filter(|p| !p.is_empty())
            .filter_map(Participant::player)
    }
}

/// The generated world.
#[derive(Debug)]
pub struct World {
    pub(crate) config: WorldConfig,
    pub(crate) catalog: Catalog,
    pub(crate) players: Vec<Player>,
    pub(crate) clans: Vec<Clan>,
    pub(crate) memberships: Vec<Membership>,
    pub(crate) by_player_memberships: Vec<Vec<u32>>,
    pub(crate) battles: Vec<Battle>,
    pub(crate) by_player: Vec<Vec<u32>>,
    pub(crate) name_changes: Vec<NameChange>,
    pub(crate) clan_moves: Vec<ClanMove>,
    pub(crate) player_tags: HashMap<String, u32>,
    pub(crate) clan_tags: HashMap<String, u32>,
    pub(crate) rival_clans: Vec<(String, String, u32)>,
}

/// History events a test sets itself: when a script is given, its renames and moves replace
/// the generated ones (promotions stay generated).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Script {
    /// `(player, day, name)`: the player takes `name` at 12:00 into history day `day`
    /// (0-based, counted from [`WorldConfig::start_millis`]).
    pub renames: Vec<(u32, u32, String)>,
    /// `(player, day, clan)`: the player leaves their clan at 12:00 into history day `day` and
    /// joins `clan` as `member` two hours later.
    pub moves: Vec<(u32, u32, u32)>,
}

impl Script {
    /// When a scripted event on history day `day` happens.
    pub fn instant(config: &WorldConfig, day: u32) -> i64 {
        config.start_millis()
            + i64::from(day) * crate::calendar::DAY_MS
            + 12 * crate::calendar::HOUR_MS
    }
}

impl World {
    /// The config it was generated from.
    pub fn config(&self) -> &WorldConfig {
        &self.config
    }

    /// The card catalogue.
    pub fn catalog(&self) -> &Catalog {
        &self.catalog
    }

    /// Tracked players.
    pub fn players(&self) -> &[Player] {
        &self.players
    }

    /// Tracked clans.
    pub fn clans(&self) -> &[Clan] {
        &self.clans
    }

    /// Every membership stretch (founding members start before the history).
    pub fn memberships(&self) -> &[Membership] {
        &self.memberships
    }

    /// Every battle, ascending by time.
    pub fn battles(&self) -> &[Battle] {
        &self.battles
    }

    /// Name changes, ascending by time.
    pub fn name_changes(&self) -> &[NameChange] {
        &self.name_changes
    }

    /// Clan moves, ascending by time.
    pub fn clan_moves(&self) -> &[ClanMove] {
        &self.clan_moves
    }

    /// A tracked player's index by tag (`#…`, exact).
    pub fn player_index(&self, tag: &str) -> Option<u32> {
        self.player_tags.get(tag).copied()
    }

    /// A tracked clan's index by tag (`#…`, exact).
    pub fn clan_index(&self, tag: &str) -> Option<u32> {
        self.clan_tags.get(tag).copied()
    }

    /// Indices into [`World::battles`] of the player's battles, ascending by time.
    pub fn battles_of(&self, player: u32) -> &[u32] {
        self.by_player
            .get(player as usize)
            .map(Vec::as_slice)
            .unwrap_or(&[])
    }

    /// The player's battles played before `millis` (exclusive), ascending.
    pub fn battles_before(&self, player: u32, millis: i64) -> &[u32] {
        let all = self.battles_of(player);
        let cut = all.partition_point(|&b| self.battles[b as usize].time_millis < millis);
        &all[..cut]
    }

    /// The player's clan and role at `millis`.
    pub fn membership_at(&self, player: u32, millis: i64) -> Option<&Membership> {
        self.by_player_memberships
            .get(player as usize)?
            .iter()
            .map(|&m| &self.memberships[m as usize])
            .find(|m| m.covers(millis))
    }

    /// The clan's members at `millis`, as membership stretches.
    pub fn members_at(&self, clan: u32, millis: i64) -> Vec<&Membership> {
        self.memberships
            .iter()
            .filter(|m| m.clan == clan && m.covers(millis))
            .collect()
    }

    /// Ladder trophies after the player's last battle before `millis`.
    pub fn trophies_at(&self, player: u32, millis: i64) -> i32 {
        let start = self
            .players
            .get(player as usize)
            .map_or(0, |p| p.start_trophies);
        self.last_trophies(player, millis, BattleType::PvP)
            .unwrap_or(start)
    }

    /// Path of Legend trophies after the player's last ranked battle before `millis`.
    pub fn pol_trophies_at(&self, player: u32, millis: i64) -> i32 {
        let start = self
            .players
            .get(player as usize)
            .map_or(0, |p| p.pol_start_trophies);
        self.last_trophies(player, millis, BattleType::PathOfLegend)
            .unwrap_or(start)
    }

    fn last_trophies(&self, player: u32, millis: i64, kind: BattleType) -> Option<i32> {
        self.battles_before(player, millis)
            .iter()
            .rev()
            .find_map(|&b| {
                let battle = &self.battles[b as usize];
                if battle.kind != kind {
                    return None;
                }
                let side = battle.side_of(player)?;
                let me = battle
                    .side(side)
                    .iter()
                    .find(|p| p.player() == Some(player))?;
                let start = me.starting_trophies()?;
                Some(start + i32::from(me.trophy_change().unwrap_or(0)))
            })
    }

    /// Lifetime counters as of `millis`: the counters before the history plus every battle
    /// since (wins and losses by expected outcome; draws count as battles only).
    pub fn totals_at(&self, player: u32, millis: i64) -> Totals {
        let mut totals = self
            .players
            .get(player as usize)
            .map(|p| p.totals_before)
            .unwrap_or_default();
        for &b in self.battles_before(player, millis) {
            let battle = &self.battles[b as usize];
            totals.battles += 1;
            let Some(side) = battle.side_of(player) else {
                continue;
            };
            match battle.outcome(side) {
                Outcome::Win => {
                    totals.wins += 1;
                    if battle.crowns(side) == 3 {
                        totals.three_crown_wins += 1;
                    }
                }
                Outcome::Loss => totals.losses += 1,
                Outcome::Draw => {}
            }
        }
        totals
    }

    /// A rough count of the bytes the world holds on the heap (battles, indices, players).
    pub fn approx_heap_bytes(&self) -> usize {
        let battles = self.battles.capacity() * std::mem::size_of::<Battle>();
        let index: usize = self.by_player.iter().map(|v| v.capacity() * 4 + 24).sum();
        let players: usize = self
            .players
            .iter()
            .map(|p| {
                std::mem::size_of::<Player>()
                    + p.collection.capacity() * std::mem::size_of::<OwnedCard>()
                    + p.tower_troops.capacity() * std::mem::size_of::<OwnedCard>()
                    + p.decks.capacity() * std::mem::size_of::<Deck>()
                    + p.names
                        .iter()
                        .map(|(_, n)| n.capacity() + 32)
                        .sum::<usize>()
                    + p.tag.capacity()
            })
            .sum();
        let tags = self.player_tags.capacity() * 48 + self.clan_tags.capacity() * 48;
        battles + index + players + tags + self.memberships.capacity() * 32
    }
}

/// The upstream battle `type`s the world generates (SURFACE §6.5 lists their modes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum BattleType {
    /// `PvP`: ladder.
    PvP,
    /// `pathOfLegend`.
    PathOfLegend,
    /// `riverRacePvP`: a war battle (no tower troop reported).
    RiverRacePvP,
    /// `riverRaceDuel`: best of three rounds.
    RiverRaceDuel,
    /// `riverRaceDuelColosseum`: a duel in the season's last war week.
    RiverRaceDuelColosseum,
    /// `boatBattle`: an attack on another clan's boat (12-card defence list).
    BoatBattle,
    /// `clanMate2v2`: two per side.
    ClanMate2v2,
    /// `friendly`.
    Friendly,
    /// `clanMate`: a friendly battle with a clan mate.
    ClanMate,
    /// `tournament`.
    Tournament,
    /// `trail`: an event with `cards: []` and `modifiers`.
    Trail,
    /// `challenge`.
    Challenge,
    /// A type the recorder does not know (`seasonalBattle`), mode `other`.
    Unknown,
}

impl BattleType {
    /// Every type, in declaration order.
    pub const ALL: [BattleType; 13] = [
        BattleType::PvP,
        BattleType::PathOfLegend,
        BattleType::RiverRacePvP,
        BattleType::RiverRaceDuel,
        BattleType::RiverRaceDuelColosseum,
        BattleType::BoatBattle,
        BattleType::ClanMate2v2,
        BattleType::Friendly,
        BattleType::ClanMate,
        BattleType::Tournament,
        BattleType::Trail,
        BattleType::Challenge,
        BattleType::Unknown,
    ];

    /// The upstream `type` string, verbatim.
    pub fn as_str(self) -> &'static str {
        match self {
            BattleType::PvP => "PvP",
            BattleType::PathOfLegend => "pathOfLegend",
            BattleType::RiverRacePvP => "riverRacePvP",
            BattleType::RiverRaceDuel => "riverRaceDuel",
            BattleType::RiverRaceDuelColosseum => "riverRaceDuelColosseum",
            BattleType::BoatBattle => "boatBattle",
            BattleType::ClanMate2v2 => "clanMate2v2",
            BattleType::Friendly => "friendly",
            BattleType::ClanMate => "clanMate",
            BattleType::Tournament => "tournament",
            BattleType::Trail => "trail",
            BattleType::Challenge => "challenge",
            BattleType::Unknown => "seasonalBattle",
        }
    }

    /// Whether the type is a war duel (rounds, summed crowns, concatenated cards).
    pub fn is_duel(self) -> bool {
        matches!(
            self,
            BattleType::RiverRaceDuel | BattleType::RiverRaceDuelColosseum
        )
    }

    /// Whether the type is a river race battle (no tower troop reported).
    pub fn is_war(self) -> bool {
        self.is_duel() || matches!(self, BattleType::RiverRacePvP | BattleType::BoatBattle)
    }
}
