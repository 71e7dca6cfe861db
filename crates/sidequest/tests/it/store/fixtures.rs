//! Fixtures of the store suite: a fresh store, a world (GM, player, scenario, assignment),
//! turn/finish/review operations through `Store::apply`, and outcome matchers.

use serde_json::json;
use sidequest::domain::play::{self, DomainError, FinishArgs, ProposedConsequence, TurnArgs};
use sidequest::domain::{
    Assignment, Category, ConsequenceStatus, EventKind, JournalEvent, Language, Millis, Mode, Node,
    OperationKind, PlayStatus, Receipt, Scenario, User,
};
use sidequest::store::{
    self, Applied, ApplyError, Decided, Decision, Load, NewScenario, NewUser, SharedStore,
    WritePlan,
};
use uuid::Uuid;

pub const T0: Millis = 1_700_000_000_000;
pub const DAY: Millis = 24 * 60 * 60 * 1000;

/// Connects to `url` and migrates.
pub async fn open(url: &str) -> SharedStore {
    let store = store::connect(url, &mcp_door::DEFAULT_POOL)
        .await
        .expect("connect");
    store.migrate().await.expect("migrate");
    store
}

pub fn new_user(username: &str, is_gm: bool) -> NewUser {
    NewUser {
        id: Uuid::new_v4(),
        username: username.into(),
        display_name: format!("{username} Żółć"),
        password_hash: Some("$argon2id$v=19$m=19456,t=2,p=1$c2FsdA$aGFzaA".into()),
        is_gm,
        created_at: T0,
    }
}

pub fn node(id: &str, kind: &str, published: bool) -> Node {
    Node {
        id: id.into(),
        kind: kind.into(),
        title: format!("Title of {id}"),
        published,
        public_text: format!("What players know about {id}."),
        gm_text: format!("Secret of {id}."),
    }
}

/// Ids chosen so byte order (what both backends must use) differs from a locale's order.
pub fn scenario_nodes() -> Vec<Node> {
    vec![
        node("harbor", "scene", true),
        node("docks", "scene", true),
        node("cellar", "scene", false),
        node("Mira", "npc", true),
        node("Über", "note", true),
    ]
}

pub fn new_assignment(
    scenario: &Scenario,
    gm: &User,
    player: &User,
    auto_approve: bool,
) -> Assignment {
    Assignment {
        id: Uuid::new_v4(),
        scenario_id: scenario.id,
        source_version: scenario.version,
        gm_id: gm.id,
        player_id: player.id,
        mode: Mode::Downtime,
        language: Language::En,
        character: "Ysolde, a lamplighter".into(),
        brief: "Find out who rang the drowned bell.".into(),
        instructions: "Keep it quiet.".into(),
        boundaries: "No gore.".into(),
        return_condition: "Back before the festival.".into(),
        gm_notes: "The bell-ringer is Mira.".into(),
        published_node_ids: vec!["harbor".into(), "docks".into(), "Mira".into()],
        auto_approve,
        status: PlayStatus::Active,
        version: 1,
        memory: String::new(),
        current_scene: None,
        summary: None,
        created_at: T0,
        updated_at: T0,
    }
}

pub struct World {
    pub store: SharedStore,
    pub gm: User,
    pub player: User,
    pub scenario: Scenario,
    pub assignment: Assignment,
}

pub async fn world(store: SharedStore, auto_approve: bool) -> World {
    let gm = store.create_user(&new_user("gm", true)).await.unwrap();
    let player = store.create_user(&new_user("player", false)).await.unwrap();
    let scenario = store
        .create_scenario(&NewScenario {
            id: Uuid::new_v4(),
            owner_id: gm.id,
            title: "The Drowned Bell".into(),
            nodes: scenario_nodes(),
            created_at: T0,
        })
        .await
        .unwrap();
    let assignment = new_assignment(&scenario, &gm, &player, auto_approve);
    store.create_assignment(&assignment).await.unwrap();
    World {
        store,
        gm,
        player,
        scenario,
        assignment,
    }
}

impl World {
    pub async fn assignment_now(&self) -> Assignment {
        self.store
            .assignment(self.assignment.id)
            .await
            .unwrap()
            .unwrap()
    }

    pub async fn versions(&self, player_view: bool) -> Vec<i64> {
        let journal = self
            .store
            .journal(self.assignment.id, player_view)
            .await
            .unwrap();
        journal.iter().map(|e| e.version).collect()
    }
}

pub fn turn(expected_version: i64, consequences: usize) -> TurnArgs {
    TurnArgs {
        operation_id: Uuid::new_v4(),
        expected_version,
        player_action: format!("I search the harbor ({expected_version})."),
        narration: format!("Gulls scatter; the tide is out ({expected_version})."),
        memory_markdown: format!("- searched the harbor at v{expected_version}"),
        current_scene: "harbor".into(),
        consequences: (0..consequences)
            .map(|i| ProposedConsequence {
                category: Category::Discovery,
                description: format!("clue {i} at v{expected_version}"),
            })
            .collect(),
    }
}

pub async fn commit(
    store: &SharedStore,
    assignment_id: Uuid,
    args: &TurnArgs,
    now: Millis,
) -> Result<Applied, ApplyError> {
    let args = args.clone();
    let hash = args.normalized_hash();
    let ids: Vec<Uuid> = args.consequences.iter().map(|_| Uuid::new_v4()).collect();
    store
        .apply(
            assignment_id,
            args.operation_id,
            Load::NOTHING,
            Box::new(move |state| play::decide_turn(state, &args, &hash, true, &ids, now)),
        )
        .await
}

/// [`commit`] as the player door sends it: with the version its token check read, and every
/// assignment row the rule is shown pushed to `seen`.
pub async fn commit_checked(
    store: &SharedStore,
    assignment_id: Uuid,
    args: &TurnArgs,
    now: Millis,
    checked_version: i64,
    seen: &std::sync::Arc<std::sync::Mutex<Vec<Assignment>>>,
) -> Result<Applied, ApplyError> {
    let args = args.clone();
    let hash = args.normalized_hash();
    let ids: Vec<Uuid> = args.consequences.iter().map(|_| Uuid::new_v4()).collect();
    let seen = std::sync::Arc::clone(seen);
    store
        .apply_held(
            None,
            Some(checked_version),
            assignment_id,
            args.operation_id,
            Load::NOTHING,
            Box::new(move |state| {
                seen.lock().unwrap().push(state.assignment.clone());
                play::decide_turn(state, &args, &hash, true, &ids, now)
            }),
        )
        .await
}

pub async fn finish(
    store: &SharedStore,
    assignment_id: Uuid,
    args: &FinishArgs,
    now: Millis,
) -> Result<Applied, ApplyError> {
    let args = args.clone();
    let hash = args.normalized_hash();
    store
        .apply(
            assignment_id,
            args.operation_id,
            Load::PENDING,
            Box::new(move |state| play::decide_finish(state, &args, &hash, now)),
        )
        .await
}

/// A GM review written through a hand-made plan: one `Review` event, a decision on every
/// consequence the store showed it, and a receipt whose result lists the ids it was shown.
pub async fn review(
    store: &SharedStore,
    assignment_id: Uuid,
    ids: &[Uuid],
    status: ConsequenceStatus,
    note: &str,
    now: Millis,
) -> Result<Applied, ApplyError> {
    let operation_id = Uuid::new_v4();
    let note = note.to_owned();
    store
        .apply(
            assignment_id,
            operation_id,
            Load::consequences(ids),
            Box::new(move |state| {
                let a = state.assignment;
                let version = a.version + 1;
                let seen: Vec<String> = state
                    .consequences
                    .iter()
                    .map(|c| c.id.to_string())
                    .collect();
                Ok(Decision::Write(Box::new(WritePlan {
                    version,
                    status: a.status,
                    memory: a.memory.clone(),
                    current_scene: a.current_scene.clone(),
                    summary: a.summary.clone(),
                    updated_at: now,
                    events: vec![JournalEvent {
                        version,
                        kind: EventKind::Review,
                        operation_id: Some(operation_id),
                        player_action: None,
                        narration: None,
                        summary: None,
                        gm_private: Some(format!("reviewed {}", seen.len())),
                        scene: None,
                        created_at: now,
                    }],
                    consequences: Vec::new(),
                    decisions: state
                        .consequences
                        .iter()
                        .map(|c| Decided {
                            id: c.id,
                            status,
                            note: Some(note.clone()),
                            decided_at: now,
                        })
                        .collect(),
                    receipt: Receipt {
                        assignment_id: a.id,
                        operation_id,
                        kind: OperationKind::Review,
                        args_hash: "review".into(),
                        result: json!({ "seen": seen }),
                        version,
                        created_at: now,
                    },
                })))
            }),
        )
        .await
}

pub fn committed(applied: Result<Applied, ApplyError>) -> Receipt {
    match applied {
        Ok(Applied::Committed(receipt)) => receipt,
        other => panic!("expected a commit, got {other:?}"),
    }
}

pub fn replayed(applied: Result<Applied, ApplyError>) -> Receipt {
    match applied {
        Ok(Applied::Replayed(receipt)) => receipt,
        other => panic!("expected a replay, got {other:?}"),
    }
}

/// The receipts of a burst's tasks, committed and replayed; any other outcome fails the test.
pub async fn committed_and_replayed(
    mut tasks: tokio::task::JoinSet<Result<Applied, ApplyError>>,
) -> (Vec<Receipt>, Vec<Receipt>) {
    let (mut committed, mut replayed) = (Vec::new(), Vec::new());
    while let Some(joined) = tasks.join_next().await {
        match joined.unwrap() {
            Ok(Applied::Committed(receipt)) => committed.push(receipt),
            Ok(Applied::Replayed(receipt)) => replayed.push(receipt),
            other => panic!("unexpected outcome: {other:?}"),
        }
    }
    (committed, replayed)
}

pub fn refused(applied: Result<Applied, ApplyError>) -> DomainError {
    match applied {
        Err(ApplyError::Domain(err)) => err,
        other => panic!("expected a domain refusal, got {other:?}"),
    }
}
