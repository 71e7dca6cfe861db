//! The `test-clock` feature's clock (never in a release a user downloads): the real clock plus
//! the whole number of seconds written in the file `ELIXIR_TEST_CLOCK_FILE` names, re-read at
//! most every 100 ms, never moving backwards. A test outside the process walks the recorder
//! through days in minutes by writing a larger number.

use std::path::PathBuf;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use mcp_door::{Clock, SystemClock};

/// The environment variable naming the offset file.
pub const ENV: &str = "ELIXIR_TEST_CLOCK_FILE";
const REREAD: Duration = Duration::from_millis(100);

/// The real clock shifted by the file's seconds.
#[derive(Debug)]
pub struct FileOffsetClock {
    path: PathBuf,
    state: Mutex<State>,
}

#[derive(Debug)]
struct State {
    read_at: Option<Instant>,
    offset_ms: i64,
    last: i64,
}

impl FileOffsetClock {
    pub fn new(path: PathBuf) -> Self {
        Self {
            path,
            state: Mutex::new(State {
                read_at: None,
                offset_ms: 0,
                last: i64::MIN,
            }),
        }
    }

    /// The clock the environment asks for: this one when [`ENV`] is set.
    pub fn from_env() -> Option<Self> {
        std::env::var_os(ENV).map(|p| Self::new(PathBuf::from(p)))
    }
}

/// The offset in the file: a whole number of seconds; anything unreadable keeps the old one.
fn read_offset(path: &std::path::Path) -> Option<i64> {
    let text = std::fs::read_to_string(path).ok()?;
    text.trim().parse::<i64>().ok()?.checked_mul(1000)
}

impl Clock for FileOffsetClock {
    fn now_millis(&self) -> i64 {
        let real = SystemClock.now_millis();
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        let stale = state.read_at.is_none_or(|at| at.elapsed() >= REREAD);
        if stale {
            if let Some(offset) = read_offset(&self.path) {
                state.offset_ms = offset;
            }
            state.read_at = Some(Instant::now());
        }
        let now = real.saturating_add(state.offset_ms).max(state.last);
        state.last = now;
        now
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_file_shifts_the_clock_and_it_never_goes_back() {
        let dir = std::env::temp_dir().join(format!("elixir-clock-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("offset");
        std::fs::write(&file, "86400\n").unwrap();
        let clock = FileOffsetClock::new(file.clone());
        let real = SystemClock.now_millis();
        let shifted = clock.now_millis();
        assert!(shifted >= real + 86_400_000 && shifted < real + 86_400_000 + 60_000);
        // A smaller offset never moves it backwards.
        std::fs::write(&file, "0").unwrap();
        std::thread::park_timeout(Duration::from_millis(150));
        assert!(clock.now_millis() >= shifted);
        // Garbage keeps the last offset.
        std::fs::write(&file, "soon").unwrap();
        std::thread::park_timeout(Duration::from_millis(150));
        assert!(clock.now_millis() >= shifted);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
