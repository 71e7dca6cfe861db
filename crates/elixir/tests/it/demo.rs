//! `elixir demo`'s recording, shortened to three days: the generated clan is recorded through
//! the recorder from the built-in fake API, the demo account tracks it with its leader as
//! primary, an agent door answers for the clan, and a second run refuses instead of
//! recording twice.

use elixir::access::kinds::OsRandom;
use elixir::demo::{self, DemoError};
use testkit::db::TempDir;

use crate::on_both_backends;
use crate::support::spawn;

async fn the_demo_records_a_clan(url: &str) {
    let server = spawn(url).await;
    let archive = TempDir::new("elixir-demo-");
    let mut lines = Vec::new();
    let demo = demo::record(
        3,
        &server.store,
        &server.clock,
        &OsRandom,
        archive.path(),
        |l| lines.push(l),
    )
    .await
    .unwrap();
    assert_eq!(lines.len(), 3, "a line per day: {lines:?}");
    assert!(lines[2].starts_with("day  3/3 "), "{lines:?}");
    assert!(demo.battles > 100, "{demo:?}");
    assert!(
        demo.players >= 25,
        "most of the 30 members are recorded: {demo:?}"
    );
    let account = server
        .store
        .account_by_email(demo::DEMO_EMAIL)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        account.primary_player_tag.as_deref(),
        Some(demo.primary_tag.as_str())
    );
    let agent = server
        .store
        .agent_by_public_id(&demo.agent_public_id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(agent.clan_tag.as_deref(), Some(demo.clan_tag.as_str()));
    assert!(demo.service_key.starts_with("svt_"));
    let again = demo::record(
        3,
        &server.store,
        &server.clock,
        &OsRandom,
        archive.path(),
        |_| {},
    )
    .await;
    assert!(
        matches!(again, Err(DemoError::AlreadyRecorded)),
        "{again:?}"
    );
}

on_both_backends!(the_demo_records_a_clan);
