//! The record's entities as the store holds them: what an account tracks, the recorder's
//! schedule rows, and the rows of players, clans and battles. What they mean (normalization,
//! outcomes, STATS) is `elixir_record`'s; how they are stored is `crate::store`'s.

use uuid::Uuid;

use crate::domain::Millis;

/// Who inside an account tracks or names something: the person, or one of its agents.
/// Agents track only as watching and never see the person's list (§1.4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Principal {
    Person,
    Agent(Uuid),
}

impl Principal {
    /// The stored form: `person`, or the agent's id.
    pub fn key(&self) -> String {
        match self {
            Principal::Person => "person".to_owned(),
            Principal::Agent(id) => id.to_string(),
        }
    }
}

/// How a tracked player relates to the account (§2.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Relationship {
    Primary,
    Alt,
    Friend,
    Watching,
}

impl Relationship {
    pub const NAMES: [&'static str; 4] = ["primary", "alt", "friend", "watching"];

    pub fn as_str(self) -> &'static str {
        match self {
            Relationship::Primary => "primary",
            Relationship::Alt => "alt",
            Relationship::Friend => "friend",
            Relationship::Watching => "watching",
        }
    }

    pub fn parse(text: &str) -> Option<Relationship> {
        Some(match text {
            "primary" => Relationship::Primary,
            "alt" => Relationship::Alt,
            "friend" => Relationship::Friend,
            "watching" => Relationship::Watching,
            _ => return None,
        })
    }
}

/// What a tracked clan's recording covers: the clan and its member list, or also every
/// member's battle log.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ClanScope {
    Activity,
    Comprehensive,
}

impl ClanScope {
    pub fn as_str(self) -> &'static str {
        match self {
            ClanScope::Activity => "activity",
            ClanScope::Comprehensive => "comprehensive",
        }
    }

    pub fn parse(text: &str) -> Option<ClanScope> {
        match text {
            "activity" => Some(ClanScope::Activity),
            "comprehensive" => Some(ClanScope::Comprehensive),
            _ => None,
        }
    }
}

/// One tracked player of a principal, with what the record knows of them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrackedPlayer {
    pub player_tag: String,
    pub relationship: Relationship,
    pub notify: bool,
    pub created_at: Millis,
    /// From the record; `None` before the first read.
    pub name: Option<String>,
    pub clan_tag: Option<String>,
    pub clan_name: Option<String>,
    pub trophies: Option<i64>,
}

/// One tracked clan of a principal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrackedClan {
    pub clan_tag: String,
    pub scope: ClanScope,
    pub notify: bool,
    pub created_at: Millis,
    pub name: Option<String>,
}

/// The slots an account has used: players, and clans by scope (§4.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SlotUse {
    pub players: i64,
    pub clans_activity: i64,
    pub clans_comprehensive: i64,
}

/// A request to track a player, checked against the slot allowance in the same
/// transaction that writes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrackPlayer {
    pub account_id: Uuid,
    pub principal: Principal,
    pub player_tag: String,
    pub relationship: Relationship,
    /// The allowance; `None` is unlimited.
    pub max_players: Option<i64>,
    pub at: Millis,
}

/// What tracking a player did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TrackResult {
    /// Newly tracked, or its relationship changed; `demoted` is the old primary, now an alt.
    Changed { demoted: Option<String> },
    /// Already tracked exactly so.
    Unchanged,
    /// Every slot is in use.
    NoSlot,
}

/// A request to track a clan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrackClan {
    pub account_id: Uuid,
    pub principal: Principal,
    pub clan_tag: String,
    pub scope: ClanScope,
    /// The allowance of this scope; `None` is unlimited.
    pub max_of_scope: Option<i64>,
    pub at: Millis,
}

/// The endpoints the recorder schedules per subject (§7.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PollEndpoint {
    Battlelog,
    Player,
    Clan,
}

impl PollEndpoint {
    pub fn as_str(self) -> &'static str {
        match self {
            PollEndpoint::Battlelog => "battlelog",
            PollEndpoint::Player => "player",
            PollEndpoint::Clan => "clan",
        }
    }

    pub fn parse(text: &str) -> Option<PollEndpoint> {
        match text {
            "battlelog" => Some(PollEndpoint::Battlelog),
            "player" => Some(PollEndpoint::Player),
            "clan" => Some(PollEndpoint::Clan),
            _ => None,
        }
    }
}

/// One row of the recorder's schedule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Poll {
    pub endpoint: PollEndpoint,
    pub subject: String,
    pub next_at: Millis,
    pub reason: String,
    pub lease_owner: Option<String>,
    pub lease_until: Option<Millis>,
    pub last_read_at: Option<Millis>,
    pub last_status: Option<i64>,
    pub failures: i64,
    pub empty_reads: i64,
    pub held_until: Option<Millis>,
    pub not_found: bool,
    pub demand_until: Option<Millis>,
    pub fastest_fill_ms: Option<Millis>,
    pub created_at: Millis,
}

impl Poll {
    /// Whether a 404 holds the subject at `now` (its recording shows `held`).
    pub fn is_held(&self, now: Millis) -> bool {
        self.not_found || self.held_until.is_some_and(|until| until > now)
    }
}

/// What a finished read sets on its schedule row (the lease is released).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PollDone {
    pub next_at: Millis,
    pub reason: String,
    pub read_at: Millis,
    pub status: Option<i64>,
    pub failures: i64,
    pub empty_reads: i64,
    pub held_until: Option<Millis>,
    pub not_found: bool,
    pub fastest_fill_ms: Option<Millis>,
}

/// A recorded player's side of one battle, as its log showed it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BattleSide {
    pub player_tag: String,
    /// `team` or `opponent` in the stored body.
    pub side: String,
    pub outcome: Option<String>,
    pub crowns: Option<i64>,
    pub trophy_change: Option<i64>,
    pub deck_hash: Option<String>,
    pub opponent_tag: Option<String>,
    pub clan_tag: Option<String>,
}

/// One normalized battle to store from one player's log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewBattle {
    pub battle_id: String,
    pub battle_time: Millis,
    pub battle_type: String,
    pub mode: String,
    pub game_mode_id: Option<i64>,
    /// The normalized battle as JSON.
    pub body: String,
    /// The same battle as each other tagged participant's log shows it (JSON of
    /// `Battle::turned_to`): a re-sighting whose stored body is one of these has nothing to
    /// fill, so the store compares strings instead of parsing both bodies.
    pub views: Vec<String>,
    pub observer: BattleSide,
    /// The games the observer's side counts as in deck and card rows (SURFACE §3.4): one for
    /// a battle, one per round for a duel.
    pub games: Vec<NewGame>,
}

/// One game of an observation, as the meta index stores it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewGame {
    /// 0 for a battle that is not a duel; a duel's 1-based round.
    pub round: i64,
    /// `win`, `loss`, `draw`; `None` when unknown.
    pub outcome: Option<String>,
    /// The deck played; `None` when undisclosed.
    pub deck: Option<NewDeck>,
}

/// A deck as the meta index stores it once per `deck_hash`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewDeck {
    pub deck_hash: String,
    /// The `"<id>:<form>"` keys sorted bytewise, joined by `,`.
    pub card_keys: String,
    /// JSON `[{id, name, form, elixir}]` in `card_keys` order.
    pub cards: String,
    /// JSON `{id, name}` of the tower troop; `None` when none was reported.
    pub tower_troop: Option<String>,
}

/// What storing one battle-log read did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Ingested {
    /// Battles new to the record.
    pub new_battles: usize,
    /// Battles new to this player's observations (new battles included).
    pub new_observations: usize,
    /// The player's newest recorded battle before this read; `None` on a first read.
    pub previous_newest: Option<Millis>,
}

/// A stored battle read back for one player.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordedBattle {
    pub battle_id: String,
    pub battle_time: Millis,
    pub mode: String,
    pub side: BattleSide,
    pub body: String,
}

/// A stored player row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlayerRow {
    pub tag: String,
    pub name: String,
    pub clan_tag: Option<String>,
    pub clan_name: Option<String>,
    pub role: Option<String>,
    pub trophies: Option<i64>,
    /// The normalized profile as JSON; `None` until `/players/{tag}` is read.
    pub profile: Option<String>,
    pub observed_at: Option<Millis>,
    pub first_seen_at: Millis,
    pub last_battle_at: Option<Millis>,
}

/// One profile read's numbers, for the daily series.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PlayerSnapshot {
    pub player_tag: String,
    pub observed_at: Millis,
    pub trophies: Option<i64>,
    pub best_trophies: Option<i64>,
    pub pol_league: Option<i64>,
    pub pol_trophies: Option<i64>,
    pub king_tower_level: Option<i64>,
    pub collection_level: Option<i64>,
    pub donations: Option<i64>,
    pub battle_count: Option<i64>,
    pub wins: Option<i64>,
    pub losses: Option<i64>,
}

/// A stored clan row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClanRow {
    pub tag: String,
    pub name: String,
    pub profile: Option<String>,
    pub observed_at: Option<Millis>,
    pub first_seen_at: Millis,
}

/// One member as a clan read lists them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemberSeen {
    pub player_tag: String,
    pub name: String,
    pub role: Option<String>,
    pub last_seen_at: Option<Millis>,
}

/// One stint of a player in a clan, as observed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Membership {
    pub clan_tag: String,
    pub player_tag: String,
    pub name: String,
    pub role: Option<String>,
    pub joined_observed_at: Millis,
    pub left_observed_at: Option<Millis>,
    pub last_seen_at: Option<Millis>,
}

/// A span the record may miss (§7.4).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CoverageGap {
    pub subject: String,
    pub from_at: Millis,
    pub to_at: Millis,
    pub reason: String,
    pub detected_at: Millis,
}

/// One battle-log read, as coverage measures it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogRead {
    pub player_tag: String,
    pub read_at: Millis,
    pub entries: i64,
    pub new_entries: i64,
    pub oldest_at: Option<Millis>,
    pub newest_at: Option<Millis>,
}

/// The corpus figures of elixir_data_insights.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CorpusCounts {
    pub battles: i64,
    pub players: i64,
    pub players_recorded: i64,
    pub clans_recorded: i64,
    pub recordings_active: i64,
    pub first_battle_at: Option<Millis>,
    pub battles_last_24h: i64,
    pub due_polls: i64,
    pub oldest_due_at: Option<Millis>,
}
