#!/usr/bin/env bash
# Elixir's per-call path (docs/benchmarks.md, "Elixir per-call path, issue 14"):
#
#   bash bench/elixir-path.sh            # builds target/release/{elixir,loadgen} first
#   ELIXIR_BIN=/path/to/elixir SKIP_BUILD=1 bash bench/elixir-path.sh
#
# On a fresh PostgreSQL database (BACKEND=pg) or SQLite file (BACKEND=sqlite): an admin account and one agent door, the card catalogue read
# once from a loopback copy of the shared /cards fixture (`elixir cards refresh`), then
# `elixir serve` with admission and the hourly rate raised and `loadgen run` driving TOOL
# (cards_catalog, or game_clock) over the agent's service key at each client count, reporting
# requests/s, latency and the server's (and PostgreSQL's) CPU per request. Agents are capped at
# the leader tier's 2,000 calls a day, so the bench database disarms the daily quota with a
# trigger that keeps every day counter at 1 (the same statements run; only the count differs).
# On PostgreSQL it also counts the database's transactions per call (round trips).
#
# Knobs (environment): BACKEND (pg or sqlite, pg), TOOL (cards_catalog), CLIENTS ("8 64"), DURATION (s, 15), WARMUP (s, 3),
# PG_URL (postgres://postgres@127.0.0.1:5432), PG_ADMIN_DB (postgres), PG_POOL (16), NAME
# (label of the runs, "run"), OUT (results directory, target/bench/elixir-<timestamp>),
# ELIXIR_BIN / LOADGEN_BIN (the binaries), SKIP_BUILD (1: do not build).
set -euo pipefail

BACKEND=${BACKEND:-pg}
TOOL=${TOOL:-cards_catalog}
CLIENTS=${CLIENTS:-"8 64"}
DURATION=${DURATION:-15}
WARMUP=${WARMUP:-3}
PG_URL=${PG_URL:-postgres://postgres@127.0.0.1:5432}
PG_ADMIN_DB=${PG_ADMIN_DB:-postgres}
PG_POOL=${PG_POOL:-16}
NAME=${NAME:-run}

cd "$(dirname "$0")/.."
ROOT=$PWD
OUT=${OUT:-$ROOT/target/bench/elixir-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$OUT" "$ROOT/target"
WORK=$(mktemp -d "$ROOT/target/bench-work.XXXXXX")
if [[ ${SKIP_BUILD:-0} != 1 ]]; then
    cargo build --release -p elixir -p loadgen
fi
EX=${ELIXIR_BIN:-$ROOT/target/release/elixir}
LG=${LOADGEN_BIN:-$ROOT/target/release/loadgen}

DB=elixir_path_$$
# shellcheck source=lib.sh
source "$ROOT/bench/lib.sh"
cleanup() {
    release
    rm -rf "$WORK"
}
trap cleanup EXIT
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

case $BACKEND in
    pg)
        create_db "$DB"
        URL=$PG_URL/$DB
        "$EX" --database-url "$URL" migrate >/dev/null
        psql -q "$URL" >/dev/null <<'SQL'
CREATE FUNCTION bench_no_daily_quota() RETURNS trigger AS $$
BEGIN
    IF NEW.window_kind = 'day' THEN NEW.count := 1; END IF;
    RETURN NEW;
END $$ LANGUAGE plpgsql;
CREATE TRIGGER bench_no_daily_quota BEFORE UPDATE ON usage_counters
    FOR EACH ROW EXECUTE FUNCTION bench_no_daily_quota();
SQL
        CPU_NAMES=(--cpu-name postgres)
        ;;
    sqlite)
        # On the build disk, not /tmp (often tmpfs, where SQLite's fsync would be free).
        URL=sqlite://$WORK/elixir.db
        "$EX" --database-url "$URL" migrate >/dev/null
        sqlite3 "$WORK/elixir.db" <<'SQL'
CREATE TRIGGER bench_no_daily_quota AFTER UPDATE ON usage_counters
    FOR EACH ROW WHEN NEW.window_kind = 'day' AND NEW.count <> 1
    BEGIN UPDATE usage_counters SET count = 1 WHERE rowid = NEW.rowid; END;
SQL
        CPU_NAMES=()
        ;;
    *) echo "unknown BACKEND $BACKEND (pg or sqlite)" >&2; exit 2 ;;
esac
"$EX" --database-url "$URL" account create --email bench@example.com --tier admin --json >/dev/null
agent=$("$EX" --database-url "$URL" agent create --owner bench@example.com --name Bench --json)
public_id=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["public_id"])' "$agent")
key=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["service_key"])' "$agent")
max=$(tr ' ' '\n' <<<"$CLIENTS" | sort -n | tail -1)
for _ in $(seq 1 "$max"); do echo "$key"; done >"$WORK/keys.txt"

# The catalogue, read once from a loopback copy of the fixture.
mkdir -p "$WORK/api/v1"
cp crates/elixir/tests/fixtures/clash-royale-api/cards.json "$WORK/api/v1/cards"
api_port=$(free_port)
python3 -m http.server "$api_port" --bind 127.0.0.1 --directory "$WORK/api" >"$WORK/api.log" 2>&1 &
PIDS+=($!)
sleep 1
"$EX" --database-url "$URL" cards refresh --cr-api-token bench --cr-api-url "http://127.0.0.1:$api_port/v1" \
    --archive-dir "$WORK/archive" >&2

port=$(free_port)
"$EX" --database-url "$URL" serve --bind "127.0.0.1:$port" --public-url "http://127.0.0.1:$port" \
    --mail-outbox "$WORK/outbox" --hourly-rate 1000000000 --credential-rate-per-minute 100000000 \
    --credential-concurrency 512 --global-concurrency 512 --db-max-connections "$PG_POOL" \
    >"$WORK/server.log" 2>&1 &
server=$!
PIDS+=("$server")
for _ in $(seq 1 100); do
    curl -fsS "http://127.0.0.1:$port/healthz" >/dev/null 2>&1 && break
    sleep 0.1
done
door="http://127.0.0.1:$port/a/$public_id/mcp"

# Round trips per call, counted by PostgreSQL itself: the database's committed transactions
# (each autocommit statement is one) over PROBE sequential calls, so each audit batch holds one
# row; read 11 s after the calls, once the idle server backends have reported (PostgreSQL 15+
# flushes a backend's counts within 10 s of going idle).
xacts() { sleep 11; psql -Atq "$PG_URL/$PG_ADMIN_DB" -c "SELECT xact_commit FROM pg_stat_database WHERE datname = '$DB'"; }
PROBE=${PROBE:-200}
[[ $BACKEND == pg ]] && before=$(xacts)
python3 - "$door" "$key" "$TOOL" "$PROBE" <<'PY'
import json, sys, urllib.request
door, key, tool, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": tool, "arguments": {}}}).encode()
for _ in range(n):
    r = urllib.request.Request(door, body, {"content-type": "application/json", "accept": "application/json, text/event-stream", "authorization": "Bearer " + key})
    reply = json.load(urllib.request.urlopen(r))
    assert not reply["result"].get("isError"), reply
PY
if [[ $BACKEND == pg ]]; then
    after=$(xacts)
    python3 -c "import sys; print(f'round trips per call ({sys.argv[3]} sequential calls, PostgreSQL xact_commit): {(int(sys.argv[2]) - int(sys.argv[1])) / int(sys.argv[3]):.2f}')" \
        "$before" "$after" "$PROBE" | tee "$OUT/$NAME-$TOOL-round-trips.txt" >&2
fi

log "load average: $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) CPUs; rustc processes: $(pgrep -c rustc || true)"
for c in $CLIENTS; do
    log "$TOOL at $c clients"
    [[ $BACKEND == pg ]] && x0=$(xacts)
    "$LG" run --name "$NAME-$TOOL-$c" --url "$door" --tokens-file "$WORK/keys.txt" --clients "$c" \
        --tool "$TOOL" --duration-secs "$DURATION" --warmup-secs "$WARMUP" --server-pid "$server" \
        "${CPU_NAMES[@]}" --json >"$OUT/$NAME-$TOOL-$c.json"
    [[ $BACKEND == pg ]] || continue
    x1=$(xacts)
    echo "$c clients: $((x1 - x0)) PostgreSQL transactions during the run (warm-up included)" | tee -a "$OUT/$NAME-$TOOL-round-trips.txt" >&2
done
log "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "$OUT"
