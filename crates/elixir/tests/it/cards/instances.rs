//! The catalogue across two instances on one PostgreSQL database: instance 2 keeps the
//! catalogue in memory, and serves the new one on its next call after instance 1's daily read
//! lands, because every call's metering statement reads the stored catalogue's stamp. The
//! counting store shows instance 2 reads the catalogue once per stamp, not once per call.

use std::sync::{Arc, OnceLock};

use serde_json::{Value, json};
use testkit::db::TempDir;

use super::{DAY, FIXTURE, FakeApi, Plan, refresh, upstream};
use crate::counting_store::CountingStore;
use crate::support::{Options, spawn_with, success};

/// The fixture without its last card: what the API answers the next day.
fn one_card_fewer() -> String {
    let mut body: Value = serde_json::from_str(FIXTURE).unwrap();
    body["items"].as_array_mut().unwrap().pop();
    body.to_string()
}

/// The catalogue reads among `statements`.
fn catalogue_reads(statements: &[&str]) -> usize {
    statements
        .iter()
        .filter(|s| **s == "cards_catalogue")
        .count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_other_instance_serves_the_new_catalogue_once_the_daily_read_lands() {
    let Some(url) = testkit::db::fresh_postgres().await else {
        eprintln!("skipped: TEST_DATABASE_URL not set");
        return;
    };
    let first = spawn_with(&url, Options::default()).await;
    let counting: Arc<OnceLock<Arc<CountingStore>>> = Arc::default();
    let held = Arc::clone(&counting);
    let second = spawn_with(
        &url,
        Options {
            world: Some((
                first.person.clone(),
                first.agent.clone(),
                first.integration.clone(),
            )),
            seed: 1_000_000,
            wrap_store: Some(Box::new(move |store| {
                let wrapped = CountingStore::wrap(store);
                let _ = held.set(Arc::clone(&wrapped));
                wrapped
            })),
            ..Options::default()
        },
    )
    .await;
    let counting = counting.get().expect("wrapped");
    let call = || async { success(&second.agent().tool("cards_catalog", json!({})).await) };

    // nothing read yet: instance 2 answers nulls without reading the catalogue table
    counting.take();
    assert_eq!(call().await["total"], Value::Null);
    assert_eq!(catalogue_reads(&counting.take()), 0);

    // instance 1 reads the catalogue: instance 2 loads it on its next call, then keeps it
    let archive = TempDir::new("elixir-archive-");
    let api = FakeApi::start(FIXTURE).await;
    first.clock.set_millis(first.clock_now() + 11 * 3_600_000);
    refresh(&first, &upstream(&first, &api, &archive))
        .await
        .unwrap();
    let day_one = call().await;
    assert_eq!(day_one["total"], 16, "{day_one}");
    for _ in 0..3 {
        assert_eq!(call().await["observed_at"], day_one["observed_at"]);
    }
    assert_eq!(catalogue_reads(&counting.take()), 1);

    // the next day's read lands on instance 1, with a card fewer: instance 2's next call
    // serves it, read once
    api.answer(Plan::Body(one_card_fewer()));
    first.clock.set_millis(first.clock_now() + DAY);
    let landed = refresh(&first, &upstream(&first, &api, &archive))
        .await
        .unwrap();
    assert!(landed.changed);
    let day_two = call().await;
    assert_eq!(day_two["total"], 15, "{day_two}");
    assert_ne!(day_two["observed_at"], day_one["observed_at"]);
    assert_eq!(call().await["total"], 15);
    assert_eq!(catalogue_reads(&counting.take()), 1);
}
