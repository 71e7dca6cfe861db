//! The scenarios area: a scenario created with its first version, looked up by id or title,
//! the nodes of a version, and authoring (drafts, draft nodes, publishing the next version) —
//! the trait, its records and its SQL. The assignments of a scenario are the assignments area's.

use async_trait::async_trait;
use sqlkit::{Cols, Row, Runner, sql};
use uuid::Uuid;

use super::Held;
use super::sql::{SqlStore, StoreError};
use crate::domain::{Millis, Node, Scenario};

/// A scenario to create, with the nodes of its first published source version (1).
#[derive(Debug, Clone)]
pub struct NewScenario {
    pub id: Uuid,
    pub owner_id: Uuid,
    pub title: String,
    pub nodes: Vec<Node>,
    pub created_at: Millis,
}

/// Scenarios, their published versions and their drafts.
#[async_trait]
pub trait Scenarios: Send + Sync {
    /// Creates a scenario with its nodes frozen as source version 1, and the same nodes as its
    /// draft (one transaction).
    async fn create_scenario(&self, scenario: &NewScenario) -> Result<Scenario, StoreError>;
    async fn scenario(&self, id: Uuid) -> Result<Option<Scenario>, StoreError>;
    /// The owner's scenario with this exact title, if any (oldest first).
    async fn scenario_by_title(
        &self,
        owner_id: Uuid,
        title: &str,
    ) -> Result<Option<Scenario>, StoreError>;
    /// The nodes of one source version, ordered by id.
    async fn nodes(&self, scenario_id: Uuid, version: i64) -> Result<Vec<Node>, StoreError>;
    /// [`Scenarios::nodes`] on a connection the request holds.
    async fn nodes_held(
        &self,
        held: &mut Held,
        scenario_id: Uuid,
        version: i64,
    ) -> Result<Vec<Node>, StoreError>;

    /// The owner's scenarios, oldest first.
    async fn scenarios_of(&self, owner_id: Uuid) -> Result<Vec<Scenario>, StoreError>;
    /// Creates a scenario with no published version yet (version 0) and no nodes.
    async fn create_draft_scenario(
        &self,
        id: Uuid,
        owner_id: Uuid,
        title: &str,
        now: Millis,
    ) -> Result<Scenario, StoreError>;
    /// The editable (draft) nodes, ordered by id. `create_scenario` seeds them with its nodes.
    async fn draft_nodes(&self, scenario_id: Uuid) -> Result<Vec<Node>, StoreError>;
    /// Inserts or replaces one draft node; an unknown scenario is `NotFound`.
    async fn put_draft_node(&self, scenario_id: Uuid, node: &Node) -> Result<(), StoreError>;
    /// Deletes one draft node; whether it existed.
    async fn delete_draft_node(&self, scenario_id: Uuid, node_id: &str)
    -> Result<bool, StoreError>;
    /// Freezes the draft nodes as the next source version (one transaction); returns it. An
    /// unknown scenario is `NotFound`.
    async fn publish_scenario(&self, scenario_id: Uuid) -> Result<i64, StoreError>;
}

const SCENARIO_COLUMNS: &str = "id, owner_id, title, version, created_at";
const NODE_COLUMNS: &str = "node_id, kind, title, published, public_text, gm_text";

/// The columns of [`SCENARIO_COLUMNS`].
fn scenario(r: &Row) -> Result<Scenario, StoreError> {
    Ok(Scenario {
        id: r.uuid("id")?,
        owner_id: r.uuid("owner_id")?,
        title: r.text("title")?,
        version: r.int("version")?,
        created_at: r.int("created_at")?,
    })
}

/// The columns of [`NODE_COLUMNS`].
fn node(r: &Row) -> Result<Node, StoreError> {
    Ok(Node {
        id: r.text("node_id")?,
        kind: r.text("kind")?,
        title: r.text("title")?,
        published: r.flag("published")?,
        public_text: r.text("public_text")?,
        gm_text: r.text("gm_text")?,
    })
}

/// The nodes of one published version, on `on` (the pool or a held connection).
pub(super) async fn nodes_on(
    on: impl Runner,
    scenario_id: Uuid,
    version: i64,
) -> Result<Vec<Node>, StoreError> {
    let rows = sql(format!(
        "SELECT {NODE_COLUMNS} FROM scenario_nodes WHERE scenario_id = $1 AND version = $2 \
         ORDER BY node_id"
    ))
    .bind(scenario_id)
    .bind(version)
    .fetch_all(on)
    .await?;
    rows.iter().map(node).collect()
}

/// Inserts the scenario row, on `on` (the pool or a transaction).
async fn insert_scenario(on: impl Runner, s: &Scenario) -> Result<(), StoreError> {
    sql(
        "INSERT INTO scenarios (id, owner_id, title, version, created_at) \
         VALUES ($1, $2, $3, $4, $5)",
    )
    .bind(s.id)
    .bind(s.owner_id)
    .bind(&s.title)
    .bind(s.version)
    .bind(s.created_at)
    .execute(on)
    .await?;
    Ok(())
}

#[async_trait]
impl Scenarios for SqlStore {
    async fn create_scenario(&self, scenario: &NewScenario) -> Result<Scenario, StoreError> {
        let created = Scenario {
            id: scenario.id,
            owner_id: scenario.owner_id,
            title: scenario.title.clone(),
            version: 1,
            created_at: scenario.created_at,
        };
        let mut tx = self.db.begin_write().await?;
        insert_scenario(&mut tx, &created).await?;
        for node in &scenario.nodes {
            sql(
                "INSERT INTO scenario_nodes (scenario_id, version, node_id, kind, title, \
                 published, public_text, gm_text) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
            )
            .bind(scenario.id)
            .bind(created.version)
            .bind(&node.id)
            .bind(&node.kind)
            .bind(&node.title)
            .bind(node.published)
            .bind(&node.public_text)
            .bind(&node.gm_text)
            .execute(&mut tx)
            .await?;
        }
        sql(
            "INSERT INTO scenario_draft_nodes (scenario_id, node_id, kind, title, published, \
             public_text, gm_text) \
             SELECT scenario_id, node_id, kind, title, published, public_text, gm_text \
             FROM scenario_nodes WHERE scenario_id = $1 AND version = $2",
        )
        .bind(scenario.id)
        .bind(created.version)
        .execute(&mut tx)
        .await?;
        tx.commit().await?;
        Ok(created)
    }

    async fn scenario(&self, id: Uuid) -> Result<Option<Scenario>, StoreError> {
        let row = sql(format!(
            "SELECT {SCENARIO_COLUMNS} FROM scenarios WHERE id = $1"
        ))
        .bind(id)
        .fetch_optional(&self.db)
        .await?;
        row.as_ref().map(scenario).transpose()
    }

    async fn scenario_by_title(
        &self,
        owner_id: Uuid,
        title: &str,
    ) -> Result<Option<Scenario>, StoreError> {
        let row = sql(format!(
            "SELECT {SCENARIO_COLUMNS} FROM scenarios WHERE owner_id = $1 AND title = $2 \
             ORDER BY created_at, id LIMIT 1"
        ))
        .bind(owner_id)
        .bind(title)
        .fetch_optional(&self.db)
        .await?;
        row.as_ref().map(scenario).transpose()
    }

    async fn nodes(&self, scenario_id: Uuid, version: i64) -> Result<Vec<Node>, StoreError> {
        nodes_on(&self.db, scenario_id, version).await
    }

    async fn nodes_held(
        &self,
        held: &mut Held,
        scenario_id: Uuid,
        version: i64,
    ) -> Result<Vec<Node>, StoreError> {
        nodes_on(held, scenario_id, version).await
    }

    async fn scenarios_of(&self, owner_id: Uuid) -> Result<Vec<Scenario>, StoreError> {
        let rows = sql(format!(
            "SELECT {SCENARIO_COLUMNS} FROM scenarios WHERE owner_id = $1 \
             ORDER BY created_at, id"
        ))
        .bind(owner_id)
        .fetch_all(&self.db)
        .await?;
        rows.iter().map(scenario).collect()
    }

    async fn create_draft_scenario(
        &self,
        id: Uuid,
        owner_id: Uuid,
        title: &str,
        now: Millis,
    ) -> Result<Scenario, StoreError> {
        let created = Scenario {
            id,
            owner_id,
            title: title.to_owned(),
            version: 0,
            created_at: now,
        };
        insert_scenario(&self.db, &created).await?;
        Ok(created)
    }

    async fn draft_nodes(&self, scenario_id: Uuid) -> Result<Vec<Node>, StoreError> {
        let rows = sql(format!(
            "SELECT {NODE_COLUMNS} FROM scenario_draft_nodes WHERE scenario_id = $1 \
             ORDER BY node_id"
        ))
        .bind(scenario_id)
        .fetch_all(&self.db)
        .await?;
        rows.iter().map(node).collect()
    }

    async fn put_draft_node(&self, scenario_id: Uuid, node: &Node) -> Result<(), StoreError> {
        // An unknown scenario fails the foreign key, which reads as `NotFound`.
        sql(
            "INSERT INTO scenario_draft_nodes (scenario_id, node_id, kind, title, published, \
             public_text, gm_text) VALUES ($1, $2, $3, $4, $5, $6, $7) \
             ON CONFLICT (scenario_id, node_id) DO UPDATE SET kind = excluded.kind, \
             title = excluded.title, published = excluded.published, \
             public_text = excluded.public_text, gm_text = excluded.gm_text",
        )
        .bind(scenario_id)
        .bind(&node.id)
        .bind(&node.kind)
        .bind(&node.title)
        .bind(node.published)
        .bind(&node.public_text)
        .bind(&node.gm_text)
        .execute(&self.db)
        .await?;
        Ok(())
    }

    async fn delete_draft_node(
        &self,
        scenario_id: Uuid,
        node_id: &str,
    ) -> Result<bool, StoreError> {
        let done = sql("DELETE FROM scenario_draft_nodes WHERE scenario_id = $1 AND node_id = $2")
            .bind(scenario_id)
            .bind(node_id)
            .execute(&self.db)
            .await?;
        Ok(done.rows_affected() == 1)
    }

    async fn publish_scenario(&self, scenario_id: Uuid) -> Result<i64, StoreError> {
        let mut tx = self.db.begin_write().await?;
        // The lock queues concurrent publishes, so each gets its own version.
        let version = sql(format!(
            "SELECT version FROM scenarios WHERE id = $1{}",
            tx.backend().row_lock()
        ))
        .bind(scenario_id)
        .fetch_one(&mut tx)
        .await?
        .int("version")?;
        let next = version + 1;
        sql(
            "INSERT INTO scenario_nodes (scenario_id, version, node_id, kind, title, published, \
             public_text, gm_text) \
             SELECT scenario_id, $2, node_id, kind, title, published, public_text, gm_text \
             FROM scenario_draft_nodes WHERE scenario_id = $1",
        )
        .bind(scenario_id)
        .bind(next)
        .execute(&mut tx)
        .await?;
        sql("UPDATE scenarios SET version = $1 WHERE id = $2")
            .bind(next)
            .bind(scenario_id)
            .execute(&mut tx)
            .await?;
        tx.commit().await?;
        Ok(next)
    }
}
