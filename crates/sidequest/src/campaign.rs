//! The campaign service: what GMs and players do outside the player door — assignments,
//! tokens, journal, review, report, scenario authoring, author tokens and the wiki — with the
//! access rules in one place. The REST API and the author door `/mcp` both call it. It answers
//! typed results; [`crate::render`] turns them into the JSON both doors show.

use std::sync::Arc;

use uuid::Uuid;

mod results;

pub use results::{
    AssignmentDetail, AssignmentJournal, AssignmentOverview, AssignmentView, AuthorTokenIssued,
    AuthorTokenRevoked, CreatedAssignment, NodeDeleted, PendingReview, PlayTokenIssued,
    PlayTokenRevoked, Published, Role, ScenarioDetail, WikiHit,
};

use crate::domain::assignment::CreateAssignment;
use crate::domain::fields::{FieldErrors, is_slug};
use crate::domain::play::DomainError;
use crate::domain::report::{self, Reader, ReportInput};
use crate::domain::review::{self, ReviewArgs};
use crate::domain::wiki::{self, WikiPage, WikiWrite, WikiWriteOutcome};
use crate::domain::{
    Assignment, Consequence, ConsequenceStatus, JournalEvent, Language, Millis, Node, Scenario,
    User, token,
};
use crate::service::{PlayService, ServiceError};
use crate::store::{Applied, AuthorTokenInfo, CreateOutcome, Load, NewAuthorToken, StoreError};

/// Node kinds an author may create.
pub const NODE_KINDS: [&str; 5] = ["scene", "npc", "item", "location", "note"];
/// Node text bounds, in characters.
pub const NODE_TEXT_CHARS: usize = 20_000;
pub const TITLE_CHARS: usize = 200;
/// The most recent accessible assignments a list returns.
pub const LIST_LIMIT: i64 = 200;

/// A failure of the campaign service, classified for REST (status) and MCP (text).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CampaignError {
    /// Unknown, or not visible to this user (never reveals existence).
    #[error("404: Not found")]
    NotFound,
    /// Visible but not allowed.
    #[error("403: {0}")]
    Forbidden(String),
    /// Invalid fields.
    #[error("422: Invalid fields: {0}")]
    Invalid(FieldErrors),
    #[error("409: {0}")]
    Conflict(String),
    /// A play-domain refusal (version conflict, decided consequence, …).
    #[error("{0}")]
    Domain(DomainError),
    #[error("unavailable: {0}")]
    Unavailable(String),
    #[error("internal: {0}")]
    Internal(String),
}

impl CampaignError {
    /// The HTTP status of this failure.
    pub fn status(&self) -> u16 {
        match self {
            CampaignError::NotFound => 404,
            CampaignError::Forbidden(_) => 403,
            CampaignError::Invalid(_) => 422,
            CampaignError::Conflict(_) => 409,
            CampaignError::Domain(d) => d.status(),
            CampaignError::Unavailable(_) => 503,
            CampaignError::Internal(_) => 500,
        }
    }
}

impl From<StoreError> for CampaignError {
    fn from(e: StoreError) -> Self {
        match e {
            StoreError::NotFound => CampaignError::NotFound,
            StoreError::Unavailable(m) => CampaignError::Unavailable(m),
            StoreError::Conflict(m) => CampaignError::Conflict(m),
            other => CampaignError::Internal(other.to_string()),
        }
    }
}

impl From<ServiceError> for CampaignError {
    fn from(e: ServiceError) -> Self {
        match e {
            ServiceError::Domain(DomainError::NotFound) => CampaignError::NotFound,
            ServiceError::Domain(d) => CampaignError::Domain(d),
            ServiceError::Unavailable(m) => CampaignError::Unavailable(m),
            ServiceError::Internal(m) => CampaignError::Internal(m),
        }
    }
}

impl From<DomainError> for CampaignError {
    fn from(e: DomainError) -> Self {
        match e {
            DomainError::NotFound => CampaignError::NotFound,
            d => CampaignError::Domain(d),
        }
    }
}

/// A node as an author writes it.
#[derive(Debug, Clone, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NodeInput {
    pub kind: String,
    pub title: String,
    #[serde(default)]
    pub published: bool,
    #[serde(default)]
    pub public_text: String,
    #[serde(default)]
    pub gm_text: String,
}

/// The campaign service.
pub struct CampaignService {
    pub play: Arc<PlayService>,
}

impl CampaignService {
    pub fn new(play: Arc<PlayService>) -> Self {
        Self { play }
    }

    fn now(&self) -> i64 {
        self.play.clock.now_millis()
    }

    /// The assignment and the actor's role on it; anyone else gets `NotFound`.
    pub async fn visible(
        &self,
        actor: &User,
        id: Uuid,
    ) -> Result<(Assignment, Role), CampaignError> {
        let a = self
            .play
            .store
            .assignment(id)
            .await?
            .ok_or(CampaignError::NotFound)?;
        if a.gm_id == actor.id {
            Ok((a, Role::Gm))
        } else if a.player_id == actor.id {
            Ok((a, Role::Player))
        } else {
            Err(CampaignError::NotFound)
        }
    }

    /// The assignment if the actor is its GM; its player gets 403, anyone else 404.
    async fn as_gm(&self, actor: &User, id: Uuid) -> Result<Assignment, CampaignError> {
        match self.visible(actor, id).await? {
            (a, Role::Gm) => Ok(a),
            (_, Role::Player) => Err(CampaignError::Forbidden(
                "only the assignment's GM may do this".into(),
            )),
        }
    }

    /// Up to 200 most recent assignments the actor is GM or player of.
    pub async fn list(&self, actor: &User) -> Result<Vec<AssignmentView>, CampaignError> {
        let items = self.play.store.assignments_of(actor.id, LIST_LIMIT).await?;
        Ok(items
            .into_iter()
            .map(|assignment| {
                let role = if assignment.gm_id == actor.id {
                    Role::Gm
                } else {
                    Role::Player
                };
                AssignmentView {
                    assignment,
                    role,
                    scenario_title: None,
                }
            })
            .collect())
    }

    /// Creates an assignment (only the scenario's owner); identical retries return it again.
    pub async fn create(
        &self,
        actor: &User,
        input: &CreateAssignment,
    ) -> Result<CreatedAssignment, CampaignError> {
        if !actor.is_gm {
            return Err(CampaignError::Forbidden(
                "only game masters create assignments".into(),
            ));
        }
        let texts = input.check_texts();
        let scenario = match self.play.store.scenario(input.scenario_id).await? {
            Some(s) if s.owner_id == actor.id => s,
            _ => {
                let mut e = texts;
                e.add("scenario_id", "no such scenario of yours");
                return Err(CampaignError::Invalid(e));
            }
        };
        let nodes = if (1..=scenario.version).contains(&input.source_version) {
            self.play
                .store
                .nodes(scenario.id, input.source_version)
                .await?
        } else {
            Vec::new()
        };
        let player = self
            .play
            .store
            .user_by_username(&input.player_username)
            .await?;
        let assignment = input
            .build(actor, &scenario, &nodes, player.as_ref(), self.now())
            .map_err(CampaignError::Invalid)?;
        let (assignment, created) = match self
            .play
            .store
            .create_assignment_once(&assignment, &input.creation_hash())
            .await?
        {
            CreateOutcome::Created => (assignment, true),
            CreateOutcome::Existing(existing) => (*existing, false),
            CreateOutcome::Conflict => {
                return Err(CampaignError::Conflict(format!(
                    "Assignment {} already exists with different content; use a new id to create another.",
                    input.id
                )));
            }
        };
        Ok(CreatedAssignment {
            view: AssignmentView {
                assignment,
                role: Role::Gm,
                scenario_title: Some(scenario.title),
            },
            created,
        })
    }

    /// One assignment; GM notes only for its GM.
    pub async fn get(&self, actor: &User, id: Uuid) -> Result<AssignmentDetail, CampaignError> {
        let (a, role) = self.visible(actor, id).await?;
        let title = self
            .play
            .store
            .scenario(a.scenario_id)
            .await?
            .map(|s| s.title);
        let pending_consequences = self.play.store.pending_count(a.id).await?;
        Ok(AssignmentDetail {
            view: AssignmentView {
                assignment: a,
                role,
                scenario_title: title,
            },
            pending_consequences,
        })
    }

    /// One assignment with its pending count and every consequence (for either role).
    pub async fn overview(
        &self,
        actor: &User,
        id: Uuid,
    ) -> Result<AssignmentOverview, CampaignError> {
        let detail = self.get(actor, id).await?;
        let consequences = self.consequences(actor, id).await?;
        Ok(AssignmentOverview {
            detail,
            consequences,
        })
    }

    /// Generates a play token (the GM or the player); the plaintext is returned once.
    pub async fn generate_token(
        &self,
        actor: &User,
        id: Uuid,
    ) -> Result<PlayTokenIssued, CampaignError> {
        let (a, _) = self.visible(actor, id).await?;
        let (token, expires_at) = self.play.issue_token(a.id).await?;
        Ok(PlayTokenIssued {
            assignment_id: a.id,
            token,
            expires_at,
        })
    }

    /// Revokes the assignment's play token (the GM or the player).
    pub async fn revoke_token(
        &self,
        actor: &User,
        id: Uuid,
    ) -> Result<PlayTokenRevoked, CampaignError> {
        let (a, _) = self.visible(actor, id).await?;
        let revoked = self.play.revoke_token(a.id).await?;
        Ok(PlayTokenRevoked {
            assignment_id: a.id,
            revoked,
        })
    }

    /// A journal page, filtered by role (the GM also sees review events and GM-private text).
    pub async fn journal(
        &self,
        actor: &User,
        id: Uuid,
        offset: i64,
        limit: i64,
    ) -> Result<AssignmentJournal, CampaignError> {
        let (a, role) = self.visible(actor, id).await?;
        let (total, entries) = self
            .play
            .store
            .journal_page(a.id, role == Role::Player, offset, limit)
            .await?;
        Ok(AssignmentJournal {
            role,
            total,
            offset,
            limit,
            entries,
        })
    }

    /// Every journal event of an assignment for the actor's role, ascending by version (the
    /// web page's timeline; the player's holds turns and the finish only).
    pub async fn journal_all(
        &self,
        actor: &User,
        id: Uuid,
    ) -> Result<Vec<JournalEvent>, CampaignError> {
        let (a, role) = self.visible(actor, id).await?;
        Ok(self.play.store.journal(a.id, role == Role::Player).await?)
    }

    /// When the assignment's live play token expires (the GM or the player); `None` when it
    /// has none (never issued, revoked or expired).
    pub async fn token_expiry(
        &self,
        actor: &User,
        id: Uuid,
    ) -> Result<Option<Millis>, CampaignError> {
        let (a, _) = self.visible(actor, id).await?;
        Ok(self
            .play
            .store
            .live_play_token_expiry(a.id, self.now())
            .await?)
    }

    /// Every consequence of an assignment (for either role).
    pub async fn consequences(
        &self,
        actor: &User,
        id: Uuid,
    ) -> Result<Vec<Consequence>, CampaignError> {
        let (a, _) = self.visible(actor, id).await?;
        Ok(self.play.store.consequences(a.id).await?)
    }

    /// The GM's review: one versioned, retry-safe, atomic write.
    pub async fn review(
        &self,
        actor: &User,
        id: Uuid,
        args: ReviewArgs,
    ) -> Result<Applied, CampaignError> {
        let a = self.as_gm(actor, id).await?;
        args.validate()?;
        let hash = args.normalized_hash();
        let ids = args.ids();
        let now = self.now();
        Ok(self
            .play
            .store
            .apply(
                a.id,
                args.operation_id,
                Load::consequences(&ids),
                Box::new(move |state| review::decide_review(state, &args, &hash, now)),
            )
            .await
            .map_err(ServiceError::from)?)
    }

    /// The Markdown report, GM-only material filtered by role.
    pub async fn report(
        &self,
        actor: &User,
        id: Uuid,
        language: Language,
    ) -> Result<String, CampaignError> {
        let (a, role) = self.visible(actor, id).await?;
        let store = &self.play.store;
        let scenario = store.scenario(a.scenario_id).await?;
        let player = store.user_by_id(a.player_id).await?;
        let gm = store.user_by_id(a.gm_id).await?;
        let events = store.journal(a.id, role == Role::Player).await?;
        let consequences = store.consequences(a.id).await?;
        let input = ReportInput {
            assignment: &a,
            scenario_title: scenario.as_ref().map_or("", |s| s.title.as_str()),
            player_name: player.as_ref().map_or("", |u| u.display_name.as_str()),
            gm_name: gm.as_ref().map_or("", |u| u.display_name.as_str()),
            events: &events,
            consequences: &consequences,
        };
        Ok(report::render(
            &input,
            language,
            if role == Role::Gm {
                Reader::Gm
            } else {
                Reader::Player
            },
        ))
    }

    // ---- scenarios ----

    fn require_gm(actor: &User) -> Result<(), CampaignError> {
        if actor.is_gm {
            Ok(())
        } else {
            Err(CampaignError::Forbidden(
                "only game masters author scenarios".into(),
            ))
        }
    }

    async fn own_scenario(&self, actor: &User, id: Uuid) -> Result<Scenario, CampaignError> {
        Self::require_gm(actor)?;
        match self.play.store.scenario(id).await? {
            Some(s) if s.owner_id == actor.id => Ok(s),
            _ => Err(CampaignError::NotFound),
        }
    }

    /// The actor's scenarios.
    pub async fn scenarios(&self, actor: &User) -> Result<Vec<Scenario>, CampaignError> {
        Self::require_gm(actor)?;
        Ok(self.play.store.scenarios_of(actor.id).await?)
    }

    /// Creates an empty scenario (no published version yet).
    pub async fn create_scenario(
        &self,
        actor: &User,
        title: &str,
    ) -> Result<Scenario, CampaignError> {
        Self::require_gm(actor)?;
        let mut e = FieldErrors::new();
        e.text("title", title, 1, TITLE_CHARS);
        e.into_result().map_err(CampaignError::Invalid)?;
        Ok(self
            .play
            .store
            .create_draft_scenario(self.play.random.uuid(), actor.id, title, self.now())
            .await?)
    }

    /// A scenario with its draft nodes and, if published, the latest version's nodes.
    pub async fn scenario(&self, actor: &User, id: Uuid) -> Result<ScenarioDetail, CampaignError> {
        let s = self.own_scenario(actor, id).await?;
        let draft_nodes = self.play.store.draft_nodes(s.id).await?;
        let published_nodes = if s.version > 0 {
            self.play.store.nodes(s.id, s.version).await?
        } else {
            Vec::new()
        };
        Ok(ScenarioDetail {
            scenario: s,
            draft_nodes,
            published_nodes,
        })
    }

    /// The nodes of one published source version of the actor's scenario (earlier versions
    /// stay readable; 404 for a version never published).
    pub async fn scenario_version(
        &self,
        actor: &User,
        id: Uuid,
        version: i64,
    ) -> Result<(Scenario, Vec<Node>), CampaignError> {
        let s = self.own_scenario(actor, id).await?;
        if !(1..=s.version).contains(&version) {
            return Err(CampaignError::NotFound);
        }
        let nodes = self.play.store.nodes(s.id, version).await?;
        Ok((s, nodes))
    }

    /// Creates or replaces a draft node.
    pub async fn put_node(
        &self,
        actor: &User,
        scenario_id: Uuid,
        node_id: &str,
        input: &NodeInput,
    ) -> Result<Node, CampaignError> {
        let s = self.own_scenario(actor, scenario_id).await?;
        let mut e = FieldErrors::new();
        if !is_slug(node_id) {
            e.add(
                "id",
                "must be 1–64 characters of a-z, 0-9, '_' or '-', starting with a letter or digit",
            );
        }
        if !NODE_KINDS.contains(&input.kind.as_str()) {
            e.add("kind", format!("must be one of {}", NODE_KINDS.join(", ")));
        }
        e.text("title", &input.title, 1, TITLE_CHARS);
        e.text("public_text", &input.public_text, 0, NODE_TEXT_CHARS);
        e.text("gm_text", &input.gm_text, 0, NODE_TEXT_CHARS);
        e.into_result().map_err(CampaignError::Invalid)?;
        let node = Node {
            id: node_id.to_owned(),
            kind: input.kind.clone(),
            title: input.title.clone(),
            published: input.published,
            public_text: input.public_text.clone(),
            gm_text: input.gm_text.clone(),
        };
        self.play.store.put_draft_node(s.id, &node).await?;
        Ok(node)
    }

    /// Deletes a draft node.
    pub async fn delete_node(
        &self,
        actor: &User,
        scenario_id: Uuid,
        node_id: &str,
    ) -> Result<NodeDeleted, CampaignError> {
        let s = self.own_scenario(actor, scenario_id).await?;
        if self.play.store.delete_draft_node(s.id, node_id).await? {
            Ok(NodeDeleted {
                node_id: node_id.to_owned(),
            })
        } else {
            Err(CampaignError::NotFound)
        }
    }

    /// Freezes the draft as a new source version.
    pub async fn publish(
        &self,
        actor: &User,
        scenario_id: Uuid,
    ) -> Result<Published, CampaignError> {
        let s = self.own_scenario(actor, scenario_id).await?;
        if self.play.store.draft_nodes(s.id).await?.is_empty() {
            let mut e = FieldErrors::new();
            e.add("nodes", "a scenario needs at least one node to publish");
            return Err(CampaignError::Invalid(e));
        }
        let source_version = self.play.store.publish_scenario(s.id).await?;
        Ok(Published {
            scenario_id: s.id,
            source_version,
        })
    }

    /// Pending consequences across the actor's assignments (for the author door).
    pub async fn pending_reviews(&self, actor: &User) -> Result<Vec<PendingReview>, CampaignError> {
        let mut out = Vec::new();
        for a in self.play.store.assignments_of(actor.id, LIST_LIMIT).await? {
            if a.gm_id != actor.id {
                continue;
            }
            let pending: Vec<Consequence> = self
                .play
                .store
                .consequences(a.id)
                .await?
                .into_iter()
                .filter(|c| c.status == ConsequenceStatus::Pending)
                .collect();
            if !pending.is_empty() {
                out.push(PendingReview {
                    assignment: a,
                    pending,
                });
            }
        }
        Ok(out)
    }

    // ---- author tokens ----

    /// Generates an author personal token for the actor; the plaintext is returned once.
    pub async fn create_author_token(
        &self,
        actor: &User,
        name: &str,
    ) -> Result<AuthorTokenIssued, CampaignError> {
        Self::require_gm(actor)?;
        let mut e = FieldErrors::new();
        e.text("name", name, 1, 100);
        e.into_result().map_err(CampaignError::Invalid)?;
        let mut raw = [0u8; 20];
        self.play.random.fill(&mut raw);
        let token = token::format_author_token(raw);
        let now = self.now();
        let id = self.play.random.uuid();
        let expires_at = now + token::AUTHOR_TOKEN_TTL_MS;
        self.play
            .store
            .create_author_token(&NewAuthorToken {
                id,
                user_id: actor.id,
                name: name.to_owned(),
                digest: token::digest(&token),
                created_at: now,
                expires_at,
            })
            .await?;
        Ok(AuthorTokenIssued {
            id,
            name: name.to_owned(),
            token,
            expires_at,
        })
    }

    /// The actor's author tokens (never the tokens themselves).
    pub async fn author_tokens(&self, actor: &User) -> Result<Vec<AuthorTokenInfo>, CampaignError> {
        Ok(self.play.store.author_tokens(actor.id).await?)
    }

    /// Revokes one of the actor's author tokens.
    pub async fn revoke_author_token(
        &self,
        actor: &User,
        id: Uuid,
    ) -> Result<AuthorTokenRevoked, CampaignError> {
        if self
            .play
            .store
            .revoke_author_token(actor.id, id, self.now())
            .await?
        {
            Ok(AuthorTokenRevoked { id })
        } else {
            Err(CampaignError::NotFound)
        }
    }

    // ---- wiki ----

    /// The actor's wiki pages.
    pub async fn wiki_list(&self, actor: &User) -> Result<Vec<WikiPage>, CampaignError> {
        Ok(self.play.store.wiki_pages(actor.id).await?)
    }

    /// The current version of one of the actor's wiki pages.
    pub async fn wiki_read(&self, actor: &User, slug: &str) -> Result<WikiPage, CampaignError> {
        self.play
            .store
            .wiki_page(actor.id, slug)
            .await?
            .ok_or(CampaignError::NotFound)
    }

    /// Writes a wiki page if it is still at the version the writer read.
    pub async fn wiki_write(
        &self,
        actor: &User,
        write: &WikiWrite,
    ) -> Result<WikiPage, CampaignError> {
        write.validate().map_err(CampaignError::Invalid)?;
        match self
            .play
            .store
            .write_wiki_page(actor.id, write, self.now())
            .await?
        {
            WikiWriteOutcome::Written(p) => Ok(p),
            WikiWriteOutcome::Conflict { current } => Err(CampaignError::Conflict(format!(
                "Wiki page {} is at version {current}, not {}. Read it again and merge.",
                write.slug, write.expected_version
            ))),
        }
    }

    /// Searches the actor's wiki pages.
    pub async fn wiki_search(
        &self,
        actor: &User,
        query: &str,
    ) -> Result<Vec<WikiHit>, CampaignError> {
        let mut e = FieldErrors::new();
        e.text("query", query, 1, wiki::QUERY_CHARS);
        e.into_result().map_err(CampaignError::Invalid)?;
        let pages = self.play.store.wiki_pages(actor.id).await?;
        Ok(wiki::search(&pages, query)
            .into_iter()
            .map(|(page, excerpt)| WikiHit { page, excerpt })
            .collect())
    }

    /// Every version of one of the actor's wiki pages, newest first.
    pub async fn wiki_history(
        &self,
        actor: &User,
        slug: &str,
    ) -> Result<Vec<WikiPage>, CampaignError> {
        let h = self.play.store.wiki_history(actor.id, slug).await?;
        if h.is_empty() {
            Err(CampaignError::NotFound)
        } else {
            Ok(h)
        }
    }

    /// One version of one of the actor's wiki pages (one its history lists).
    pub async fn wiki_read_version(
        &self,
        actor: &User,
        slug: &str,
        version: i64,
    ) -> Result<WikiPage, CampaignError> {
        self.wiki_history(actor, slug)
            .await?
            .into_iter()
            .find(|p| p.version == version)
            .ok_or(CampaignError::NotFound)
    }
}
