//! The statements and transactions of both SQL backends, written once. SQLite accepts the
//! `$n` placeholders of PostgreSQL and the schemas agree on types, so the backends differ only
//! in how a write transaction begins (`BEGIN IMMEDIATE` or `BEGIN`) and whether a read takes
//! a row lock (`FOR UPDATE`); each backend module keeps those and invokes [`sql_store!`].
//!
//! [`sql_store!`] is the one place that implements `Store`, each method handing over in one
//! line to its area. The statements live by area, a macro per file that emits a module of
//! functions into the same expansion: [`accounts`], [`scenarios`], [`assignments`], [`play`] and
//! [`wiki`].

mod accounts;
mod assignments;
mod play;
mod scenarios;
mod wiki;

pub(crate) use accounts::sql_accounts;
pub(crate) use assignments::sql_assignments;
pub(crate) use play::sql_play;
pub(crate) use scenarios::sql_scenarios;
pub(crate) use wiki::sql_wiki;

/// Implements [`Store`](super::Store) for `$store`, a struct in the invoking module with a
/// `pool` field, an `async fn begin_write(&self) -> Result<Transaction<'static, _>, StoreError>`
/// and a `MIGRATIONS: Embedded` constant beside it. `$conn` is the backend's connection type and
/// `$lock` the suffix that locks the rows a `SELECT` reads inside a write transaction.
///
/// A macro rather than code generic over `sqlx::Database`: generic code would have to repeat
/// the executor, argument and encode bounds of every bound type on every function.
///
/// Each area's macro emits `mod <area>` here, with one function per `Store` method taking the
/// store first; the trait implementation hands each method to it (`accounts::create_user(self,
/// user)`), so the trait's shape is in this file and the statements are in the area files.
macro_rules! sql_store {
    ($store:ident, $conn:ty, lock = $lock:literal) => {
        mod sql_store {
            use async_trait::async_trait;
            use sqlx::Connection;
            use uuid::Uuid;

            use crate::domain::wiki::{WikiPage, WikiWrite, WikiWriteOutcome};
            use crate::domain::{
                Assignment, Consequence, JournalEvent, Millis, Node, PlayTokenGrant, Receipt,
                Scenario, User,
            };
            use crate::store::{
                Applied, ApplyError, AuthorGrant, AuthorTokenInfo, ContextSnapshot, CreateOutcome,
                Decide, LoginReservation, NewAuthorToken, NewScenario, NewSession, NewUser,
                SessionRecord, Store, StoreError,
            };

            // Macros are invoked by path (`sql::user_columns!()` too): imported, they leave macro
            // resolution stuck inside this expansion.
            crate::store::sql_store::sql_accounts!($store);
            crate::store::sql_store::sql_scenarios!($store, lock = $lock);
            crate::store::sql_store::sql_assignments!($store, lock = $lock);
            crate::store::sql_store::sql_play!($store, $conn, lock = $lock);
            crate::store::sql_store::sql_wiki!($store, $conn, lock = $lock);

            #[async_trait]
            impl Store for super::$store {
                async fn migrate(&self) -> Result<(), StoreError> {
                    Ok(super::MIGRATIONS
                        .migrator(false)
                        .await?
                        .run(&self.pool)
                        .await?)
                }

                async fn ping(&self) -> Result<(), StoreError> {
                    Ok(self.pool.acquire().await?.ping().await?)
                }

                fn pool_use(&self) -> mcp_door::PoolUse {
                    mcp_door::PoolUse {
                        size: self.pool.size(),
                        idle: u32::try_from(self.pool.num_idle()).unwrap_or(u32::MAX),
                    }
                }

                async fn create_user(&self, user: &NewUser) -> Result<User, StoreError> {
                    accounts::create_user(self, user).await
                }

                async fn user_by_username(
                    &self,
                    username: &str,
                ) -> Result<Option<User>, StoreError> {
                    accounts::user_by_username(self, username).await
                }

                async fn user_by_id(&self, id: Uuid) -> Result<Option<User>, StoreError> {
                    accounts::user_by_id(self, id).await
                }

                async fn set_user_active(&self, id: Uuid, active: bool) -> Result<(), StoreError> {
                    accounts::set_user_active(self, id, active).await
                }

                async fn create_scenario(
                    &self,
                    scenario: &NewScenario,
                ) -> Result<Scenario, StoreError> {
                    scenarios::create_scenario(self, scenario).await
                }

                async fn scenario(&self, id: Uuid) -> Result<Option<Scenario>, StoreError> {
                    scenarios::scenario(self, id).await
                }

                async fn scenario_by_title(
                    &self,
                    owner_id: Uuid,
                    title: &str,
                ) -> Result<Option<Scenario>, StoreError> {
                    scenarios::scenario_by_title(self, owner_id, title).await
                }

                async fn nodes(
                    &self,
                    scenario_id: Uuid,
                    version: i64,
                ) -> Result<Vec<Node>, StoreError> {
                    scenarios::nodes(self, scenario_id, version).await
                }

                async fn create_assignment(&self, a: &Assignment) -> Result<(), StoreError> {
                    assignments::create_assignment(self, a).await
                }

                async fn assignment(&self, id: Uuid) -> Result<Option<Assignment>, StoreError> {
                    assignments::assignment(self, id).await
                }

                async fn issue_play_token(
                    &self,
                    assignment_id: Uuid,
                    digest: &str,
                    now: Millis,
                    expires_at: Millis,
                ) -> Result<(), StoreError> {
                    assignments::issue_play_token(self, assignment_id, digest, now, expires_at)
                        .await
                }

                async fn revoke_play_tokens(
                    &self,
                    assignment_id: Uuid,
                    now: Millis,
                ) -> Result<u64, StoreError> {
                    assignments::revoke_play_tokens(self, assignment_id, now).await
                }

                async fn play_token(
                    &self,
                    digest: &str,
                ) -> Result<Option<PlayTokenGrant>, StoreError> {
                    assignments::play_token(self, digest).await
                }

                async fn journal_page(
                    &self,
                    assignment_id: Uuid,
                    player_view: bool,
                    offset: i64,
                    limit: i64,
                ) -> Result<(i64, Vec<JournalEvent>), StoreError> {
                    play::journal_page(self, assignment_id, player_view, offset, limit).await
                }

                async fn context_snapshot(
                    &self,
                    assignment_id: Uuid,
                    events: i64,
                    consequences: i64,
                ) -> Result<Option<ContextSnapshot>, StoreError> {
                    play::context_snapshot(self, assignment_id, events, consequences).await
                }

                async fn recent_journal(
                    &self,
                    assignment_id: Uuid,
                    player_view: bool,
                    n: i64,
                ) -> Result<Vec<JournalEvent>, StoreError> {
                    play::recent_journal(self, assignment_id, player_view, n).await
                }

                async fn journal(
                    &self,
                    assignment_id: Uuid,
                    player_view: bool,
                ) -> Result<Vec<JournalEvent>, StoreError> {
                    play::journal(self, assignment_id, player_view).await
                }

                async fn recent_consequences(
                    &self,
                    assignment_id: Uuid,
                    n: i64,
                ) -> Result<Vec<Consequence>, StoreError> {
                    play::recent_consequences(self, assignment_id, n).await
                }

                async fn pending_count(&self, assignment_id: Uuid) -> Result<i64, StoreError> {
                    play::pending_count(self, assignment_id).await
                }

                async fn receipt(
                    &self,
                    assignment_id: Uuid,
                    operation_id: Uuid,
                ) -> Result<Option<Receipt>, StoreError> {
                    play::receipt(self, assignment_id, operation_id).await
                }

                async fn apply(
                    &self,
                    assignment_id: Uuid,
                    operation_id: Uuid,
                    load: crate::store::Load<'_>,
                    decide: Decide,
                ) -> Result<Applied, ApplyError> {
                    play::apply(self, assignment_id, operation_id, load, decide).await
                }

                // ---- accounts and sessions ----

                async fn password_hash(&self, user_id: Uuid) -> Result<Option<String>, StoreError> {
                    accounts::password_hash(self, user_id).await
                }

                async fn set_password_hash(
                    &self,
                    user_id: Uuid,
                    hash: Option<&str>,
                ) -> Result<(), StoreError> {
                    accounts::set_password_hash(self, user_id, hash).await
                }

                async fn create_session(&self, session: &NewSession) -> Result<(), StoreError> {
                    accounts::create_session(self, session).await
                }

                async fn session(&self, digest: &str) -> Result<Option<SessionRecord>, StoreError> {
                    accounts::session(self, digest).await
                }

                async fn delete_session(&self, digest: &str) -> Result<(), StoreError> {
                    accounts::delete_session(self, digest).await
                }

                async fn delete_sessions_of(&self, user_id: Uuid) -> Result<u64, StoreError> {
                    accounts::delete_sessions_of(self, user_id).await
                }

                async fn reserve_login_attempt(
                    &self,
                    keys: &[String],
                    at: Millis,
                    since: Millis,
                    max: i64,
                ) -> Result<Option<LoginReservation>, StoreError> {
                    accounts::reserve_login_attempt(self, keys, at, since, max).await
                }

                async fn release_login_reservation(
                    &self,
                    reservation: &LoginReservation,
                    clear_key: &str,
                ) -> Result<(), StoreError> {
                    accounts::release_login_reservation(self, reservation, clear_key).await
                }

                async fn login_failures_since(
                    &self,
                    key: &str,
                    since: Millis,
                ) -> Result<i64, StoreError> {
                    accounts::login_failures_since(self, key, since).await
                }

                // ---- scenario authoring ----

                async fn scenarios_of(&self, owner_id: Uuid) -> Result<Vec<Scenario>, StoreError> {
                    scenarios::scenarios_of(self, owner_id).await
                }

                async fn create_draft_scenario(
                    &self,
                    id: Uuid,
                    owner_id: Uuid,
                    title: &str,
                    now: Millis,
                ) -> Result<Scenario, StoreError> {
                    scenarios::create_draft_scenario(self, id, owner_id, title, now).await
                }

                async fn draft_nodes(&self, scenario_id: Uuid) -> Result<Vec<Node>, StoreError> {
                    scenarios::draft_nodes(self, scenario_id).await
                }

                async fn put_draft_node(
                    &self,
                    scenario_id: Uuid,
                    node: &Node,
                ) -> Result<(), StoreError> {
                    scenarios::put_draft_node(self, scenario_id, node).await
                }

                async fn delete_draft_node(
                    &self,
                    scenario_id: Uuid,
                    node_id: &str,
                ) -> Result<bool, StoreError> {
                    scenarios::delete_draft_node(self, scenario_id, node_id).await
                }

                async fn publish_scenario(&self, scenario_id: Uuid) -> Result<i64, StoreError> {
                    scenarios::publish_scenario(self, scenario_id).await
                }

                // ---- assignments for humans ----

                async fn create_assignment_once(
                    &self,
                    a: &Assignment,
                    creation_hash: &str,
                ) -> Result<CreateOutcome, StoreError> {
                    assignments::create_assignment_once(self, a, creation_hash).await
                }

                async fn assignments_of(
                    &self,
                    user_id: Uuid,
                    limit: i64,
                ) -> Result<Vec<Assignment>, StoreError> {
                    assignments::assignments_of(self, user_id, limit).await
                }

                async fn consequences(
                    &self,
                    assignment_id: Uuid,
                ) -> Result<Vec<Consequence>, StoreError> {
                    play::consequences(self, assignment_id).await
                }

                // ---- author personal tokens ----

                async fn create_author_token(
                    &self,
                    token: &NewAuthorToken,
                ) -> Result<(), StoreError> {
                    accounts::create_author_token(self, token).await
                }

                async fn author_tokens(
                    &self,
                    user_id: Uuid,
                ) -> Result<Vec<AuthorTokenInfo>, StoreError> {
                    accounts::author_tokens(self, user_id).await
                }

                async fn revoke_author_token(
                    &self,
                    user_id: Uuid,
                    token_id: Uuid,
                    now: Millis,
                ) -> Result<bool, StoreError> {
                    accounts::revoke_author_token(self, user_id, token_id, now).await
                }

                async fn author_token(
                    &self,
                    digest: &str,
                ) -> Result<Option<AuthorGrant>, StoreError> {
                    accounts::author_token(self, digest).await
                }

                // ---- the campaign wiki ----

                async fn wiki_pages(&self, owner_id: Uuid) -> Result<Vec<WikiPage>, StoreError> {
                    wiki::wiki_pages(self, owner_id).await
                }

                async fn wiki_page(
                    &self,
                    owner_id: Uuid,
                    slug: &str,
                ) -> Result<Option<WikiPage>, StoreError> {
                    wiki::wiki_page(self, owner_id, slug).await
                }

                async fn write_wiki_page(
                    &self,
                    owner_id: Uuid,
                    write: &WikiWrite,
                    now: Millis,
                ) -> Result<WikiWriteOutcome, StoreError> {
                    wiki::write_wiki_page(self, owner_id, write, now).await
                }

                async fn wiki_history(
                    &self,
                    owner_id: Uuid,
                    slug: &str,
                ) -> Result<Vec<WikiPage>, StoreError> {
                    wiki::wiki_history(self, owner_id, slug).await
                }
            }
        }
    };
}
pub(crate) use sql_store;
