//! Password hashing with argon2id (PHC strings at rest).

use argon2::{Argon2, PasswordHasher, PasswordVerifier};

/// Hashes `password` with a caller-supplied random salt; returns the PHC string.
pub fn hash(password: &str, salt: [u8; 16]) -> Result<String, String> {
    Argon2::default()
        .hash_password_with_salt(password.as_bytes(), &salt)
        .map(|h| h.to_string())
        .map_err(|e| e.to_string())
}

/// Whether `password` matches the PHC string `phc` (constant-time inside argon2).
pub fn verify(password: &str, phc: &str) -> bool {
    Argon2::default()
        .verify_password(password.as_bytes(), phc)
        .is_ok()
}

#[cfg(test)]
mod tests {
    #[test]
    fn hash_and_verify() {
        let phc = super::hash("correct horse", [7; 16]).unwrap();
        assert!(phc.starts_with("$argon2id$"));
        assert!(super::verify("correct horse", &phc));
        assert!(!super::verify("wrong horse", &phc));
    }
}
