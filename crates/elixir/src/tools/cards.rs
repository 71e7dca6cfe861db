//! The Cards group (SURFACE §2.5): `cards_catalog`, the card catalogue as Elixir last read it
//! from the API's `/cards`, filtered and sized; and the same body, unfiltered and full, for the
//! `elixir://cards` resource. Before the first read every measured field is null, never `[]`
//! (§3.3), with a note saying so. The catalogue rules are `crate::cards`'.

use std::future::Future;
use std::sync::{Arc, Mutex, PoisonError};

use serde_json::{Map, Value, json};
use uuid::Uuid;

use crate::access::kinds::Kind;
use crate::access::metering::CatalogueStamp;
use crate::domain::{Millis, iso};
use crate::mcp::args;
use crate::mcp::call::{self, ErrorCode, Fail, Outcome, Success, ToolCtx, ToolError, handler};
use crate::mcp::spec::{Flag, Group, Param, SCOPE_READ, ToolSpec};
use crate::model::StoredCatalogue;
use crate::services::Services;
use crate::store::StoreError;
use elixir_record::cards::{Card, CardKind, Filter, Rarity};

/// The tool's `docs` pointer.
pub const DOCS: &str = "tools-cards#cards-catalog";
/// Where an answer before the first read points: what is polled, and when.
pub const NEVER_READ_DOCS: &str = "recording#what-is-polled";
/// The note of an answer before the first read.
pub const NEVER_READ_NOTE: &str = "The card catalogue has not been read from the game's API yet, so every field is null; Elixir reads it daily after 10:00 UTC.";
/// A catalogue older than this gets a note: the daily read has been failing.
pub const STALE_AFTER_MS: Millis = 48 * 3_600_000;
/// Most `ids` per call.
pub const MAX_IDS: u64 = 120;

pub fn specs() -> Vec<ToolSpec> {
    vec![catalog()]
}

fn card_schema(description: &str) -> Value {
    json!({
        "type": ["array", "null"],
        "description": description,
        "items": {
            "type": "object",
            "required": ["id", "name", "rarity", "kind", "elixir", "forms"],
            "properties": {
                "id": {"type": "integer"},
                "name": {"type": "string"},
                "rarity": {"enum": Rarity::ALL.map(Rarity::as_str)},
                "kind": {"enum": CardKind::ALL.map(CardKind::as_str)},
                "elixir": {"type": ["integer", "null"]},
                "max_level": {"type": "integer"},
                "forms": {
                    "type": "object",
                    "required": ["evolution", "hero"],
                    "properties": {"evolution": {"type": "boolean"}, "hero": {"type": "boolean"}},
                },
                "icon_urls": {"type": "object", "additionalProperties": {"type": "string"}},
            },
        },
    })
}

pub fn catalog() -> ToolSpec {
    ToolSpec {
        name: "cards_catalog",
        group: Group::Cards,
        title: "Card catalogue",
        description: "Reference tool: the card catalogue as Elixir last read it from the game's API (daily after 10:00 UTC): every card with id, name, rarity, kind, elixir cost (null for Mirror), in-game max_level and evolution and hero forms, and the tower troops apart. ids, query (part of a name), rarity and kind narrow it; none returns everything. An unknown id is not_found with candidates. Before the first read the lists are null.".into(),
        scope: SCOPE_READ,
        kinds: Kind::ALL.to_vec(),
        flags: vec![Flag::V],
        params: vec![
            Param::new(
                "ids",
                args::int_array(
                    "Card or tower-troop ids to return (1-120); an unknown id is not_found.",
                    1,
                    MAX_IDS,
                    1,
                    999_999_999,
                ),
            ),
            Param::new(
                "query",
                args::string("Part of a card name, any case (1-40 characters).", 1, 40),
            ),
            Param::new(
                "rarity",
                args::choice(
                    "Only cards of this rarity.",
                    &Rarity::ALL.map(Rarity::as_str),
                    None,
                ),
            ),
            Param::new(
                "kind",
                args::choice(
                    "Only this kind; tower_troop keeps only tower_troops.",
                    &CardKind::ALL.map(CardKind::as_str),
                    None,
                ),
            ),
        ],
        compact_drops: Some("icon_urls and max_level"),
        output: vec![
            (
                "cards",
                card_schema("{id, name, rarity, kind, elixir?, max_level, forms {evolution, hero}, icon_urls} by id; null before the first read."),
                true,
            ),
            (
                "tower_troops",
                card_schema("The tower troops, shaped as cards (kind tower_troop); null before the first read."),
                true,
            ),
            (
                "total",
                json!({"type": ["integer", "null"], "description": "Entries returned in cards and tower_troops together; null before the first read."}),
                true,
            ),
            (
                "observed_at",
                json!({"type": ["string", "null"], "description": "When the catalogue was read from the API; null before the first read."}),
                true,
            ),
        ],
        docs: DOCS.into(),
        too_large_hint: "cards_catalog({\"verbosity\": \"compact\"}) drops icon_urls and max_level; rarity, kind, query or ids narrow the list.".into(),
        handler: {
            // One holder per registry, so every server keeps its own.
            let cache = Arc::new(CatalogueCache::default());
            handler(move |ctx, a| catalog_call(ctx, a, Arc::clone(&cache)))
        },
    }
}

/// The filter the arguments ask for. The door has checked them against the schema; an enum
/// value it let through but the catalogue does not know is still refused, never ignored.
fn filter(a: &Map<String, Value>) -> Result<Filter, Fail> {
    let rarity = match args::text(a, "rarity") {
        Some(t) => Some(Rarity::parse(t).ok_or_else(|| {
            call::bad_request(
                format!("rarity {t:?} is not one of common, rare, epic, legendary, champion."),
                "cards_catalog({\"rarity\": \"epic\"})",
            )
        })?),
        None => None,
    };
    let kind = match args::text(a, "kind") {
        Some(t) => Some(CardKind::parse(t).ok_or_else(|| {
            call::bad_request(
                format!("kind {t:?} is not one of troop, building, spell, tower_troop."),
                "cards_catalog({\"kind\": \"spell\"})",
            )
        })?),
        None => None,
    };
    Ok(Filter {
        ids: args::ints(a, "ids"),
        query: args::text(a, "query").map(str::to_owned),
        rarity,
        kind,
    })
}

async fn catalog_call(ctx: ToolCtx, a: Map<String, Value>, cache: Arc<CatalogueCache>) -> Outcome {
    let filter = filter(&a)?;
    let verbosity = args::verbosity(&a);
    let now = ctx.services.now();
    let store = &ctx.services.store;
    let stored = cache.get(ctx.catalogue, || store.cards_catalogue()).await?;
    let answer = answer(stored.as_deref(), &filter, verbosity == "compact", now)?;
    Ok(answer.applied("verbosity", json!(verbosity)))
}

/// The parsed catalogue kept in process, served while it is the one the database holds: the
/// gate's metering statement reads the stored catalogue's `observed_at` on every call
/// ([`CatalogueStamp`]), so a call whose stamp matches the held copy costs no round trip of
/// its own, and the first call after the daily read lands (on this instance or any other)
/// sees a new stamp and loads the new catalogue once. A stamp saying nothing is stored yet
/// answers without a read; a call without a stamp (the counters failed open) reads the store.
#[derive(Debug, Default)]
pub struct CatalogueCache {
    held: Mutex<Option<Arc<StoredCatalogue>>>,
}

impl CatalogueCache {
    /// The catalogue stamped `stamp`: the held copy when it is that one, nothing when nothing
    /// is stored, otherwise what `load` reads (kept unless the held copy is newer).
    pub async fn get<F, Fut>(
        &self,
        stamp: Option<CatalogueStamp>,
        load: F,
    ) -> Result<Option<Arc<StoredCatalogue>>, StoreError>
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<Option<StoredCatalogue>, StoreError>>,
    {
        match stamp {
            Some(CatalogueStamp(None)) => return Ok(None),
            Some(CatalogueStamp(Some(at))) => {
                if let Some(held) = self.held().filter(|c| c.observed_at == at) {
                    return Ok(Some(held));
                }
            }
            None => {}
        }
        let loaded = load().await?.map(Arc::new);
        if let Some(c) = &loaded {
            let mut held = self.held.lock().unwrap_or_else(PoisonError::into_inner);
            if held.as_ref().is_none_or(|h| h.observed_at <= c.observed_at) {
                *held = Some(Arc::clone(c));
            }
        }
        Ok(loaded)
    }

    fn held(&self) -> Option<Arc<StoredCatalogue>> {
        self.held
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

/// One entry at the asked size: compact drops `icon_urls` and `max_level`.
fn card_json(card: &Card, compact: bool) -> Value {
    let mut v = json!({
        "id": card.id,
        "name": card.name,
        "rarity": card.rarity.as_str(),
        "kind": card.kind.as_str(),
        "elixir": card.elixir,
        "forms": {"evolution": card.forms.evolution, "hero": card.forms.hero},
    });
    if !compact {
        v["max_level"] = json!(card.max_level);
        v["icon_urls"] = json!(card.icon_urls);
    }
    v
}

/// The catalogue answer without `applied`: the tool's fields, notes and the data keys of
/// `meta`. `stored` is `None` before the first read.
pub fn answer(
    stored: Option<&StoredCatalogue>,
    filter: &Filter,
    compact: bool,
    now: Millis,
) -> Result<Success, Fail> {
    let Some(stored) = stored else {
        // Unmeasured is null, never [] (§3.3): nothing says which cards exist yet.
        return Ok(Success::new()
            .field("cards", Value::Null)
            .field("tower_troops", Value::Null)
            .field("total", Value::Null)
            .field("observed_at", Value::Null)
            .meta("freshness_seconds", Value::Null)
            .meta(
                "source_polls",
                json!({"cards": {"observed_at": null, "freshness_seconds": null}}),
            )
            .note(NEVER_READ_NOTE)
            .docs(NEVER_READ_DOCS));
    };
    let catalogue = &stored.catalogue;
    if let Some(ids) = &filter.ids {
        let unknown = catalogue.unknown_ids(ids);
        if !unknown.is_empty() {
            let listed: Vec<String> = unknown.iter().map(i64::to_string).collect();
            let candidates = catalogue
                .candidates(&unknown, 5)
                .into_iter()
                .map(|c| json!({"id": c.id, "name": c.name}))
                .collect();
            return Err(Fail::Tool(
                ToolError::new(
                    ErrorCode::NotFound,
                    format!("The card catalogue has no id {}.", listed.join(", ")),
                    "cards_catalog({\"query\": \"<part of the name>\"}) finds a card's id by name.",
                )
                .with_candidates(candidates),
            ));
        }
    }
    let selection = catalogue.select(filter);
    let observed_at = iso(stored.observed_at);
    let age_ms = (now - stored.observed_at).max(0);
    let freshness = age_ms / 1000;
    let mut out = Success::new()
        .field(
            "cards",
            Value::Array(
                selection
                    .cards
                    .iter()
                    .map(|c| card_json(c, compact))
                    .collect(),
            ),
        )
        .field(
            "tower_troops",
            Value::Array(
                selection
                    .tower_troops
                    .iter()
                    .map(|c| card_json(c, compact))
                    .collect(),
            ),
        )
        .field("total", json!(selection.total()))
        .field("observed_at", json!(observed_at))
        .meta("freshness_seconds", json!(freshness))
        .meta(
            "source_polls",
            json!({"cards": {"observed_at": observed_at, "freshness_seconds": freshness}}),
        );
    if selection.total() == 0 {
        out = out.note(
            "No card or tower troop matches these filters; leave them out for the whole catalogue.",
        );
    }
    if age_ms > STALE_AFTER_MS {
        out = out.note(format!(
            "The catalogue was last read {} days ago; the daily read has not succeeded since, so the newest cards may be missing.",
            age_ms / (24 * 3_600_000)
        ));
    }
    Ok(out)
}

/// The `elixir://cards` body: the unfiltered, full-size `cards_catalog` body, with the `meta`
/// of a call that spends no quota (the fixed keys and the data keys, no `quota`).
pub async fn resource_body(services: &Services, request_id: Uuid) -> Result<Value, Fail> {
    let stored = services.store.cards_catalogue().await?;
    let success = answer(stored.as_ref(), &Filter::default(), false, services.now())?
        .applied("verbosity", json!("full"));
    call::success_body(success, call::base_meta(services, request_id), DOCS).map_err(Fail::Internal)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    const HOUR: Millis = 3_600_000;
    /// 2026-01-01T10:00:00Z, the start of game day 2026-01-01.
    const DAY_START: Millis = 1_767_225_600_000 + 10 * HOUR;

    fn stored(observed_at: Millis) -> StoredCatalogue {
        StoredCatalogue {
            catalogue: Default::default(),
            payload_sha256: "ab".repeat(32),
            observed_at,
        }
    }

    /// Loads through `cache` with `stamp` from a "database" holding `db`, counting the loads.
    async fn read(
        cache: &CatalogueCache,
        stamp: Option<Option<Millis>>,
        db: Option<Millis>,
        loads: &AtomicUsize,
    ) -> Option<Millis> {
        cache
            .get(stamp.map(CatalogueStamp), || async {
                loads.fetch_add(1, Ordering::SeqCst);
                Ok(db.map(stored))
            })
            .await
            .unwrap()
            .map(|c| c.observed_at)
    }

    #[tokio::test]
    async fn the_catalogue_is_read_once_per_stamp() {
        let cache = CatalogueCache::default();
        let loads = AtomicUsize::new(0);
        // nothing stored: the stamp says so, and nobody asks the database
        assert_eq!(read(&cache, Some(None), None, &loads).await, None);
        assert_eq!(loads.load(Ordering::SeqCst), 0);
        // the first stamp loads it; the same stamp is served from memory
        let first = DAY_START - HOUR;
        assert_eq!(
            read(&cache, Some(Some(first)), Some(first), &loads).await,
            Some(first)
        );
        assert_eq!(
            read(&cache, Some(Some(first)), Some(first), &loads).await,
            Some(first)
        );
        assert_eq!(loads.load(Ordering::SeqCst), 1);
        // the daily read lands (here or on another instance): a new stamp loads it once
        let next = DAY_START + 60_000;
        for _ in 0..3 {
            assert_eq!(
                read(&cache, Some(Some(next)), Some(next), &loads).await,
                Some(next)
            );
        }
        assert_eq!(loads.load(Ordering::SeqCst), 2);
        // no stamp (the counters failed open): the store answers, and the copy stays
        assert_eq!(read(&cache, None, Some(next), &loads).await, Some(next));
        assert_eq!(loads.load(Ordering::SeqCst), 3);
        assert_eq!(
            read(&cache, Some(Some(next)), Some(next), &loads).await,
            Some(next)
        );
        assert_eq!(loads.load(Ordering::SeqCst), 3);
        // an older catalogue read late never replaces the newer copy
        assert_eq!(read(&cache, None, Some(first), &loads).await, Some(first));
        assert_eq!(
            read(&cache, Some(Some(next)), Some(next), &loads).await,
            Some(next)
        );
        assert_eq!(loads.load(Ordering::SeqCst), 4);
    }
}
