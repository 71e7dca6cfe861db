#!/usr/bin/env bash
# The floor under a fresh get_play_context on PostgreSQL, measured rather than modelled:
#
#   bash bench/floor.sh
#
# Serves one database of 64 fresh assignments three ways and drives each with wrk
# (bench/wrk-read.lua, CLIENTS connections, DURATION s after WARMUP s), ROUNDS times in turn:
#   - sq:    Sidequest's player door (get_play_context, answered from its read cache);
#   - stmt:  `loadgen baseline --database-url --statement`: a bare axum handler that digests the
#            bearer token and runs the read's one statement (bench/context.sql's) on sqlkit's
#            pool, as Sidequest does, then answers a constant body of the same size;
#   - bare:  the bare handler alone.
# What separates sq from stmt is the MCP request itself (the edge checks, admission, JSON-RPC
# framing and dispatch, the grant, the cache, the envelope, the log line, the metrics); what
# separates stmt from bare is the database round trip on this driver. One line a window:
# requests/s and the server's, PostgreSQL's and wrk's CPU per request. JSON under OUT.
# Knobs: CLIENTS (8), ROUNDS (2), DURATION (10), WARMUP (2), POOL (16),
# PG_URL (postgres://postgres@127.0.0.1:5432), OUT (target/bench/floor-<timestamp>).
# Needs wrk and target/release/{sidequest,loadgen}; nothing is built.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
CLIENTS=${CLIENTS:-8}
ROUNDS=${ROUNDS:-2}
DURATION=${DURATION:-10}
WARMUP=${WARMUP:-2}
POOL=${POOL:-16}
PG_URL=${PG_URL:-postgres://postgres@127.0.0.1:5432}
OUT=${OUT:-$ROOT/target/bench/floor-$(date +%Y%m%d-%H%M%S)}
LG=$ROOT/target/release/loadgen
SQ=$ROOT/target/release/sidequest
WORK=$OUT/work
mkdir -p "$WORK"
DB="sq_floor_$$"
# shellcheck source=lib.sh
source bench/lib.sh
trap release EXIT

create_db "$DB"
"$SQ" --database-url "$PG_URL/$DB" demo --assignments 64 --json >"$WORK/tokens.json"
fill "$PG_URL/$DB"

serve_sidequest "$PG_URL/$DB" "$POOL" "$WORK/sq.log"
PIDS+=("$SERVED")
sq_url=$SERVED_URL
# The size of a fresh answer, for both constant bodies.
bytes=$(curl -s "$sq_url" -H 'content-type: application/json' \
    -H "authorization: Bearer $(jq -r '.assignments[0].token' "$WORK/tokens.json")" \
    -d '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_play_context","arguments":{}}}' | wc -c)
# The read's statement with its digest as $1 (context.sql binds it from pgbench's client id).
statement=$(sed -n '/^SELECT/,$p' bench/context.sql | sed "s/lpad(:client_id::text, 64, '0')/\$1/")

# Started through links of their own names, so that each window's CPU is its server's alone
# (a process's name is its executable's).
ln -sf "$LG" "$WORK/loadgen-stmt"
ln -sf "$LG" "$WORK/loadgen-bare"
"$WORK/loadgen-stmt" baseline --body-bytes "$bytes" --database-url "$PG_URL/$DB" \
    --statement "$statement" --pool "$POOL" >"$WORK/stmt.out" &
PIDS+=("$!")
stmt_url=$(wait_for_line "$WORK/stmt.out" '^http://.*' "${PIDS[-1]}")/play/mcp
"$WORK/loadgen-bare" baseline --body-bytes "$bytes" >"$WORK/bare.out" &
PIDS+=("$!")
bare_url=$(wait_for_line "$WORK/bare.out" '^http://.*' "${PIDS[-1]}")/play/mcp

log "fresh get_play_context, $bytes-byte answers, $CLIENTS connections"
for r in $(seq 1 "$ROUNDS"); do
    for side in sq stmt bare; do
        case $side in
            sq) url=$sq_url server=sidequest ;;
            stmt) url=$stmt_url server=loadgen-stmt ;;
            bare) url=$bare_url server=loadgen-bare ;;
        esac
        measure_wrk "$side-$r" "$url" "$WORK/tokens.json" "$CLIENTS" "$server"
        jq -r '"\(.name) req/s \(.rps) server_us \(.cpu.server.us_per_request) postgres_us \(.cpu.named.postgres.us_per_request // 0) wrk_us \(.cpu.named.wrk.us_per_request) busy% \(.cpu.machine_busy_pct)"' \
            "$OUT/$side-$r.json"
    done
done
echo "results in $OUT"
