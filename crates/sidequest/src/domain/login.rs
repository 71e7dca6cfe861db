//! The login throttle's rules, without I/O: the window and the limit, the keys an attempt
//! counts under, whether counts admit one more attempt, and the lock slots a reservation takes
//! (in the one order that keeps two reservations from deadlocking). The store applies them
//! inside its transaction; the handler picks the answer.

use sha2::{Digest, Sha256};

use super::Millis;

/// Failed logins are counted over this window, per username and per client address.
pub const LOGIN_WINDOW_MS: Millis = 15 * 60 * 1000;
/// At this many failures in the window for either key, logins are refused with 429.
pub const LOGIN_MAX_FAILURES: i64 = 10;
/// How many lock rows the keys are spread over. Two keys sharing a slot only wait for each
/// other's (short) reservation; a fixed number keeps the lock table at most this many rows
/// without pruning, and pruning rows that other transactions may be locking is what invites
/// deadlocks.
pub const LOCK_SLOTS: u64 = 1024;

/// The two keys one attempt counts under: its username and its client address's limit key
/// (`mcp_door::limit_key`: an IPv6 client by its /64).
pub fn throttle_keys(username: &str, address_key: &str) -> [String; 2] {
    [format!("user:{username}"), format!("ip:{address_key}")]
}

/// The oldest failure time still inside the window ending at `now`: a failure counts while it
/// is less than the window old.
pub fn window_start(now: Millis) -> Millis {
    now - LOGIN_WINDOW_MS + 1
}

/// Whether keys with these failure counts (in the window) admit one more attempt.
pub fn admits(counts: &[i64], max: i64) -> bool {
    counts.iter().all(|&c| c < max)
}

/// Whether an attempt that brought its worst key to `failures` (itself included) reached the
/// limit: its failure is then already answered with 429, like every refusal after it.
pub fn reaches_limit(failures: i64) -> bool {
    failures >= LOGIN_MAX_FAILURES
}

/// The lock slot of every key, ascending and without repeats: every reservation takes its
/// locks in this order, so no two can wait on each other in a cycle. SHA-256 rather than
/// `std`'s hasher because every instance must map a key to the same slot.
pub fn lock_slots(keys: &[String]) -> Vec<i64> {
    let mut slots: Vec<i64> = keys
        .iter()
        .map(|key| {
            let d = Sha256::digest(key.as_bytes());
            let head = u64::from_be_bytes([d[0], d[1], d[2], d[3], d[4], d[5], d[6], d[7]]);
            // Below LOCK_SLOTS, so the conversion cannot fail.
            i64::try_from(head % LOCK_SLOTS).unwrap_or(0)
        })
        .collect();
    slots.sort_unstable();
    slots.dedup();
    slots
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_attempt_counts_under_its_username_and_address() {
        assert_eq!(
            throttle_keys("alice", "2001:db8:1:2::/64"),
            ["user:alice", "ip:2001:db8:1:2::/64"]
        );
        // a username that looks like an address is still a username
        assert_ne!(
            throttle_keys("10.0.0.1", "x")[0],
            throttle_keys("y", "10.0.0.1")[1]
        );
    }

    #[test]
    fn the_window_keeps_a_failure_for_fifteen_minutes_exactly() {
        let now = 1_000_000_000;
        assert_eq!(window_start(now), 999_100_001);
        // counted while `at >= window_start`: 899,999 ms old counts, 900,000 ms old does not
        assert!(now - 899_999 >= window_start(now));
        assert!(now - 900_000 < window_start(now));
    }

    #[test]
    fn admits_only_while_every_key_is_under_the_limit() {
        assert!(admits(&[0, 0], 10));
        assert!(admits(&[9, 3], 10));
        assert!(!admits(&[10, 0], 10));
        assert!(!admits(&[0, 12], 10));
        assert!(admits(&[], 10));
    }

    #[test]
    fn the_tenth_failure_reaches_the_limit() {
        assert!(!reaches_limit(LOGIN_MAX_FAILURES - 1));
        assert!(reaches_limit(LOGIN_MAX_FAILURES));
    }

    #[test]
    fn lock_slots_are_stable_sorted_and_distinct() {
        let keys = throttle_keys("alice", "198.51.100.7");
        let slots = lock_slots(&keys);
        assert!(slots.windows(2).all(|w| w[0] < w[1]), "{slots:?}");
        assert!(slots.iter().all(|&s| (0..LOCK_SLOTS as i64).contains(&s)));
        // the same keys in either order take the same locks in the same order
        let reversed = [keys[1].clone(), keys[0].clone()];
        assert_eq!(lock_slots(&reversed), slots);
        // a key named twice is locked once
        assert_eq!(lock_slots(&[keys[0].clone(), keys[0].clone()]).len(), 1);
        // fixed across builds and instances (SHA-256, not a seeded hasher)
        assert_eq!(slots, [305, 466]);
        let spread: std::collections::BTreeSet<i64> = (0..200)
            .flat_map(|i| lock_slots(&[format!("user:u{i}")]))
            .collect();
        assert!(
            spread.len() > 150,
            "keys spread over the slots: {}",
            spread.len()
        );
    }
}
