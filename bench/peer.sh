#!/usr/bin/env bash
# Sidequest against a reference peer, in one command, on this machine:
#
#   bash bench/peer.sh
#
# The peer (bench/peer/peer.py) is the Player contract's get_play_context written with the
# official MCP Python SDK (stateless Streamable HTTP, JSON answers) and psycopg on PostgreSQL.
# The script creates bench/peer/.venv if missing (or if bench/peer/requirements.txt changed),
# creates a fresh PostgreSQL database and fills it with `sidequest demo` (fresh assignments,
# never played), serves it with the peer (uvicorn) and with Sidequest, checks that both answer
# the same `result` for one token (and HTTP 401 for a wrong one), then measures
# get_play_context with `loadgen run` at each client count -- the peer first, then Sidequest,
# on the same tokens -- and prints req/s, p50, p99, server and PostgreSQL CPU per request and
# the ratio Sidequest/peer; with wrk installed, the same again driven by wrk (bench/wrk-read.lua,
# every answer checked; the issue's figure: a wrk-style client costs less CPU a request than
# loadgen, so more of the machine is left to the servers). The database is dropped and both
# servers stopped on exit. Nothing is built: it needs target/release/{sidequest,loadgen}.
#
# Knobs (environment): DURATION (s, measured window, default 15), WARMUP (s, default 3),
# CLIENTS ("8 64"), PG_URL (server, default postgres://postgres@127.0.0.1:5432; the database is
# created under it), PG_ADMIN_DB (database for CREATE/DROP DATABASE, default postgres),
# OUT (results directory, default target/bench/peer-<timestamp>), PEER_WORKERS (uvicorn worker
# processes, default 1: one process, as the SDK serves streamable_http_app()), PEER_POOL
# (psycopg connections per peer process, default 16), SQ_POOL (Sidequest's
# --db-max-connections, default 16), READ_CACHE_BYTES (Sidequest's --read-cache-bytes; unset:
# its default; 0: no cache of rendered reads, so that it reads the database on every call as
# the peer does), USE_WRK (1 when wrk is installed, 0: loadgen only).
set -euo pipefail

DURATION=${DURATION:-15}
WARMUP=${WARMUP:-3}
CLIENTS=${CLIENTS:-"8 64"}
PG_URL=${PG_URL:-postgres://postgres@127.0.0.1:5432}
PG_ADMIN_DB=${PG_ADMIN_DB:-postgres}
PEER_WORKERS=${PEER_WORKERS:-1}
PEER_POOL=${PEER_POOL:-16}
SQ_POOL=${SQ_POOL:-16}
if command -v wrk >/dev/null; then USE_WRK=${USE_WRK:-1}; else USE_WRK=0; fi

cd "$(dirname "$0")/.."
ROOT=$PWD
SQ=$ROOT/target/release/sidequest
LG=$ROOT/target/release/loadgen
for bin in "$SQ" "$LG"; do
    if [[ ! -x $bin ]]; then
        echo "missing $bin: run cargo build --release -p sidequest -p loadgen" >&2
        exit 2
    fi
done
OUT=${OUT:-$ROOT/target/bench/peer-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$OUT"
WORK=$(mktemp -d "$ROOT/target/peer-work.XXXXXX")
MAX_CLIENTS=$(tr ' ' '\n' <<<"$CLIENTS" | sort -n | tail -1)
ASSIGNMENTS=$(( MAX_CLIENTS > 64 ? MAX_CLIENTS : 64 ))
DB="sq_peer_$$"

# shellcheck source=lib.sh
source "$ROOT/bench/lib.sh"
cleanup() {
    release
    rm -rf "$WORK"
}
trap cleanup EXIT

# call URL TOKEN OUTFILE: one get_play_context as loadgen sends it; prints the HTTP status.
call() {
    curl -s -o "$3" -w '%{http_code}' -X POST "$1" \
        -H 'content-type: application/json' \
        -H 'accept: application/json, text/event-stream' \
        -H 'mcp-protocol-version: 2025-11-25' \
        -H "authorization: Bearer $2" \
        --data '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_play_context","arguments":{}}}'
}

# --- the peer's environment ------------------------------------------------------------------
VENV=$ROOT/bench/peer/.venv
if ! cmp -s "$ROOT/bench/peer/requirements.txt" "$VENV/requirements.installed" 2>/dev/null; then
    log "creating $VENV"
    [[ -x $VENV/bin/python ]] || python3 -m venv "$VENV"
    "$VENV/bin/pip" install -q --disable-pip-version-check -r "$ROOT/bench/peer/requirements.txt"
    cp "$ROOT/bench/peer/requirements.txt" "$VENV/requirements.installed"
fi

{
    echo "date: $(date -Is)"
    echo "nproc: $(nproc)"
    echo "cpu: $(lscpu | sed -n 's/^Model name: *//p')"
    echo "postgres: $(psql -Atq "$PG_URL/$PG_ADMIN_DB" -c 'SHOW server_version' 2>/dev/null || echo '?')"
    echo "python: $("$VENV/bin/python" --version 2>&1); $("$VENV/bin/pip" freeze 2>/dev/null | grep -Ei '^(mcp|psycopg|psycopg-binary|psycopg-pool|uvicorn|uvloop|httptools|starlette|pydantic)==' | tr '\n' ' ')"
    echo "rustc processes at start: $(pgrep -c rustc || true)"
    echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "settings: DURATION=$DURATION WARMUP=$WARMUP CLIENTS=\"$CLIENTS\" PEER_WORKERS=$PEER_WORKERS PEER_POOL=$PEER_POOL SQ_POOL=$SQ_POOL READ_CACHE_BYTES=${READ_CACHE_BYTES:-default}"
} | tee "$OUT/env.txt" >&2

# --- one database, fresh assignments -----------------------------------------------------------
log "database $DB: $ASSIGNMENTS fresh demo assignments"
create_db "$DB"
DB_URL=$PG_URL/$DB
"$SQ" --database-url "$DB_URL" demo --assignments "$ASSIGNMENTS" --json >"$WORK/tokens.json"
TOKENS=$WORK/tokens.json
TOKEN=$(jq -r '.assignments[0].token' "$TOKENS")

# --- both servers ------------------------------------------------------------------------------
port=$("$VENV/bin/python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
PEER_DATABASE_URL=$DB_URL PEER_POOL=$PEER_POOL "$VENV/bin/uvicorn" --app-dir "$ROOT/bench/peer" peer:app \
    --host 127.0.0.1 --port "$port" --workers "$PEER_WORKERS" --no-access-log >"$WORK/peer.log" 2>&1 &
peer=$!
PIDS+=("$peer")
wait_for_line "$WORK/peer.log" 'Application startup complete' "$peer" >/dev/null
PEER_URL="http://127.0.0.1:$port/play/mcp"

"$SQ" --database-url "$DB_URL" --log-format json serve --bind 127.0.0.1:0 \
    --token-rate-per-minute 1000000 --token-concurrency 64 --global-concurrency 512 \
    --pre-auth-concurrency 512 --db-max-connections "$SQ_POOL" \
    ${READ_CACHE_BYTES:+--read-cache-bytes "$READ_CACHE_BYTES"} >"$WORK/sidequest.log" 2>&1 &
sq=$!
PIDS+=("$sq")
address=$(wait_for_line "$WORK/sidequest.log" '"address":"[^"]+"' "$sq" | cut -d'"' -f4)
SQ_URL="http://$address/play/mcp"
log "peer pid $peer at $PEER_URL ($PEER_WORKERS worker(s)); sidequest pid $sq at $SQ_URL"

# --- the same answer, and the same refusal -----------------------------------------------------
# Compared whole: the `result` of one fresh assignment's get_play_context (text content and
# structuredContent). Nothing in it varies per request.
for who in peer sq; do
    url=$PEER_URL; [[ $who == sq ]] && url=$SQ_URL
    status=$(call "$url" "$TOKEN" "$WORK/$who-answer.json")
    [[ $status == 200 ]] || { echo "$who answered HTTP $status:" >&2; cat "$WORK/$who-answer.json" >&2; exit 1; }
    jq -S .result "$WORK/$who-answer.json" >"$WORK/$who-result.json"
    wrong=$(call "$url" "sqp_$(printf '0%.0s' {1..40})" /dev/null)
    [[ $wrong == 401 ]] || { echo "$who answered HTTP $wrong to an unknown token (want 401)" >&2; exit 1; }
done
cp "$WORK/peer-answer.json" "$WORK/sq-answer.json" "$OUT/"
if ! diff -u "$WORK/sq-result.json" "$WORK/peer-result.json" >"$OUT/answer.diff"; then
    echo "the peer's result differs from Sidequest's (- sidequest, + peer):" >&2
    cat "$OUT/answer.diff" >&2
    exit 1
fi
rm -f "$OUT/answer.diff"
log "same result from both ($(wc -c <"$WORK/sq-answer.json") B from sidequest, $(wc -c <"$WORK/peer-answer.json") B from the peer); both refuse an unknown token with 401"

# --- measure -----------------------------------------------------------------------------------
# measure NAME URL PID CLIENTS: one `loadgen run`, its JSON kept as $OUT/NAME.json. The peer's
# workers name themselves sq-peer, so with PEER_WORKERS > 1 their CPU is counted too.
measure() {
    "$LG" run --name "$1" --url "$2" --tokens-file "$TOKENS" --clients "$4" \
        --tool get_play_context --duration-secs "$DURATION" --warmup-secs "$WARMUP" \
        --server-pid "$3" --cpu-name postgres --cpu-name sq-peer --json >"$OUT/$1.json"
}
for c in $CLIENTS; do measure "peer-$c" "$PEER_URL" "$peer" "$c"; done
if (( USE_WRK )); then
    for c in $CLIENTS; do measure_wrk "wrk-peer-$c" "$PEER_URL" "$TOKENS" "$c" sq-peer; done
fi
stop "$peer"
for c in $CLIENTS; do measure "sq-$c" "$SQ_URL" "$sq" "$c"; done
if (( USE_WRK )); then
    for c in $CLIENTS; do measure_wrk "wrk-sq-$c" "$SQ_URL" "$TOKENS" "$c" sidequest; done
fi
stop "$sq"
cp "$WORK/peer.log" "$WORK/sidequest.log" "$OUT/" 2>/dev/null || true

# --- the table ---------------------------------------------------------------------------------
row() {
    jq -r '[.name, .clients, .rps, .latency.p50_ms, .latency.p99_ms,
            ((.cpu.server.us_per_request // 0) + (.cpu.named["sq-peer"].us_per_request // 0)),
            (.cpu.named.postgres.us_per_request // 0), (.cpu.loadgen.us_per_request // 0),
            .errors, .cpu.others_pct]
           | @tsv' "$OUT/$1.json"
}
{
    printf 'run\tclients\treq/s\tp50 ms\tp99 ms\tserver CPU µs/req\tpostgres CPU µs/req\tclient CPU µs/req\terrors\tothers %%\n'
    for c in $CLIENTS; do row "peer-$c"; row "sq-$c"; done
    if (( USE_WRK )); then
        for c in $CLIENTS; do row "wrk-peer-$c"; row "wrk-sq-$c"; done
    fi
    echo
    for c in $CLIENTS; do
        jq -rn --slurpfile p "$OUT/peer-$c.json" --slurpfile s "$OUT/sq-$c.json" --arg c "$c" \
            '"\($c) clients, loadgen: Sidequest/peer req/s \(($s[0].rps / $p[0].rps * 100 | round) / 100)x"'
        if (( USE_WRK )); then
            jq -rn --slurpfile p "$OUT/wrk-peer-$c.json" --slurpfile s "$OUT/wrk-sq-$c.json" --arg c "$c" \
                '"\($c) clients, wrk: Sidequest/peer req/s \(($s[0].rps / $p[0].rps * 100 | round) / 100)x"'
        fi
    done
} | column -t -s $'\t' | tee "$OUT/table.txt"
log "results in $OUT"
