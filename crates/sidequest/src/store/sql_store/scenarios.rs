//! The scenarios part of the SQL store: a scenario created with its first version, looked up
//! by id or title, the nodes of a version, and authoring (drafts, draft nodes, publishing the
//! next version). The assignments of a scenario are the assignments area's.

/// Emits `mod scenarios` into [`sql_store!`](super::sql_store!)'s expansion: one function per
/// `Store` method of this area, with the store as its first argument.
macro_rules! sql_scenarios {
    ($store:ident, lock = $lock:literal) => {
        mod scenarios {
            use uuid::Uuid;

            use super::super::$store;
            use crate::domain::{Millis, Node, Scenario};
            use crate::store::{NewScenario, StoreError, sql};

            pub(super) async fn create_scenario(
                store: &$store,
                scenario: &NewScenario,
            ) -> Result<Scenario, StoreError> {
                let created = Scenario {
                    id: scenario.id,
                    owner_id: scenario.owner_id,
                    title: scenario.title.clone(),
                    version: 1,
                    created_at: scenario.created_at,
                };
                let id = scenario.id.to_string();
                let mut tx = store.begin_write().await?;
                sqlx::query(
                    "INSERT INTO scenarios (id, owner_id, title, version, created_at) \
                     VALUES ($1, $2, $3, $4, $5)",
                )
                .bind(&id)
                .bind(created.owner_id.to_string())
                .bind(&created.title)
                .bind(created.version)
                .bind(created.created_at)
                .execute(&mut *tx)
                .await?;
                for node in &scenario.nodes {
                    sqlx::query(
                        "INSERT INTO scenario_nodes (scenario_id, version, node_id, kind, \
                         title, published, public_text, gm_text) \
                         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
                    )
                    .bind(&id)
                    .bind(created.version)
                    .bind(&node.id)
                    .bind(&node.kind)
                    .bind(&node.title)
                    .bind(node.published)
                    .bind(&node.public_text)
                    .bind(&node.gm_text)
                    .execute(&mut *tx)
                    .await?;
                }
                sqlx::query(
                    "INSERT INTO scenario_draft_nodes (scenario_id, node_id, kind, title, \
                     published, public_text, gm_text) \
                     SELECT scenario_id, node_id, kind, title, published, public_text, gm_text \
                     FROM scenario_nodes WHERE scenario_id = $1 AND version = $2",
                )
                .bind(&id)
                .bind(created.version)
                .execute(&mut *tx)
                .await?;
                tx.commit().await?;
                Ok(created)
            }

            pub(super) async fn scenario(
                store: &$store,
                id: Uuid,
            ) -> Result<Option<Scenario>, StoreError> {
                let row = sqlx::query(concat!(
                    "SELECT ",
                    sql::scenario_columns!(),
                    " FROM scenarios WHERE id = $1"
                ))
                .bind(id.to_string())
                .fetch_optional(&store.pool)
                .await?;
                row.as_ref().map(sql::scenario).transpose()
            }

            pub(super) async fn scenario_by_title(
                store: &$store,
                owner_id: Uuid,
                title: &str,
            ) -> Result<Option<Scenario>, StoreError> {
                let row = sqlx::query(concat!(
                    "SELECT ",
                    sql::scenario_columns!(),
                    " FROM scenarios WHERE owner_id = $1 AND title = $2 \
                     ORDER BY created_at, id LIMIT 1"
                ))
                .bind(owner_id.to_string())
                .bind(title)
                .fetch_optional(&store.pool)
                .await?;
                row.as_ref().map(sql::scenario).transpose()
            }

            pub(super) async fn nodes(
                store: &$store,
                scenario_id: Uuid,
                version: i64,
            ) -> Result<Vec<Node>, StoreError> {
                let rows = sqlx::query(concat!(
                    "SELECT ",
                    sql::node_columns!(),
                    " FROM scenario_nodes WHERE scenario_id = $1 AND version = $2 \
                     ORDER BY node_id"
                ))
                .bind(scenario_id.to_string())
                .bind(version)
                .fetch_all(&store.pool)
                .await?;
                rows.iter().map(sql::node).collect()
            }

            pub(super) async fn scenarios_of(
                store: &$store,
                owner_id: Uuid,
            ) -> Result<Vec<Scenario>, StoreError> {
                let rows = sqlx::query(concat!(
                    "SELECT ",
                    sql::scenario_columns!(),
                    " FROM scenarios WHERE owner_id = $1 ORDER BY created_at, id"
                ))
                .bind(owner_id.to_string())
                .fetch_all(&store.pool)
                .await?;
                rows.iter().map(sql::scenario).collect()
            }

            pub(super) async fn create_draft_scenario(
                store: &$store,
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
                sqlx::query(
                    "INSERT INTO scenarios (id, owner_id, title, version, created_at) \
                     VALUES ($1, $2, $3, $4, $5)",
                )
                .bind(id.to_string())
                .bind(owner_id.to_string())
                .bind(title)
                .bind(created.version)
                .bind(now)
                .execute(&store.pool)
                .await?;
                Ok(created)
            }

            pub(super) async fn draft_nodes(
                store: &$store,
                scenario_id: Uuid,
            ) -> Result<Vec<Node>, StoreError> {
                let rows = sqlx::query(concat!(
                    "SELECT ",
                    sql::node_columns!(),
                    " FROM scenario_draft_nodes WHERE scenario_id = $1 ORDER BY node_id"
                ))
                .bind(scenario_id.to_string())
                .fetch_all(&store.pool)
                .await?;
                rows.iter().map(sql::node).collect()
            }

            pub(super) async fn put_draft_node(
                store: &$store,
                scenario_id: Uuid,
                node: &Node,
            ) -> Result<(), StoreError> {
                // An unknown scenario fails the foreign key, which reads as `NotFound`.
                sqlx::query(
                    "INSERT INTO scenario_draft_nodes (scenario_id, node_id, kind, title, \
                     published, public_text, gm_text) VALUES ($1, $2, $3, $4, $5, $6, $7) \
                     ON CONFLICT (scenario_id, node_id) DO UPDATE SET kind = excluded.kind, \
                     title = excluded.title, published = excluded.published, \
                     public_text = excluded.public_text, gm_text = excluded.gm_text",
                )
                .bind(scenario_id.to_string())
                .bind(&node.id)
                .bind(&node.kind)
                .bind(&node.title)
                .bind(node.published)
                .bind(&node.public_text)
                .bind(&node.gm_text)
                .execute(&store.pool)
                .await?;
                Ok(())
            }

            pub(super) async fn delete_draft_node(
                store: &$store,
                scenario_id: Uuid,
                node_id: &str,
            ) -> Result<bool, StoreError> {
                let done = sqlx::query(
                    "DELETE FROM scenario_draft_nodes WHERE scenario_id = $1 AND node_id = $2",
                )
                .bind(scenario_id.to_string())
                .bind(node_id)
                .execute(&store.pool)
                .await?;
                Ok(done.rows_affected() == 1)
            }

            pub(super) async fn publish_scenario(
                store: &$store,
                scenario_id: Uuid,
            ) -> Result<i64, StoreError> {
                let id = scenario_id.to_string();
                let mut tx = store.begin_write().await?;
                // The lock queues concurrent publishes, so each gets its own version.
                let version: i64 = sqlx::query_scalar(concat!(
                    "SELECT version FROM scenarios WHERE id = $1",
                    $lock
                ))
                .bind(&id)
                .fetch_optional(&mut *tx)
                .await?
                .ok_or(StoreError::NotFound)?;
                let next = version + 1;
                sqlx::query(
                    "INSERT INTO scenario_nodes (scenario_id, version, node_id, kind, title, \
                     published, public_text, gm_text) \
                     SELECT scenario_id, $2, node_id, kind, title, published, public_text, \
                     gm_text FROM scenario_draft_nodes WHERE scenario_id = $1",
                )
                .bind(&id)
                .bind(next)
                .execute(&mut *tx)
                .await?;
                sqlx::query("UPDATE scenarios SET version = $1 WHERE id = $2")
                    .bind(next)
                    .bind(&id)
                    .execute(&mut *tx)
                    .await?;
                tx.commit().await?;
                Ok(next)
            }
        }
    };
}
pub(crate) use sql_scenarios;
