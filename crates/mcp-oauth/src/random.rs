//! Randomness, injected like the clock so tests can make it predictable: the source of every
//! token, code and id this crate mints.

use crate::crypto::b64url;

/// The platform's injected randomness, under the name this crate has always used.
pub use mcp_door::{OsRandom, Random as RandomSource};

/// `n` random bytes as base64url (no padding).
pub(crate) fn token(random: &dyn RandomSource, n: usize) -> String {
    let mut buf = vec![0u8; n];
    random.fill(&mut buf);
    b64url(&buf)
}

/// A uniformly random decimal code of `digits` digits (rejection sampling, no modulo bias).
pub(crate) fn digits(random: &dyn RandomSource, digits: u32) -> String {
    let range = 10u64.pow(digits);
    let limit = u64::MAX - (u64::MAX % range);
    loop {
        let mut buf = [0u8; 8];
        random.fill(&mut buf);
        let n = u64::from_le_bytes(buf);
        if n < limit {
            return format!("{:0width$}", n % range, width = digits as usize);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes() {
        assert_eq!(token(&OsRandom, 32).len(), 43);
        assert_eq!(token(&OsRandom, 18).len(), 24);
        let code = digits(&OsRandom, 6);
        assert_eq!(code.len(), 6);
        assert!(code.bytes().all(|b| b.is_ascii_digit()));
    }
}
