//! Latency statistics over one run's samples: a sorted `Vec` of microseconds is small enough
//! (a few hundred thousand entries) that a histogram crate would buy nothing.

use serde_json::{Value, json};

/// Percentiles of a set of latencies, in milliseconds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Latency {
    pub p50_ms: f64,
    pub p99_ms: f64,
    pub max_ms: f64,
    pub mean_ms: f64,
}

/// Nearest-rank percentile `p` (0–100) of sorted samples.
fn percentile(sorted: &[u32], p: f64) -> u32 {
    if sorted.is_empty() {
        return 0;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

impl Latency {
    /// Sorts `micros` in place and summarizes it.
    pub fn of(micros: &mut [u32]) -> Self {
        micros.sort_unstable();
        let ms = |us: u32| f64::from(us) / 1000.0;
        let mean = if micros.is_empty() {
            0.0
        } else {
            micros.iter().map(|&u| f64::from(u)).sum::<f64>() / micros.len() as f64 / 1000.0
        };
        Self {
            p50_ms: ms(percentile(micros, 50.0)),
            p99_ms: ms(percentile(micros, 99.0)),
            max_ms: ms(micros.last().copied().unwrap_or(0)),
            mean_ms: mean,
        }
    }

    pub fn to_json(self) -> Value {
        json!({"p50_ms": round(self.p50_ms), "p99_ms": round(self.p99_ms), "max_ms": round(self.max_ms), "mean_ms": round(self.mean_ms)})
    }
}

/// Three decimals, for readable JSON.
pub fn round(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_percentiles() {
        let mut v: Vec<u32> = (1..=100).rev().map(|i| i * 1000).collect();
        let l = Latency::of(&mut v);
        assert_eq!((l.p50_ms, l.p99_ms, l.max_ms), (50.0, 99.0, 100.0));
        assert!((l.mean_ms - 50.5).abs() < 1e-9);
        let mut one = vec![7000];
        assert_eq!(Latency::of(&mut one).p99_ms, 7.0);
        assert_eq!(Latency::of(&mut []).p50_ms, 0.0);
    }
}
