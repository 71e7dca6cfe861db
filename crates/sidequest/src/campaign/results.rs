//! What the campaign service answers: typed results, one per kind of answer, holding the
//! domain records the caller may see. Their JSON is [`crate::render`]'s.

use uuid::Uuid;

use crate::domain::wiki::WikiPage;
use crate::domain::{Assignment, Consequence, JournalEvent, Millis, Node, Scenario};

/// The caller's relation to an assignment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// The assignment's GM: sees GM notes, GM-private journal text and review events.
    Gm,
    /// The assignment's player.
    Player,
}

/// An assignment as one caller sees it: the role decides whether its GM notes show.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AssignmentView {
    pub assignment: Assignment,
    pub role: Role,
    /// The scenario's title where the answer names it (`None` in lists).
    pub scenario_title: Option<String>,
}

/// `CampaignService::create`'s answer: the assignment, and whether this call created it
/// (`false` for an identical retry).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CreatedAssignment {
    pub view: AssignmentView,
    pub created: bool,
}

/// `CampaignService::get`'s answer: one assignment and how many consequences await review.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AssignmentDetail {
    pub view: AssignmentView,
    pub pending_consequences: i64,
}

/// `CampaignService::overview`'s answer: the detail and every consequence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AssignmentOverview {
    pub detail: AssignmentDetail,
    pub consequences: Vec<Consequence>,
}

/// A new play token; the plaintext is shown this once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlayTokenIssued {
    pub assignment_id: Uuid,
    pub token: String,
    pub expires_at: Millis,
}

/// A play-token revocation: how many live tokens it ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlayTokenRevoked {
    pub assignment_id: Uuid,
    pub revoked: u64,
}

/// One page of an assignment's journal, for the caller's role: a player's page holds only
/// player-visible events and shows neither GM-private text nor operation ids.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AssignmentJournal {
    pub role: Role,
    pub total: i64,
    pub offset: i64,
    pub limit: i64,
    pub entries: Vec<JournalEvent>,
}

/// A scenario with its draft nodes and its latest published version's nodes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScenarioDetail {
    pub scenario: Scenario,
    pub draft_nodes: Vec<Node>,
    /// Empty before the first publish.
    pub published_nodes: Vec<Node>,
}

/// A deleted draft node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeDeleted {
    pub node_id: String,
}

/// The source version a publish froze.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Published {
    pub scenario_id: Uuid,
    pub source_version: i64,
}

/// One of the GM's assignments with the consequences awaiting review (never empty).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PendingReview {
    pub assignment: Assignment,
    pub pending: Vec<Consequence>,
}

/// A new author token; the plaintext is shown this once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuthorTokenIssued {
    pub id: Uuid,
    pub name: String,
    pub token: String,
    pub expires_at: Millis,
}

/// A revoked author token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuthorTokenRevoked {
    pub id: Uuid,
}

/// A wiki page matching a search, with an excerpt around the first match.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WikiHit {
    pub page: WikiPage,
    pub excerpt: String,
}
