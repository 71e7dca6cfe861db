//! Randomness, injected like the clock so tests can make tokens, codes and ids predictable. The
//! one trait every product and the authorization server take.

use uuid::Uuid;

/// Fills buffers with cryptographically secure random bytes.
pub trait Random: Send + Sync + 'static {
    fn fill(&self, buf: &mut [u8]);

    /// A version-4 UUID from this source.
    fn uuid(&self) -> Uuid {
        let mut b = [0u8; 16];
        self.fill(&mut b);
        uuid::Builder::from_random_bytes(b).into_uuid()
    }
}

/// The operating system's CSPRNG for secrets (tokens, codes, keys: [`Random::fill`]), and for
/// ids ([`Random::uuid`]) the thread-local CSPRNG that `uuid`'s own `new_v4` draws from
/// (ChaCha, seeded and reseeded from the operating system), as the door's request ids do: an id
/// needs to be unguessable and unique, not fresh from the kernel, and each `getrandom` is a
/// system call on the request path (a turn mints two consequence ids).
#[derive(Debug, Default, Clone, Copy)]
pub struct OsRandom;

impl Random for OsRandom {
    fn fill(&self, buf: &mut [u8]) {
        if let Err(e) = getrandom::fill(buf) {
            // Without entropy no secret may be minted; refusing to continue is the only safe
            // answer (a weak token is worse than no server).
            tracing::error!(error = %e, "the operating system's random source failed");
            std::process::abort();
        }
    }

    fn uuid(&self) -> Uuid {
        Uuid::new_v4()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn os_random_fills_and_mints_v4_uuids() {
        let mut a = [0u8; 32];
        let mut b = [0u8; 32];
        OsRandom.fill(&mut a);
        OsRandom.fill(&mut b);
        assert_ne!(a, b);
        assert_eq!(OsRandom.uuid().get_version_num(), 4);
        assert_ne!(OsRandom.uuid(), OsRandom.uuid());
    }

    /// A source that is not the operating system's still makes the ids from its own bytes, so
    /// a test's injected randomness decides them.
    #[test]
    fn an_injected_source_decides_its_uuids() {
        struct Sevens;
        impl Random for Sevens {
            fn fill(&self, buf: &mut [u8]) {
                buf.fill(7);
            }
        }
        assert_eq!(Sevens.uuid(), Sevens.uuid());
        assert_eq!(Sevens.uuid().get_version_num(), 4);
    }
}
