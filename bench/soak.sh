#!/usr/bin/env bash
# The soak (issue 13, item 6; docs/benchmarks.md, "Soak, issue 13"): both products at once under
# mixed, paced load for MINUTES minutes, sampled every minute.
#
#   bash bench/soak.sh                 # 30 minutes
#   MINUTES=3 bash bench/soak.sh       # the short validation run
#
# Builds the release binaries once, then:
#   - Sidequest on PostgreSQL (a fresh database, dropped afterwards) + Redis: `sidequest demo`
#     with SQ_PLAYERS assignments, the demo GM given a password for the REST API;
#   - Elixir on SQLite: `elixir demo` (recorded once per day into target/bench/soak-cache, then
#     copied for each run with `elixir backup`), served with a 60 s access-token life so the
#     OAuth client refreshes all the time;
# and hands over to bench/soak.py (the load driver and sampler, official MCP Python SDK), which
# starts both servers, drives them, and writes minutes.jsonl, minutes.csv and report.md to OUT.
#
# Knobs (environment): MINUTES (30), PG_URL (server, default postgres://postgres@127.0.0.1:5432;
# the database is created under it), PG_ADMIN_DB (postgres), REDIS_URL
# (redis://127.0.0.1:6379), OUT (target/bench/soak-<timestamp>), SQ_PLAYERS (4), ACCESS_TTL (60),
# PY (the venv's python: SIDEQUEST_PY, else .venv/bin/python), SAMPLE_SECS (60; shorter only
# to test the script itself).
set -euo pipefail

MINUTES=${MINUTES:-30}
PG_URL=${PG_URL:-postgres://postgres@127.0.0.1:5432}
PG_ADMIN_DB=${PG_ADMIN_DB:-postgres}
REDIS_URL=${REDIS_URL:-redis://127.0.0.1:6379}
SQ_PLAYERS=${SQ_PLAYERS:-4}
ACCESS_TTL=${ACCESS_TTL:-60}
SAMPLE_SECS=${SAMPLE_SECS:-60}

cd "$(dirname "$0")/.."
ROOT=$PWD
PY=${PY:-${SIDEQUEST_PY:-$ROOT/.venv/bin/python}}
OUT=${OUT:-$ROOT/target/bench/soak-$(date -u +%Y%m%dT%H%M%SZ)}
mkdir -p "$OUT" "$ROOT/target/bench/soak-cache"
OUT=$(cd "$OUT" && pwd)
WORK=$(mktemp -d "$ROOT/target/soak-work.XXXXXX")
DB="soak_sq_$$"

cleanup() {
    psql -q "$PG_URL/$PG_ADMIN_DB" -c "DROP DATABASE IF EXISTS \"$DB\" WITH (FORCE)" >/dev/null 2>&1 || true
    rm -rf "$WORK"
}
trap cleanup EXIT

# shellcheck source=lib.sh
source "$ROOT/bench/lib.sh"

log "release build"
CARGO_INCREMENTAL=0 cargo build --release --locked -p sidequest -p elixir
SQ=$ROOT/target/release/sidequest
EX=$ROOT/target/release/elixir

log "Sidequest: database $DB, $SQ_PLAYERS demo assignments"
psql -q "$PG_URL/$PG_ADMIN_DB" -c "CREATE DATABASE \"$DB\""
SQ_DB_URL="$PG_URL/$DB"
"$SQ" --database-url "$SQ_DB_URL" demo --assignments "$SQ_PLAYERS" --json >"$WORK/sq-demo.json"
GM_PASSWORD="soak gm passphrase $$"
printf '%s\n' "$GM_PASSWORD" | "$SQ" --database-url "$SQ_DB_URL" user password --username gm >/dev/null

CACHE=$ROOT/target/bench/soak-cache/elixir-demo-$(date -u +%Y%m%d)
if [[ ! -s $CACHE.out ]]; then
    log "Elixir: recording the demo clan once today into $CACHE.db (a few minutes)"
    rm -rf "$CACHE".db* "$CACHE.archive"
    "$EX" --database-url "sqlite://$CACHE.db" demo --archive-dir "$CACHE.archive" >"$CACHE.partial"
    mv "$CACHE.partial" "$CACHE.out"
fi
"$EX" --database-url "sqlite://$CACHE.db" backup --to "$WORK/elixir.db"
EX_PORT=$("$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')

{
    echo "started: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "machine: $(nproc) CPUs, $(awk '/MemTotal/ {printf "%.1f GiB", $2 / 1048576}' /proc/meminfo), $(uname -sr)"
    echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
    echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg); rustc processes: $(pgrep -c rustc || true)"
    echo "postgres: $(psql -Atq "$PG_URL/$PG_ADMIN_DB" -c 'SHOW server_version')"
    echo "git: $(git rev-parse --short HEAD)"
} | tee "$OUT/env.txt" >&2

log "soak: $MINUTES minutes"
"$PY" "$ROOT/bench/soak.py" --minutes "$MINUTES" --sample-secs "$SAMPLE_SECS" --out "$OUT" --work "$WORK" \
    --sq-bin "$SQ" --ex-bin "$EX" --sq-database-url "$SQ_DB_URL" --pg-admin-url "$PG_URL/$PG_ADMIN_DB" \
    --pg-db "$DB" --redis-url "$REDIS_URL" --sq-demo "$WORK/sq-demo.json" --gm-password "$GM_PASSWORD" \
    --ex-database-url "sqlite://$WORK/elixir.db" --ex-demo "$CACHE.out" --ex-port "$EX_PORT" \
    --access-ttl "$ACCESS_TTL"

echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg); rustc processes: $(pgrep -c rustc || true)" | tee -a "$OUT/env.txt" >&2
log "results in $OUT"
