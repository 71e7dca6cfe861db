#!/usr/bin/env bash
# A profile of one player-door tool under load, the server's side only:
#
#   bash bench/profile.sh
#
# Serves BACKEND (pg: a fresh PostgreSQL database, dropped afterwards; sqlite: a file) with
# 64 demo assignments and bench/run.sh's admission settings, primes each with PRIME_TURNS turns, and
# drives TOOL with CLIENTS clients for SECS seconds while PROFILER samples the server:
#   - perf: `perf record -F 999 -e cpu-clock -g` (kernel and user time, frame-pointer stacks
#     are not kept by the release build, so read it flat: `perf report --no-children
#     --sort dso,sym`); the report's head is written to report.txt;
#   - callgrind: the server runs under valgrind (instruction counts: repeatable, user space
#     only, blind to the kernel); `callgrind_annotate --inclusive=yes` is written to
#     report.txt.
# Knobs: BACKEND (pg), TOOL (commit_play_turn), CLIENTS (8), SECS (10), PROFILER (perf),
# PRIME_TURNS (10; 0 reads fresh assignments, a small answer), SQ (the server binary),
# PG_URL (postgres://postgres@127.0.0.1:5432), POOL (16), TAG (output under target/prof/TAG).
# Needs target/release/{sidequest,loadgen}; nothing is built.
set -euo pipefail
cd "$(dirname "$0")/.."
BACKEND=${BACKEND:-pg}
TOOL=${TOOL:-commit_play_turn}
CLIENTS=${CLIENTS:-8}
SECS=${SECS:-10}
PROFILER=${PROFILER:-perf}
PG_URL=${PG_URL:-postgres://postgres@127.0.0.1:5432}
POOL=${POOL:-16}
PRIME_TURNS=${PRIME_TURNS:-10}
TAG=${TAG:-$PROFILER-$BACKEND-$TOOL-$CLIENTS-p$PRIME_TURNS}
D=$PWD/target/prof/$TAG
rm -rf "$D"
mkdir -p "$D"
SQ=${SQ:-$PWD/target/release/sidequest}
LG=$PWD/target/release/loadgen
DB="sq_prof_$$"

SERVER=""
cleanup() {
    [[ -n $SERVER ]] && { kill -TERM "$SERVER" 2>/dev/null || true; wait "$SERVER" 2>/dev/null || true; }
    [[ $BACKEND == pg ]] && psql -q "$PG_URL/postgres" -c "DROP DATABASE IF EXISTS \"$DB\" WITH (FORCE)" >/dev/null 2>&1
    true
}
trap cleanup EXIT

case $BACKEND in
    pg)
        psql -q "$PG_URL/postgres" -c "CREATE DATABASE \"$DB\"" >/dev/null
        DB_URL="$PG_URL/$DB"
        ;;
    sqlite) DB_URL="sqlite://$D/p.db" ;;
    *) echo "BACKEND is pg or sqlite" >&2; exit 2 ;;
esac
"$SQ" --database-url "$DB_URL" demo --assignments 64 --json >"$D/tokens.json"

WRAP=()
[[ $PROFILER == callgrind ]] && WRAP=(valgrind --tool=callgrind --callgrind-out-file="$D/callgrind.out")
"${WRAP[@]}" "$SQ" --database-url "$DB_URL" --log-format json serve --bind 127.0.0.1:0 \
    --token-rate-per-minute 1000000 --token-concurrency 64 --global-concurrency 512 \
    --pre-auth-concurrency 512 --db-max-connections "$POOL" >"$D/server.log" 2>&1 &
SERVER=$!
for _ in $(seq 1 600); do grep -q '"address"' "$D/server.log" 2>/dev/null && break; sleep 0.2; done
URL="http://$(grep -Eom1 '"address":"[^"]+"' "$D/server.log" | cut -d'"' -f4)/play/mcp"
if (( PRIME_TURNS > 0 )); then
    "$LG" prime --url "$URL" --tokens-file "$D/tokens.json" --clients 64 --turns "$PRIME_TURNS"
fi
# Warm the statement caches and the read cache before measuring.
"$LG" run --name warm --duration-secs 2 --warmup-secs 0 --json --url "$URL" \
    --tokens-file "$D/tokens.json" --clients "$CLIENTS" --tool "$TOOL" >/dev/null

case $PROFILER in
    perf)
        perf record -F 999 -e cpu-clock -g -p "$SERVER" -o "$D/perf.data" -- sleep "$SECS" \
            2>"$D/perf.log" &
        PERF=$!
        "$LG" run --name prof --duration-secs "$SECS" --warmup-secs 0 --json --url "$URL" \
            --tokens-file "$D/tokens.json" --clients "$CLIENTS" --tool "$TOOL" >"$D/run.json"
        wait "$PERF" || true
        perf report -i "$D/perf.data" --no-children --sort dso,sym --stdio 2>/dev/null \
            | grep -v '^$' | head -150 >"$D/report.txt"
        ;;
    callgrind)
        callgrind_control --zero "$SERVER" >/dev/null
        "$LG" run --name prof --duration-secs "$SECS" --warmup-secs 0 --json --url "$URL" \
            --tokens-file "$D/tokens.json" --clients "$CLIENTS" --tool "$TOOL" >"$D/run.json"
        callgrind_control --dump "$SERVER" >/dev/null
        sleep 1
        kill -TERM "$SERVER"; wait "$SERVER" || true; SERVER=""
        callgrind_annotate --inclusive=yes "$(grep -l "^desc: Trigger: dump" "$D"/callgrind.out*)" 2>/dev/null | head -150 >"$D/report.txt"
        ;;
    *) echo "PROFILER is perf or callgrind" >&2; exit 2 ;;
esac
jq -c '{requests, rps, errors}' "$D/run.json" 2>/dev/null || tail -1 "$D/run.json"
echo "report: $D/report.txt"
