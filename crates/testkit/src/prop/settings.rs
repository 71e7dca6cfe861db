//! The one place the workspace's property tests get their proptest `Config`: a fixed seed
//! (`DEFAULT_SEED`) and `DEFAULT_CASES` cases unless `PROPTEST_RNG_SEED` / `PROPTEST_CASES`
//! say otherwise, ChaCha as the generator, no failure-persistence files, and a report of the
//! seed and case count on stderr when a property fails. It depends on proptest and std only,
//! so crates without the test kit (elixir-record) include this file by path.

use std::cell::Cell;
use std::sync::Once;

use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::{Config, RngAlgorithm, RngSeed, TestRunner, contextualize_config};

/// The seed every property test uses unless `PROPTEST_RNG_SEED` is set.
pub const DEFAULT_SEED: u64 = 20_261_302;

/// Cases per property unless `PROPTEST_CASES` is set: small enough that every property of the
/// workspace together adds seconds, not minutes, to `cargo test` on a loaded 2-core machine.
pub const DEFAULT_CASES: u32 = 64;

thread_local! {
    /// Set once a sampled (async) property draws its values: any panic then is its verdict.
    static SAMPLED: Cell<bool> = const { Cell::new(false) };
    /// The seed and case count of the property running on this thread, for the failure report.
    static RUNNING: Cell<Option<(u64, u32)>> = const { Cell::new(None) };
}

/// The `Config` for a `proptest!` block: `#![proptest_config(config())]`.
pub fn config() -> Config {
    config_with_cases(DEFAULT_CASES)
}

/// [`config`] with another default case count (a property that costs more per case);
/// `PROPTEST_CASES` still overrides it.
pub fn config_with_cases(cases: u32) -> Config {
    let base = Config {
        cases,
        rng_algorithm: RngAlgorithm::ChaCha,
        rng_seed: RngSeed::Fixed(DEFAULT_SEED),
        failure_persistence: None,
        // Shrinking a failure stays bounded too; the seed reproduces the unshrunk case anyway.
        max_shrink_iters: 2_048,
        ..Config::default()
    };
    // The same environment proptest's macro reads, so the seed reported is the seed used.
    let config = contextualize_config(base);
    let seed = match config.rng_seed {
        RngSeed::Fixed(seed) => seed,
        RngSeed::Random => DEFAULT_SEED,
    };
    RUNNING.with(|r| r.set(Some((seed, config.cases))));
    install_report();
    config
}

/// Exactly `n` values drawn from `strategy` under [`config`]'s seed, for a property whose
/// check is async (an HTTP round trip): no shrinking, but the same values on every run with
/// the same seed, and the seed reported if the test then panics. The caller scales `n` from
/// `config().cases` when it should grow with `PROPTEST_CASES`.
pub fn sample<S: Strategy>(strategy: &S, n: usize) -> Vec<S::Value> {
    // The test's thread is marked for good: the harness runs each test on a thread of its own.
    SAMPLED.with(|s| s.set(true));
    let mut runner = TestRunner::new(config());
    (0..n)
        .map(|_| match strategy.new_tree(&mut runner) {
            Ok(tree) => tree.current(),
            Err(reason) => panic!("the strategy cannot generate a value: {reason}"),
        })
        .collect()
}

/// Installs (once per process) a panic hook that, after the usual report, names the seed and
/// case count of a failing property: proptest's own message leaves them out.
fn install_report() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            previous(info);
            let message = info
                .payload()
                .downcast_ref::<String>()
                .map(String::as_str)
                .or_else(|| info.payload().downcast_ref::<&str>().copied())
                .unwrap_or("");
            // A case that panics inside proptest is caught and shrunk; only the final verdict
            // (or a sampled property's assertion) is the test failing.
            let verdict = message.starts_with("Test failed:")
                || message.starts_with("Test aborted:")
                || SAMPLED.with(Cell::get);
            if verdict && let Some((seed, cases)) = RUNNING.with(Cell::get) {
                // A sampled property's count is its own default; name the variable as set.
                let cases = if SAMPLED.with(Cell::get) {
                    std::env::var("PROPTEST_CASES")
                        .unwrap_or_else(|_| "unset (the test's default)".to_owned())
                } else {
                    cases.to_string()
                };
                eprintln!(
                    "property test failed with PROPTEST_RNG_SEED={seed} PROPTEST_CASES={cases}; \
                     run it again with both to reproduce it"
                );
            }
        }));
    });
}
