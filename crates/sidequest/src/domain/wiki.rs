//! The private campaign wiki of a GM: Markdown pages by slug, versioned, written with optimistic
//! concurrency, searchable. Reachable only with author credentials; never from the player door.

use serde::Deserialize;

use crate::domain::Millis;
use crate::domain::fields::{FieldErrors, is_slug};

pub const TITLE_CHARS: usize = 200;
pub const BODY_CHARS: usize = 100_000;
pub const QUERY_CHARS: usize = 200;
pub const SEARCH_HITS: usize = 20;

/// One wiki page (its JSON is `render::wiki_page`'s).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WikiPage {
    pub slug: String,
    pub title: String,
    pub body: String,
    /// 1 for a new page, +1 per write.
    pub version: i64,
    pub updated_at: Millis,
}

/// A write: create with `expected_version` 0, update with the version read.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WikiWrite {
    pub slug: String,
    pub title: String,
    pub body: String,
    pub expected_version: i64,
}

impl WikiWrite {
    pub fn validate(&self) -> Result<(), FieldErrors> {
        let mut e = FieldErrors::new();
        if !is_slug(&self.slug) {
            e.add(
                "slug",
                "must be 1–64 characters of a-z, 0-9, '_' or '-', starting with a letter or digit",
            );
        }
        e.text("title", &self.title, 1, TITLE_CHARS);
        e.text("body", &self.body, 0, BODY_CHARS);
        if self.expected_version < 0 {
            e.add(
                "expected_version",
                "must be 0 (create) or the version you read",
            );
        }
        e.into_result()
    }
}

/// The outcome of a wiki write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WikiWriteOutcome {
    Written(WikiPage),
    /// The page is at `current` (0: it does not exist), not at the expected version.
    Conflict {
        current: i64,
    },
}

/// Search hits: pages whose title or body contains `query` (case-insensitive), best first
/// (title matches before body matches, then most recently updated), at most [`SEARCH_HITS`].
pub fn search(pages: &[WikiPage], query: &str) -> Vec<(WikiPage, String)> {
    let q = query.to_lowercase();
    let mut hits: Vec<(bool, &WikiPage)> = pages
        .iter()
        .filter_map(|p| {
            let in_title = p.title.to_lowercase().contains(&q);
            (in_title || p.body.to_lowercase().contains(&q)).then_some((in_title, p))
        })
        .collect();
    hits.sort_by(|a, b| {
        b.0.cmp(&a.0)
            .then(b.1.updated_at.cmp(&a.1.updated_at))
            .then(a.1.slug.cmp(&b.1.slug))
    });
    hits.into_iter()
        .take(SEARCH_HITS)
        .map(|(_, p)| {
            (
                p.clone(),
                crate::domain::text::excerpt(&p.body, query, 240).0,
            )
        })
        .collect()
}
