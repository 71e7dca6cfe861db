//! The raw-payload archive of the embedded default (SURFACE §7.5): every HTTP 200 body gzipped
//! into a local directory, addressed by its SHA-256 (`<root>/<first two hex>/<sha256>.json.gz`),
//! kept for the operator's retention (Elixir never deletes from it). Writes are atomic (a
//! temporary file renamed into place), so instances sharing the directory never see half a
//! file, and an existing address is not written again. An S3-compatible archive for
//! production is not built yet.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use flate2::Compression;
use flate2::read::GzDecoder;
use flate2::write::GzEncoder;

/// Distinguishes temporary files of concurrent writes within one process.
static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// A local directory of gzipped payloads.
#[derive(Debug, Clone)]
pub struct Archive {
    root: PathBuf,
}

/// Whether `sha` is 64 lower-case hex digits (and so safe as a file name).
fn is_sha256_hex(sha: &str) -> bool {
    sha.len() == 64
        && sha
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

impl Archive {
    pub fn new(root: impl Into<PathBuf>) -> Self {
        Self { root: root.into() }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Where the payload with this digest lives; `None` for anything but a SHA-256 hex digest.
    pub fn path_of(&self, sha: &str) -> Option<PathBuf> {
        is_sha256_hex(sha).then(|| self.root.join(&sha[..2]).join(format!("{sha}.json.gz")))
    }

    /// Stores `body` under `sha` unless it is already there; returns its path.
    pub async fn put(&self, sha: &str, body: &[u8]) -> std::io::Result<PathBuf> {
        let Some(path) = self.path_of(sha) else {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                format!("{sha:?} is not a SHA-256 digest"),
            ));
        };
        let body = body.to_vec();
        let target = path.clone();
        tokio::task::spawn_blocking(move || write_gzip(&target, &body))
            .await
            .map_err(std::io::Error::other)??;
        Ok(path)
    }

    /// The payload stored under `sha`, gunzipped; `None` when absent.
    pub async fn get(&self, sha: &str) -> std::io::Result<Option<Vec<u8>>> {
        let Some(path) = self.path_of(sha) else {
            return Ok(None);
        };
        tokio::task::spawn_blocking(move || {
            let file = match std::fs::File::open(&path) {
                Ok(f) => f,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
                Err(e) => return Err(e),
            };
            let mut out = Vec::new();
            GzDecoder::new(file).read_to_end(&mut out)?;
            Ok(Some(out))
        })
        .await
        .map_err(std::io::Error::other)?
    }
}

fn write_gzip(path: &Path, body: &[u8]) -> std::io::Result<()> {
    if path.exists() {
        return Ok(());
    }
    let dir = path
        .parent()
        .ok_or_else(|| std::io::Error::other("archive path without a directory"))?;
    std::fs::create_dir_all(dir)?;
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("payload");
    let temp = dir.join(format!(
        ".{name}.{}.{}.tmp",
        std::process::id(),
        TEMP_COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    let written = (|| {
        let file = std::fs::File::create(&temp)?;
        let mut encoder = GzEncoder::new(file, Compression::default());
        encoder.write_all(body)?;
        encoder.finish()?.sync_all()?;
        std::fs::rename(&temp, path)
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&temp);
    }
    written
}

#[cfg(test)]
mod tests {
    use super::*;

    const SHA: &str = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08";

    #[tokio::test]
    async fn payloads_round_trip_by_digest_and_are_written_once() {
        let dir = std::env::temp_dir().join(format!("elixir-archive-{}", uuid::Uuid::new_v4()));
        let archive = Archive::new(&dir);
        let path = archive.put(SHA, b"{\"items\":[]}").await.unwrap();
        assert_eq!(path, dir.join("9f").join(format!("{SHA}.json.gz")));
        // gzip on disk
        let raw = std::fs::read(&path).unwrap();
        assert_eq!(&raw[..2], &[0x1f, 0x8b]);
        assert_eq!(
            archive.get(SHA).await.unwrap().as_deref(),
            Some(&b"{\"items\":[]}"[..])
        );
        // the same address is not rewritten
        let before = std::fs::metadata(&path).unwrap().modified().unwrap();
        archive.put(SHA, b"other").await.unwrap();
        assert_eq!(
            std::fs::metadata(&path).unwrap().modified().unwrap(),
            before
        );
        assert_eq!(
            archive.get(SHA).await.unwrap().as_deref(),
            Some(&b"{\"items\":[]}"[..])
        );
        // no temporary file is left behind
        let leftovers = std::fs::read_dir(dir.join("9f")).unwrap().count();
        assert_eq!(leftovers, 1);
        assert_eq!(archive.get(&"0".repeat(64)).await.unwrap(), None);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[tokio::test]
    async fn only_digests_are_addresses() {
        let archive = Archive::new("/nonexistent");
        assert!(archive.path_of("../etc/passwd").is_none());
        assert!(archive.path_of(&SHA.to_uppercase()).is_none());
        assert!(archive.put("abc", b"x").await.is_err());
        assert_eq!(archive.get("../x").await.unwrap(), None);
    }
}
