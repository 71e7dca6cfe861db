//! The documentation content, embedded: one table of `include_str!`s over `content/` (pages,
//! examples, changelog, updates), parsed once into the structures the Help tools, the
//! `elixir://` resources and the prompts all serve. The `tools-<group>` pages are the
//! hand-written intro of their file followed by one generated H2 section per tool of the
//! group, rendered from the registry, so a declaration and its documentation cannot drift.

use serde_json::{Value, json};

use crate::domain::{Semver, slugify};

/// Every documentation page: `(slug, markdown)`, in index order.
pub const PAGES: &[(&str, &str)] = &[
    ("quickstart", include_str!("../content/docs/quickstart.md")),
    ("protocol", include_str!("../content/docs/protocol.md")),
    ("tools", include_str!("../content/docs/tools.md")),
    (
        "tools-account",
        include_str!("../content/docs/tools-account.md"),
    ),
    (
        "tools-players",
        include_str!("../content/docs/tools-players.md"),
    ),
    (
        "tools-battles",
        include_str!("../content/docs/tools-battles.md"),
    ),
    (
        "tools-cards",
        include_str!("../content/docs/tools-cards.md"),
    ),
    (
        "tools-clans",
        include_str!("../content/docs/tools-clans.md"),
    ),
    ("tools-war", include_str!("../content/docs/tools-war.md")),
    (
        "tools-rankings",
        include_str!("../content/docs/tools-rankings.md"),
    ),
    (
        "tools-collections",
        include_str!("../content/docs/tools-collections.md"),
    ),
    ("tools-live", include_str!("../content/docs/tools-live.md")),
    (
        "tools-timeline",
        include_str!("../content/docs/tools-timeline.md"),
    ),
    (
        "tools-service",
        include_str!("../content/docs/tools-service.md"),
    ),
    ("tools-help", include_str!("../content/docs/tools-help.md")),
    ("responses", include_str!("../content/docs/responses.md")),
    ("limits", include_str!("../content/docs/limits.md")),
    ("clocks", include_str!("../content/docs/clocks.md")),
    (
        "choosing-a-tool",
        include_str!("../content/docs/choosing-a-tool.md"),
    ),
    ("agents", include_str!("../content/docs/agents.md")),
    (
        "connections",
        include_str!("../content/docs/connections.md"),
    ),
    ("recording", include_str!("../content/docs/recording.md")),
    (
        "methodology",
        include_str!("../content/docs/methodology.md"),
    ),
    ("glossary", include_str!("../content/docs/glossary.md")),
    ("privacy", include_str!("../content/docs/privacy.md")),
];

/// One worked example: the question and tools are the contract's (SURFACE §8.2); the outline
/// is the body of its Markdown file.
#[derive(Debug, Clone, Copy)]
pub struct ExampleSource {
    pub slug: &'static str,
    pub title: &'static str,
    pub question: &'static str,
    pub tools: &'static [&'static str],
    pub markdown: &'static str,
}

/// The eleven examples of SURFACE §8.2. An example whose tools are not built yet lists none,
/// says so in a `> Coming:` passage, and is not offered as a prompt; the others are prompts.
pub const EXAMPLES: &[ExampleSource] = &[
    ExampleSource {
        slug: "play",
        title: "Understand your own play",
        question: "How has my play gone this month, and which deck carries me?",
        tools: &["players_timeline", "battles_decks", "battles_performance"],
        markdown: include_str!("../content/examples/play.md"),
    },
    ExampleSource {
        slug: "deck",
        title: "Pick your next deck",
        question: "What wins in our clan this season, and how do my decks compare?",
        tools: &["battles_meta_decks", "battles_decks"],
        markdown: include_str!("../content/examples/deck.md"),
    },
    ExampleSource {
        slug: "ladder",
        title: "Push with evidence",
        question: "Am I in form to push Path of Legend tonight?",
        tools: &["players_profile", "players_timeline", "battles_performance"],
        markdown: include_str!("../content/examples/ladder.md"),
    },
    ExampleSource {
        slug: "friends",
        title: "Follow your friends (coming)",
        question: "What have my friends done since I last looked?",
        tools: &[],
        markdown: include_str!("../content/examples/friends.md"),
    },
    ExampleSource {
        slug: "clan",
        title: "Win your river race (coming)",
        question: "Where do we stand this week, and who still has decks today?",
        tools: &[],
        markdown: include_str!("../content/examples/clan.md"),
    },
    ExampleSource {
        slug: "roster",
        title: "Keep the roster healthy (coming)",
        question: "Who has gone quiet or skipped war, and who carries us?",
        tools: &[],
        markdown: include_str!("../content/examples/roster.md"),
    },
    ExampleSource {
        slug: "scout",
        title: "Scout the other clan (coming)",
        question: "How strong are the clans we face this week?",
        tools: &[],
        markdown: include_str!("../content/examples/scout.md"),
    },
    ExampleSource {
        slug: "recap",
        title: "Write the weekly recap (coming)",
        question: "Write last war week's recap for the clan.",
        tools: &[],
        markdown: include_str!("../content/examples/recap.md"),
    },
    ExampleSource {
        slug: "discord",
        title: "Answer your clanmates",
        question: "A clanmate asks how Elixir counts win rate; answer from the docs.",
        tools: &["elixir_docs"],
        markdown: include_str!("../content/examples/discord.md"),
    },
    ExampleSource {
        slug: "publish",
        title: "Publish your own stats (coming)",
        question: "How do we show our war record on the clan's site?",
        tools: &[],
        markdown: include_str!("../content/examples/publish.md"),
    },
    ExampleSource {
        slug: "coverage",
        title: "Check what is recorded",
        question: "How complete is Elixir's record of me and my clan?",
        tools: &["elixir_coverage", "elixir_data_insights", "elixir_docs"],
        markdown: include_str!("../content/examples/coverage.md"),
    },
];

/// The changelog (`[{version, date, summary, tools_added?, tools_removed?, breaking?}]`).
pub const CHANGELOG_JSON: &str = include_str!("../content/changelog.json");
/// Product news (`[{date, title, markdown, tools[]}]`).
pub const UPDATES_JSON: &str = include_str!("../content/updates.json");

/// One H2 section of a page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Section {
    pub slug: String,
    pub title: String,
    /// From the `## ` line to the next H2.
    pub markdown: String,
}

/// One page: its H1, summary (first paragraph), full Markdown and H2 sections.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Page {
    pub slug: String,
    pub title: String,
    pub summary: String,
    pub markdown: String,
    pub sections: Vec<Section>,
}

impl Page {
    /// Parses a page: the H1 is the title; lines starting `## ` outside code fences open a
    /// section.
    pub fn parse(slug: &str, markdown: &str) -> Page {
        let mut title = slug.to_owned();
        let mut summary = String::new();
        let mut sections: Vec<Section> = Vec::new();
        let mut fenced = false;
        let mut in_intro = true;
        let mut paragraph_done = false;
        for line in markdown.lines() {
            if line.trim_start().starts_with("```") {
                fenced = !fenced;
            }
            if !fenced && let Some(h1) = line.strip_prefix("# ") {
                if title == slug {
                    title = h1.trim().to_owned();
                }
                continue;
            }
            if !fenced && let Some(h2) = line.strip_prefix("## ") {
                in_intro = false;
                sections.push(Section {
                    slug: slugify(h2),
                    title: h2.trim().to_owned(),
                    markdown: String::new(),
                });
            }
            if let Some(section) = sections.last_mut() {
                section.markdown.push_str(line);
                section.markdown.push('\n');
            } else if in_intro && !paragraph_done {
                let text = line.trim();
                if text.is_empty() || text.starts_with("<!--") {
                    paragraph_done = !summary.is_empty();
                } else {
                    if !summary.is_empty() {
                        summary.push(' ');
                    }
                    summary.push_str(text);
                }
            }
        }
        for s in &mut sections {
            s.markdown = s.markdown.trim_end().to_owned();
        }
        Page {
            slug: slug.to_owned(),
            title,
            summary: first_sentences(&summary, 300),
            markdown: markdown.trim_end().to_owned(),
            sections,
        }
    }

    pub fn section(&self, slug: &str) -> Option<&Section> {
        self.sections.iter().find(|s| s.slug == slug)
    }

    /// `{slug, title, summary, sections[]}` for the index.
    pub fn index_entry(&self) -> Value {
        json!({
            "slug": self.slug,
            "title": self.title,
            "summary": self.summary,
            "sections": self.sections.iter().map(|s| json!({"slug": s.slug, "title": s.title})).collect::<Vec<_>>(),
        })
    }
}

/// Up to `max` characters of `text`, cut after a sentence when possible.
fn first_sentences(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let cut: String = text.chars().take(max).collect();
    match cut.rfind(". ") {
        Some(i) => cut[..=i].to_owned(),
        None => format!("{}…", cut.trim_end()),
    }
}

/// A generated section to append to a page (the per-tool sections of `tools-<group>`).
#[derive(Debug, Clone)]
pub struct Generated {
    pub page: String,
    pub heading: String,
    pub body: String,
}

/// A search hit.
#[derive(Debug, Clone, PartialEq)]
pub struct Match {
    pub page: String,
    pub section: String,
    pub title: String,
    pub snippet: String,
    score: usize,
}

impl Match {
    pub fn to_json(&self) -> Value {
        json!({"page": self.page, "section": self.section, "title": self.title, "snippet": self.snippet})
    }
}

/// One worked example, parsed.
#[derive(Debug, Clone)]
pub struct Example {
    pub slug: String,
    pub title: String,
    pub question: String,
    pub tools: Vec<String>,
    /// The example's Markdown without its H1.
    pub outline: String,
    pub markdown: String,
}

impl Example {
    pub fn to_json(&self) -> Value {
        json!({"slug": self.slug, "title": self.title, "question": self.question, "tools": self.tools, "outline": self.outline})
    }
}

/// Everything the Help surface serves, parsed once at start-up.
#[derive(Debug, Clone)]
pub struct Content {
    pub pages: Vec<Page>,
    pub examples: Vec<Example>,
    /// Newest first.
    pub changelog: Vec<Value>,
    /// Newest first.
    pub updates: Vec<Value>,
}

impl Content {
    /// Parses the embedded files and merges `generated` sections into their pages.
    pub fn load(generated: &[Generated]) -> Result<Content, String> {
        Content::from_sources(PAGES, EXAMPLES, CHANGELOG_JSON, UPDATES_JSON, generated)
    }

    /// [`Content::load`] over any sources (tests use large or broken ones).
    pub fn from_sources(
        pages: &[(&str, &str)],
        examples: &[ExampleSource],
        changelog: &str,
        updates: &str,
        generated: &[Generated],
    ) -> Result<Content, String> {
        let pages = pages
            .iter()
            .map(|(slug, text)| {
                let mut text = (*text).trim_end().to_owned();
                for g in generated.iter().filter(|g| g.page == *slug) {
                    text.push_str(&format!("\n\n## {}\n\n{}", g.heading, g.body.trim_end()));
                }
                Page::parse(slug, &text)
            })
            .collect();
        let examples = examples
            .iter()
            .map(|e| {
                let outline = e
                    .markdown
                    .lines()
                    .skip_while(|l| !l.starts_with("# "))
                    .skip(1)
                    .collect::<Vec<_>>()
                    .join("\n")
                    .trim()
                    .to_owned();
                Example {
                    slug: e.slug.to_owned(),
                    title: e.title.to_owned(),
                    question: e.question.to_owned(),
                    tools: e.tools.iter().map(|t| (*t).to_owned()).collect(),
                    outline,
                    markdown: e.markdown.trim_end().to_owned(),
                }
            })
            .collect();
        let mut changelog = entries(changelog, &["entries", "releases", "changelog"])
            .map_err(|e| format!("changelog.json: {e}"))?;
        for entry in &changelog {
            let version = entry.get("version").and_then(Value::as_str).unwrap_or("");
            if Semver::parse(version).is_none() {
                return Err(format!("changelog.json: version {version:?} is not semver"));
            }
        }
        changelog.sort_by_key(|e| {
            std::cmp::Reverse(
                e.get("version")
                    .and_then(Value::as_str)
                    .and_then(Semver::parse),
            )
        });
        let mut updates =
            entries(updates, &["updates", "entries"]).map_err(|e| format!("updates.json: {e}"))?;
        updates.sort_by(|a, b| {
            let date = |v: &Value| {
                v.get("date")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_owned()
            };
            date(b).cmp(&date(a))
        });
        Ok(Content {
            pages,
            examples,
            changelog,
            updates,
        })
    }

    pub fn page(&self, slug: &str) -> Option<&Page> {
        self.pages.iter().find(|p| p.slug == slug)
    }

    pub fn example(&self, slug: &str) -> Option<&Example> {
        self.examples.iter().find(|e| e.slug == slug)
    }

    /// Whether a `docs` pointer (`page` or `page#section`) reaches an existing page and H2.
    pub fn resolves(&self, pointer: &str) -> bool {
        let (page, section) = match pointer.split_once('#') {
            Some((p, s)) => (p, Some(s)),
            None => (pointer, None),
        };
        self.page(page)
            .is_some_and(|p| section.is_none_or(|s| p.section(s).is_some()))
    }

    /// Sections containing every word of `query` (case-insensitive), best first.
    pub fn search(&self, query: &str, limit: usize) -> Vec<Match> {
        let words: Vec<String> = query
            .split(|c: char| !c.is_alphanumeric() && c != '_')
            .filter(|w| !w.is_empty())
            .map(str::to_lowercase)
            .collect();
        if words.is_empty() {
            return Vec::new();
        }
        let mut hits = Vec::new();
        for page in &self.pages {
            for section in &page.sections {
                let lower = section.markdown.to_lowercase();
                if !words.iter().all(|w| lower.contains(w.as_str())) {
                    continue;
                }
                let mut score: usize = words
                    .iter()
                    .map(|w| lower.matches(w.as_str()).count())
                    .sum();
                let title = section.title.to_lowercase();
                score += 10 * words.iter().filter(|w| title.contains(w.as_str())).count();
                hits.push(Match {
                    page: page.slug.clone(),
                    section: section.slug.clone(),
                    title: format!("{} · {}", page.title, section.title),
                    snippet: snippet(&section.markdown, &lower, &words[0]),
                    score,
                });
            }
        }
        hits.sort_by(|a, b| b.score.cmp(&a.score).then_with(|| a.page.cmp(&b.page)));
        hits.truncate(limit);
        hits
    }
}

/// The entries of a JSON document that is either an array or an object holding one under one
/// of `keys`.
fn entries(text: &str, keys: &[&str]) -> Result<Vec<Value>, String> {
    let value: Value = serde_json::from_str(text).map_err(|e| e.to_string())?;
    match value {
        Value::Array(a) => Ok(a),
        Value::Object(o) => keys
            .iter()
            .find_map(|k| o.get(*k).and_then(Value::as_array).cloned())
            .ok_or_else(|| format!("expected an array or an object with one of {keys:?}")),
        _ => Err("expected an array".into()),
    }
}

/// About 200 characters around the first occurrence of `word`, on char boundaries.
fn snippet(text: &str, lower: &str, word: &str) -> String {
    let at = lower.find(word).unwrap_or(0);
    // `lower` may differ in byte length from `text` for non-ASCII; map through char counts.
    let char_at = lower[..at].chars().count();
    let chars: Vec<char> = text.chars().collect();
    let start = char_at.saturating_sub(80);
    let end = (char_at + 120).min(chars.len());
    let mut out: String = chars[start..end].iter().collect();
    out = out.split_whitespace().collect::<Vec<_>>().join(" ");
    if start > 0 {
        out.insert(0, '…');
    }
    if end < chars.len() {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_split_on_h2_outside_fences() {
        let page = Page::parse(
            "x",
            "# Title\n\nFirst para\ncontinues.\n\nSecond.\n\n## One thing\n\ntext\n```\n## not a heading\n```\n## Two\nmore\n",
        );
        assert_eq!(page.title, "Title");
        assert_eq!(page.summary, "First para continues.");
        let slugs: Vec<&str> = page.sections.iter().map(|s| s.slug.as_str()).collect();
        assert_eq!(slugs, ["one-thing", "two"]);
        assert!(page.sections[0].markdown.contains("## not a heading"));
        assert!(page.sections[0].markdown.starts_with("## One thing"));
    }

    #[test]
    fn embedded_content_parses_and_has_the_contract_pages() {
        let content = Content::load(&[]).unwrap();
        assert_eq!(content.pages.len(), 25);
        assert_eq!(content.examples.len(), 11);
        for (page, section) in [
            ("quickstart", "troubleshooting"),
            ("limits", "hourly-rate"),
            ("limits", "result-cap"),
            ("responses", "error-codes"),
            ("protocol", "scopes"),
        ] {
            assert!(
                content.resolves(&format!("{page}#{section}")),
                "{page}#{section}"
            );
        }
        assert!(!content.changelog.is_empty());
    }

    #[test]
    fn generated_sections_are_appended_and_searchable() {
        let generated = [Generated {
            page: "tools-help".into(),
            heading: "elixir_docs".into(),
            body: "Serves the zyxwvut documentation.".into(),
        }];
        let content = Content::load(&generated).unwrap();
        assert!(content.resolves("tools-help#elixir-docs"));
        let hits = content.search("ZYXWVUT", 5);
        assert_eq!(hits.len(), 1);
        assert_eq!(hits[0].section, "elixir-docs");
        assert!(hits[0].snippet.contains("zyxwvut"));
    }
}
