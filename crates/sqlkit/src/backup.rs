//! Online backups of the embedded default: a consistent copy of a SQLite database taken while
//! servers write to it. SQLite's `VACUUM INTO` reads the database inside one read transaction
//! (a WAL reader never blocks writers, nor they it), so the copy is the database as of one
//! commit: every transaction wholly in or wholly out. The copy is written beside the target
//! under a `.partial` name and renamed into place only when complete, so an interrupted backup
//! never leaves a file that looks like one. PostgreSQL is backed up with its own tools
//! (`pg_dump`), which this refuses to imitate.

use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::time::{Duration, Instant};

use sqlx::sqlite::SqliteConnectOptions;
use sqlx::{ConnectOptions, Connection};

use crate::db::{Backend, backend_of};

/// Why a backup was not taken.
#[derive(Debug, thiserror::Error)]
pub enum BackupError {
    /// The database URL names PostgreSQL: `pg_dump` is the way.
    #[error(
        "backup copies the embedded SQLite database; for PostgreSQL use pg_dump (for example `pg_dump --format=custom --file=FILE \"$DATABASE_URL\"`, restored with pg_restore)"
    )]
    Postgres,
    /// An in-memory database has nothing on disk to copy.
    #[error("an in-memory SQLite database cannot be backed up")]
    Memory,
    /// The database file does not exist (a backup never creates one).
    #[error("no database at {0}")]
    Missing(PathBuf),
    /// The target exists already: a backup never overwrites a file.
    #[error("{0} exists already; choose a new file name (a backup never overwrites)")]
    TargetExists(PathBuf),
    /// The target's folder does not exist or is not writable.
    #[error("cannot write {path}: {reason}")]
    Target { path: PathBuf, reason: String },
    /// SQLite refused (locked past the busy timeout, disk full, corrupt source…).
    #[error("the copy failed: {0}")]
    Sqlite(String),
}

/// What a finished backup wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Backup {
    /// The file written.
    pub path: PathBuf,
    /// Its size in bytes.
    pub bytes: u64,
    /// How long the copy took.
    pub took: Duration,
}

/// Copies the SQLite database `url` (`sqlite://FILE`) to `to`, online. Waits up to
/// `busy_timeout` for a lock another process holds (a checkpoint, a `BEGIN EXCLUSIVE`).
pub async fn backup_sqlite(
    url: &str,
    to: &Path,
    busy_timeout: Duration,
) -> Result<Backup, BackupError> {
    if backend_of(url) == Backend::Postgres {
        return Err(BackupError::Postgres);
    }
    if url.contains(":memory:") || url.contains("mode=memory") {
        return Err(BackupError::Memory);
    }
    let options = SqliteConnectOptions::from_str(url)
        .map_err(|e| BackupError::Sqlite(e.to_string()))?
        .create_if_missing(false)
        .busy_timeout(busy_timeout);
    let source = options.get_filename().to_owned();
    if !source.exists() {
        return Err(BackupError::Missing(source));
    }
    if to.exists() {
        return Err(BackupError::TargetExists(to.to_owned()));
    }
    let partial = partial_path(to);
    // A partial file left by an interrupted earlier run is ours to replace.
    let _ = std::fs::remove_file(&partial);
    let started = Instant::now();
    let copied = async {
        let mut conn = options
            .connect()
            .await
            .map_err(|e| BackupError::Sqlite(e.to_string()))?;
        let target = partial.to_str().ok_or_else(|| BackupError::Target {
            path: to.to_owned(),
            reason: "the path is not valid UTF-8".to_owned(),
        })?;
        sqlx::query("VACUUM INTO ?")
            .bind(target)
            .execute(&mut conn)
            .await
            .map_err(|e| match e {
                sqlx::Error::Database(d) if d.message().contains("unable to open") => {
                    BackupError::Target {
                        path: to.to_owned(),
                        reason: d.message().to_owned(),
                    }
                }
                e => BackupError::Sqlite(e.to_string()),
            })?;
        conn.close()
            .await
            .map_err(|e| BackupError::Sqlite(e.to_string()))
    }
    .await;
    if let Err(e) = copied {
        let _ = std::fs::remove_file(&partial);
        return Err(e);
    }
    let synced = std::fs::File::open(&partial)
        .and_then(|f| f.sync_all())
        .and_then(|()| {
            if to.exists() {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::AlreadyExists,
                    "target appeared during the copy",
                ));
            }
            std::fs::rename(&partial, to)
        });
    if let Err(e) = synced {
        let _ = std::fs::remove_file(&partial);
        return Err(if e.kind() == std::io::ErrorKind::AlreadyExists {
            BackupError::TargetExists(to.to_owned())
        } else {
            BackupError::Target {
                path: to.to_owned(),
                reason: e.to_string(),
            }
        });
    }
    let bytes = std::fs::metadata(to).map(|m| m.len()).unwrap_or(0);
    Ok(Backup {
        path: to.to_owned(),
        bytes,
        took: started.elapsed(),
    })
}

impl std::fmt::Display for Backup {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "backed up to {} ({} bytes) in {} ms",
            self.path.display(),
            self.bytes,
            self.took.as_millis()
        )
    }
}

fn partial_path(to: &Path) -> PathBuf {
    let mut name = to.file_name().unwrap_or_default().to_os_string();
    name.push(".partial");
    to.with_file_name(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_partial_file_sits_beside_the_target() {
        assert_eq!(
            partial_path(Path::new("/backups/site.db")),
            PathBuf::from("/backups/site.db.partial")
        );
    }
}
