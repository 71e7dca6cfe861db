#!/usr/bin/env bash
# Two server binaries against each other on one PostgreSQL database, interleaved:
#
#   bash bench/ab.sh BIN_A BIN_B ROUNDS TOOL CLIENTS [SECS]
#
# Creates a database with 64 played assignments (10 turns each, primed through A) and 64 fresh
# ones, then ROUNDS times serves it with A and then with B (bench/run.sh's admission settings,
# pool 16) and drives TOOL (get_play_context, commit_play_turn, or `fresh`: get_play_context
# of the fresh assignments) with CLIENTS clients for SECS seconds (default 10) after 2 s of
# warm-up. Prints one line a window: requests/s and the server's, PostgreSQL's and the
# client's CPU per request; every window's JSON is kept under target/ab/. Build the "before"
# binary in a worktree of the older commit (`cargo build --release -p sidequest`).
# Knobs: PG_URL (postgres://postgres@127.0.0.1:5432), BACKEND (pg; sqlite: a database file
# under the run's directory, pool 8 as in bench/run.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
A=$1 B=$2 ROUNDS=$3 TOOL=$4 CLIENTS=$5 SECS=${6:-10}
PG_URL=${PG_URL:-postgres://postgres@127.0.0.1:5432}
BACKEND=${BACKEND:-pg}
LG=target/release/loadgen
mkdir -p target/ab
D=$(mktemp -d target/ab/run.XXXX)
DB=sq_ab_$$
case $BACKEND in
    pg) DB_URL="$PG_URL/$DB" POOL=16 CPU_NAME=(--cpu-name postgres) ;;
    sqlite) DB_URL="sqlite://$PWD/$D/ab.db" POOL=8 CPU_NAME=() ;;
    *) echo "BACKEND is pg or sqlite" >&2; exit 2 ;;
esac
SERVER=""
cleanup() {
    [[ -n $SERVER ]] && { kill -TERM "$SERVER" 2>/dev/null || true; wait "$SERVER" 2>/dev/null || true; }
    [[ $BACKEND == pg ]] && psql -q "$PG_URL/postgres" -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)" >/dev/null 2>&1
    true
}
trap cleanup EXIT
# shellcheck source=lib.sh
source bench/lib.sh
[[ $BACKEND == pg ]] && psql -q "$PG_URL/postgres" -c "CREATE DATABASE $DB" >/dev/null
"$A" --database-url "$DB_URL" demo --assignments 64 --json >"$D/tokens.json"
"$A" --database-url "$DB_URL" demo --assignments 64 --json >"$D/fresh.json"
primed=0
for r in $(seq 1 "$ROUNDS"); do
    for side in A B; do
        bin=$A
        [[ $side == B ]] && bin=$B
        "$bin" --database-url "$DB_URL" --log-format json serve --bind 127.0.0.1:0 \
            --token-rate-per-minute 1000000 --token-concurrency 64 --global-concurrency 512 \
            --pre-auth-concurrency 512 --db-max-connections "$POOL" >"$D/server.log" 2>&1 &
        SERVER=$!
        url="http://$(wait_for_line "$D/server.log" '"address":"[^"]+"' "$SERVER" | cut -d'"' -f4)/play/mcp"
        if (( ! primed )); then
            "$LG" prime --url "$url" --tokens-file "$D/tokens.json" --clients 64 --turns 10 2>/dev/null
            primed=1
        fi
        tokens=$D/tokens.json tool=$TOOL
        [[ $TOOL == fresh ]] && { tokens=$D/fresh.json; tool=get_play_context; }
        "$LG" run --name "$side-$r" --duration-secs "$SECS" --warmup-secs 2 --json --url "$url" \
            --tokens-file "$tokens" --clients "$CLIENTS" --tool "$tool" --server-pid "$SERVER" \
            "${CPU_NAME[@]}" >"$D/$side-$r.json" 2>"$D/$side-$r.err"
        jq -r '"\(.name) req/s \(.rps) server_us \(.cpu.server.us_per_request) postgres_us \(.cpu.named.postgres.us_per_request // "-") client_us \(.cpu.loadgen.us_per_request) others% \(.cpu.others_pct)"' "$D/$side-$r.json"
        kill -TERM "$SERVER"
        wait "$SERVER" || true
        SERVER=""
    done
done
echo "results in $D"
