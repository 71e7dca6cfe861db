//! Sidequest's domain: the records of a campaign and the pure rules of play. No HTTP, no SQL.

pub mod assignment;
pub mod fields;
pub mod login;
pub mod password;
pub mod play;
pub mod report;
pub mod review;
pub mod text;
pub mod time;
pub mod token;
pub mod wiki;

use serde::{Deserialize, Serialize};
use uuid::Uuid;

/// Milliseconds since the Unix epoch; the one time representation the store keeps.
pub type Millis = i64;

/// How an assignment is played.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    Absence,
    Downtime,
    Solo,
}

/// The language of an assignment's facilitator contract and report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Language {
    En,
    Pl,
}

/// Whether an assignment still accepts turns.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PlayStatus {
    Active,
    Completed,
}

/// What kind of campaign effect a consequence proposes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Category {
    Resource,
    Relationship,
    Discovery,
    Narrative,
}

/// Where a consequence stands in the GM's review.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ConsequenceStatus {
    Pending,
    Approved,
    Rejected,
}

/// What a journal event records. Only `Turn` and `Finish` are shown to the player.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EventKind {
    Turn,
    Finish,
    Review,
    GmNote,
}

impl EventKind {
    /// Whether the player's journal shows events of this kind.
    pub fn player_visible(self) -> bool {
        matches!(self, EventKind::Turn | EventKind::Finish)
    }
}

/// What an operation receipt acknowledges.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OperationKind {
    Turn,
    Finish,
    Review,
}

macro_rules! text_enum {
    ($($ty:ident { $($variant:ident => $text:literal),+ $(,)? })+) => {$(
        impl $ty {
            /// The stored and wire spelling.
            pub fn as_str(self) -> &'static str {
                match self { $($ty::$variant => $text),+ }
            }
            /// Parses the stored and wire spelling.
            pub fn parse(text: &str) -> Option<Self> {
                match text { $($text => Some($ty::$variant),)+ _ => None }
            }
        }
    )+};
}

text_enum! {
    Mode { Absence => "absence", Downtime => "downtime", Solo => "solo" }
    Language { En => "en", Pl => "pl" }
    PlayStatus { Active => "active", Completed => "completed" }
    Category { Resource => "resource", Relationship => "relationship", Discovery => "discovery", Narrative => "narrative" }
    ConsequenceStatus { Pending => "pending", Approved => "approved", Rejected => "rejected" }
    EventKind { Turn => "turn", Finish => "finish", Review => "review", GmNote => "gm_note" }
    OperationKind { Turn => "turn", Finish => "finish", Review => "review" }
}

/// A person who signs in: a GM, a player, or both.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct User {
    pub id: Uuid,
    pub username: String,
    pub display_name: String,
    pub is_gm: bool,
    pub active: bool,
    pub created_at: Millis,
}

/// A scenario owned by a GM; its nodes are frozen per published `version`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scenario {
    pub id: Uuid,
    pub owner_id: Uuid,
    pub title: String,
    /// The latest published source version (0 before the first publish).
    pub version: i64,
    pub created_at: Millis,
}

/// One node of a scenario at one source version.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Node {
    /// Stable id within the scenario, e.g. `harbor`.
    pub id: String,
    /// `scene`, `npc`, `item`, `location` or `note`.
    pub kind: String,
    pub title: String,
    pub published: bool,
    pub public_text: String,
    pub gm_text: String,
}

/// A GM's assignment of solo, downtime or absence play to one player.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Assignment {
    pub id: Uuid,
    pub scenario_id: Uuid,
    pub source_version: i64,
    pub gm_id: Uuid,
    pub player_id: Uuid,
    pub mode: Mode,
    pub language: Language,
    pub character: String,
    pub brief: String,
    pub instructions: String,
    pub boundaries: String,
    pub return_condition: String,
    pub gm_notes: String,
    pub published_node_ids: Vec<String>,
    pub auto_approve: bool,
    pub status: PlayStatus,
    pub version: i64,
    pub memory: String,
    pub current_scene: Option<String>,
    pub summary: Option<String>,
    pub created_at: Millis,
    pub updated_at: Millis,
}

/// One committed journal event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JournalEvent {
    pub version: i64,
    pub kind: EventKind,
    pub operation_id: Option<Uuid>,
    pub player_action: Option<String>,
    pub narration: Option<String>,
    pub summary: Option<String>,
    /// GM-private text (review notes summary, GM notes); never shown to the player.
    pub gm_private: Option<String>,
    pub scene: Option<String>,
    pub created_at: Millis,
}

/// A proposed campaign effect and the GM's decision on it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Consequence {
    pub id: Uuid,
    pub assignment_id: Uuid,
    /// The version of the turn that proposed it.
    pub version: i64,
    pub category: Category,
    pub description: String,
    pub status: ConsequenceStatus,
    pub gm_note: Option<String>,
    pub created_at: Millis,
    pub decided_at: Option<Millis>,
}

/// The stored acknowledgement of one operation, replayed verbatim on an identical retry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Receipt {
    pub assignment_id: Uuid,
    pub operation_id: Uuid,
    pub kind: OperationKind,
    /// SHA-256 (hex) of the normalized arguments.
    pub args_hash: String,
    /// The original result, as JSON, without the `replayed` flag.
    pub result: serde_json::Value,
    pub version: i64,
    pub created_at: Millis,
}

/// What the store knows about a presented play token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlayTokenGrant {
    pub assignment_id: Uuid,
    pub player_id: Uuid,
    pub gm_id: Uuid,
    pub expires_at: Millis,
    pub revoked: bool,
    pub player_active: bool,
    pub gm_active: bool,
    /// The assignment's language (the door's instructions are written in it).
    pub language: Language,
    /// The scenario and source version the assignment plays (immutable).
    pub scenario_id: Uuid,
    pub source_version: i64,
    /// The assignment's current version, read in the same statement: every write of play
    /// bumps it, so it keys what a read renders.
    pub version: i64,
}
