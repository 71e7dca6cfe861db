//! The player door's cache of rendered reads (`get_play_context`, `read_play_journal`,
//! `search_play_memory` per assignment version): everything that changes what a read answers
//! changes its key, what only changes who may read is refused by the token check before the
//! cache, what changes neither leaves the answer as it was, and a write on one instance is read
//! on the other at once.
//!
//! Each case plants a marker answer under the current key of every read, then makes the change:
//! a read that still answers the marker was served from an unchanged key. Beside the cached
//! server runs one with the cache off on the same database, the reference of what each read
//! answers.

use std::sync::Arc;

use mcp_door::PreparedResult;
use serde_json::{Value, json};
use sidequest::app::ServeConfig;
use sidequest::campaign::{CampaignService, NodeInput};
use sidequest::demo::DemoCreated;
use sidequest::domain::review::{ReviewArgs, ReviewDecision, Verdict};
use sidequest::domain::wiki::WikiWrite;
use sidequest::mcp::answers::{Read, ReadKey};
use uuid::Uuid;

use crate::support::{self, Server};

/// The three reads, with the arguments the markers are planted for.
fn reads() -> [(&'static str, Value, Read); 3] {
    [
        ("get_play_context", json!({}), Read::Context),
        (
            "read_play_journal",
            json!({"offset": 0, "limit": 20}),
            Read::Journal {
                offset: 0,
                limit: 20,
            },
        ),
        (
            "search_play_memory",
            json!({"query": "memory"}),
            Read::Search("memory".into()),
        ),
    ]
}

struct Pair {
    cached: Server,
    plain: Server,
    world: DemoCreated,
    token: String,
}

impl Pair {
    async fn new(url: &str) -> Self {
        let cached = support::spawn(url).await;
        let world = support::world(&cached, 1).await;
        let plain = support::spawn_with(
            url,
            ServeConfig {
                server: mcp_door::ServerConfig {
                    limits: support::generous(),
                    ..ServeConfig::default().server
                },
                read_cache_bytes: 0,
                ..ServeConfig::default()
            },
            2,
        )
        .await;
        let token = world.assignments[0].1.clone();
        Self {
            cached,
            plain,
            world,
            token,
        }
    }

    fn assignment(&self) -> Uuid {
        self.world.assignments[0].0.id
    }

    async fn version(&self) -> i64 {
        let ctx = self
            .plain
            .client(&self.token)
            .tool("get_play_context", json!({}))
            .await
            .json();
        ctx["version"].as_i64().unwrap()
    }

    /// Plants a marker answer under the current key of every read.
    async fn plant(&self) {
        let version = self.version().await;
        for (tool, _, read) in reads() {
            let marker = PreparedResult::new(&json!({"marker": tool})).unwrap();
            self.cached.reads.insert(
                ReadKey {
                    assignment: self.assignment(),
                    version,
                    read,
                },
                Arc::new(marker),
            );
        }
    }

    /// Every read's answer (its JSON) from `server` with `token`.
    async fn answers(&self, server: &Server, token: &str) -> Vec<Value> {
        let client = server.client(token);
        let mut out = Vec::new();
        for (tool, args, _) in reads() {
            let reply = client.tool(tool, args).await;
            assert_eq!(reply.status, 200, "{tool}: {}", reply.body);
            out.push(reply.json());
        }
        out
    }

    /// The cached server answers every read as the uncached one does, and no marker.
    async fn agree(&self) -> Vec<Value> {
        let cached = self.answers(&self.cached, &self.token).await;
        for (answer, (tool, ..)) in cached.iter().zip(reads()) {
            assert!(answer.get("marker").is_none(), "{tool} kept its old key");
        }
        assert_eq!(cached, self.answers(&self.plain, &self.token).await);
        // and again, now from the cache
        assert_eq!(cached, self.answers(&self.cached, &self.token).await);
        cached
    }

    /// The cached server still answers the markers: the keys did not change.
    async fn markers_served(&self, token: &str) {
        let answers = self.answers(&self.cached, token).await;
        for (answer, (tool, ..)) in answers.iter().zip(reads()) {
            assert_eq!(answer, &json!({"marker": tool}), "{tool}");
        }
    }

    async fn status_of_every_read(&self, token: &str) -> Vec<u16> {
        let client = self.cached.client(token);
        let mut out = Vec::new();
        for (tool, args, _) in reads() {
            out.push(client.tool(tool, args).await.status);
        }
        out
    }

    fn campaign(&self) -> CampaignService {
        CampaignService::new(Arc::clone(&self.cached.service))
    }
}

/// A turn at `version` whose texts all carry `text`, with one consequence.
pub(crate) fn turn(version: i64, text: &str) -> Value {
    json!({"operation_id": Uuid::new_v4().to_string(), "expected_version": version,
        "player_action": format!("act {text}"), "narration": format!("narrate {text}"),
        "memory_markdown": format!("memory {text}"), "current_scene": "harbor",
        "consequences": [{"category": "discovery", "description": format!("found {text}")}]})
}

async fn commit(p: &Pair, text: &str) -> Value {
    let version = p.version().await;
    let r = p
        .cached
        .client(&p.token)
        .tool("commit_play_turn", turn(version, text))
        .await;
    assert!(!r.is_error(), "{}", r.body);
    r.json()
}

async fn a_turn_changes_the_key(url: &str) {
    let p = Pair::new(url).await;
    let before = p.agree().await;
    p.plant().await;
    p.markers_served(&p.token).await;
    commit(&p, "one").await;
    let after = p.agree().await;
    assert_ne!(before, after);
    assert_eq!(after[0]["memory_markdown"], "memory one");
    assert_eq!(after[1]["total"], 1);
    assert_eq!(after[2]["memory_matched"], true);
}

async fn a_finish_changes_the_key(url: &str) {
    let p = Pair::new(url).await;
    commit(&p, "one").await;
    p.agree().await;
    p.plant().await;
    let version = p.version().await;
    let r = p
        .cached
        .client(&p.token)
        .tool(
            "finish_play_session",
            json!({"operation_id": Uuid::new_v4().to_string(), "expected_version": version,
                "summary": "the end"}),
        )
        .await;
    assert!(!r.is_error(), "{}", r.body);
    let after = p.agree().await;
    assert_eq!(after[0]["assignment"]["status"], "completed");
    assert_eq!(after[0]["recap"], "the end");
}

async fn a_review_changes_the_key(url: &str) {
    let p = Pair::new(url).await;
    let receipt = commit(&p, "one").await;
    p.agree().await;
    p.plant().await;
    let id: Uuid = receipt["consequences"][0]["id"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    p.campaign()
        .review(
            &p.world.gm,
            p.assignment(),
            ReviewArgs {
                operation_id: Uuid::new_v4(),
                expected_version: p.version().await,
                decisions: vec![ReviewDecision {
                    id,
                    decision: Verdict::Approved,
                    note: Some("yes".into()),
                }],
            },
        )
        .await
        .unwrap();
    let after = p.agree().await;
    assert_eq!(after[0]["consequences"][0]["status"], "approved");
    assert_eq!(after[0]["consequences"][0]["gm_note"], "yes");
}

async fn a_rotated_token_reads_the_same_key(url: &str) {
    let p = Pair::new(url).await;
    commit(&p, "one").await;
    let before = p.agree().await;
    let version = p.version().await;
    p.plant().await;
    let (new_token, _) = p.cached.service.issue_token(p.assignment()).await.unwrap();
    // the old token is refused on its next request, cached answer or not
    assert_eq!(p.status_of_every_read(&p.token).await, [401, 401, 401]);
    // the narrative version did not move, so the new token reads the same keys
    p.markers_served(&new_token).await;
    let fresh = Pair {
        token: new_token,
        ..p
    };
    assert_eq!(fresh.version().await, version);
    assert_eq!(fresh.answers(&fresh.plain, &fresh.token).await, before);
}

async fn revocation_and_deactivation_are_refused_before_the_cache(url: &str) {
    let p = Pair::new(url).await;
    commit(&p, "one").await;
    p.agree().await;
    p.plant().await;
    let store = &p.cached.store;
    for user in [p.world.player.id, p.world.gm.id] {
        store.set_user_active(user, false).await.unwrap();
        assert_eq!(p.status_of_every_read(&p.token).await, [401, 401, 401]);
        store.set_user_active(user, true).await.unwrap();
        // reactivated: the same keys again, nothing was written
        p.markers_served(&p.token).await;
    }
    p.cached.service.revoke_token(p.assignment()).await.unwrap();
    assert_eq!(p.status_of_every_read(&p.token).await, [401, 401, 401]);
}

async fn authoring_and_the_wiki_change_no_answer(url: &str) {
    let p = Pair::new(url).await;
    commit(&p, "one").await;
    let before = p.agree().await;
    p.plant().await;
    let campaign = p.campaign();
    let gm = &p.world.gm;
    // a draft edit of a published node, a new node, a new published version of the scenario:
    // the assignment keeps playing its source version
    for node in ["harbor", "new-place"] {
        campaign
            .put_node(
                gm,
                p.world.scenario_id,
                node,
                &NodeInput {
                    kind: "scene".into(),
                    title: "Edited".into(),
                    published: true,
                    public_text: "edited public text".into(),
                    gm_text: "edited secret".into(),
                },
            )
            .await
            .unwrap();
    }
    campaign.publish(gm, p.world.scenario_id).await.unwrap();
    campaign
        .wiki_write(
            gm,
            &WikiWrite {
                slug: "harbor".into(),
                title: "Harbor".into(),
                body: "memory of the harbor".into(),
                expected_version: 0,
            },
        )
        .await
        .unwrap();
    p.markers_served(&p.token).await;
    assert_eq!(p.answers(&p.plain, &p.token).await, before);
}

crate::on_both_backends!(
    a_turn_changes_the_key,
    a_finish_changes_the_key,
    a_review_changes_the_key,
    a_rotated_token_reads_the_same_key,
    revocation_and_deactivation_are_refused_before_the_cache,
    authoring_and_the_wiki_change_no_answer,
);

/// Two instances with their own caches on one PostgreSQL database: a write on one is what the
/// other's next read answers, because every read checks the version in the database.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_on_one_instance_is_the_next_read_on_the_other() {
    let Some((_dir, url)) = testkit::db::fresh_url(&testkit::db::Backend::Postgres).await else {
        eprintln!("skipped: TEST_DATABASE_URL not set");
        return;
    };
    let one = support::spawn(&url).await;
    let world = support::world(&one, 1).await;
    let two = support::spawn(&url).await;
    let token = &world.assignments[0].1;
    let (c1, c2) = (one.client(token), two.client(token));
    for n in 1..=3 {
        let read = c2.tool("get_play_context", json!({})).await.json();
        assert_eq!(read, c2.tool("get_play_context", json!({})).await.json());
        assert_eq!(read["version"], n);
        let r = c1
            .tool("commit_play_turn", turn(n, &format!("turn {n}")))
            .await;
        assert!(!r.is_error(), "{}", r.body);
        let next = c2.tool("get_play_context", json!({})).await.json();
        assert_eq!(next["version"], n + 1);
        assert_eq!(next["memory_markdown"], format!("memory turn {n}"));
        let journal = c2
            .tool("read_play_journal", json!({"offset": 0, "limit": 20}))
            .await
            .json();
        assert_eq!(journal["total"], n);
    }
}
