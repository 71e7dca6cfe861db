#!/usr/bin/env bash
# Elixir's heavy tools (docs/benchmarks.md, "Elixir meta tools"): fills a fresh SQLite file and
# a fresh PostgreSQL database from cr-fake's generated world with `loadgen meta`, then times
# battles_meta_decks and battles_meta_cards over the season's corpus and over one clan, the
# single-player tools for the busiest player, and battles_query's first and a deep cursor page.
# Knobs: PLAYERS (2000), CLANS (200), DAYS (31), RUNS (20), ORDER (player: each player's whole
# history at once; time: logs read in time order, one read per player every LOG_HOURS (24)),
# OPPONENTS (tracked: every opponent has a log, so each battle arrives from both logs;
# synthetic: cr-fake's mix, as every figure before this knob), WRITERS (logs stored at once, 1;
# each its own transaction on its own connection, as several instances' recorders share one
# PostgreSQL; keep 1 on SQLite), BACKENDS ("sqlite pg"), PG_URL (bench/pg-tuned.sh starts a
# PostgreSQL configured for this machine on port 5433), OUT.
set -euo pipefail
cd "$(dirname "$0")/.."
PLAYERS=${PLAYERS:-2000}
CLANS=${CLANS:-200}
DAYS=${DAYS:-31}
RUNS=${RUNS:-20}
ORDER=${ORDER:-player}
LOG_HOURS=${LOG_HOURS:-24}
OPPONENTS=${OPPONENTS:-tracked}
WRITERS=${WRITERS:-1}
BACKENDS=${BACKENDS:-"sqlite pg"}
PG_URL=${PG_URL:-postgres://postgres@127.0.0.1:5432}
OUT=${OUT:-target/bench/meta-$(date -u +%Y%m%dT%H%M%SZ)}
mkdir -p "$OUT"
CARGO_INCREMENTAL=0 cargo build --release -p loadgen
for backend in $BACKENDS; do
  case $backend in
    sqlite)
      rm -f "$OUT"/meta.db*
      url="sqlite://$PWD/$OUT/meta.db" ;;
    pg)
      db="elixir_meta_bench_$$"
      psql "$PG_URL/postgres" -qc "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db"
      url="$PG_URL/$db" ;;
    *) echo "unknown backend $backend" >&2; exit 2 ;;
  esac
  ./target/release/loadgen meta --database-url "$url" --players "$PLAYERS" --clans "$CLANS" --days "$DAYS" \
    --order "$ORDER" --log-hours "$LOG_HOURS" --opponents "$OPPONENTS" --writers "$WRITERS" --runs "$RUNS" > "$OUT/$backend.json" 2> "$OUT/$backend.log"
  cat "$OUT/$backend.json"
  if [ "$backend" = pg ]; then psql "$PG_URL/postgres" -qc "DROP DATABASE $db"; fi
  if [ "$backend" = sqlite ]; then ls -l "$OUT"/meta.db >> "$OUT/sqlite.log"; rm -f "$OUT"/meta.db*; fi
done
