#!/usr/bin/env bash
# The floor under a commit on PostgreSQL, measured: how fast a server that does only what a
# turn cannot do without commits, beside Sidequest and pgbench, in turns:
#
#   bash bench/floor-turn.sh
#
# Serves one database of 64 assignments (primed with 10 turns each) two ways, and seeds a
# second one for pgbench (bench/seed.sql); then ROUNDS times, for each client count, three
# windows in turn, each after a CHECKPOINT and WARMUP seconds of its own, DURATION seconds
# measured:
#   - sq:      Sidequest's player door, commit_play_turn driven by wrk (bench/wrk-commit.lua);
#   - turn:    `loadgen baseline --turn`: a bare axum handler that parses the same request into
#              a typed struct and writes it with bench/turn.sql's one statement on sqlkit's
#              pool, driven by the same wrk script;
#   - pgbench: bench/turn.sql under `pgbench -M prepared -j 2`, the commit target's reference.
# What separates sq from turn is the MCP request itself (the edge checks, admission, JSON-RPC
# framing, the schema check, the canonical hash, the receipt, the audit line, the metrics);
# what separates turn from pgbench is an HTTP server in the middle (its exchange with the
# client, a second process on each commit's path). One line a window: the rate, its ratio to
# the round's pgbench window, and the CPU a commit of the server, PostgreSQL and the client.
# Knobs: CLIENTS ("8 64"), ROUNDS (2), DURATION (10), WARMUP (2), POOL (16),
# PG_URL (postgres://postgres@127.0.0.1:5432), OUT (target/bench/floor-turn-<timestamp>).
# Needs wrk and target/release/{sidequest,loadgen}; nothing is built.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
CLIENTS=${CLIENTS:-"8 64"}
ROUNDS=${ROUNDS:-2}
DURATION=${DURATION:-10}
WARMUP=${WARMUP:-2}
POOL=${POOL:-16}
PG_URL=${PG_URL:-postgres://postgres@127.0.0.1:5432}
PG_ADMIN_DB=postgres
OUT=${OUT:-$ROOT/target/bench/floor-turn-$(date +%Y%m%d-%H%M%S)}
LG=$ROOT/target/release/loadgen
SQ=$ROOT/target/release/sidequest
WORK=$OUT/work
mkdir -p "$WORK"
DB="sq_floor_turn_$$"
PB_DB="sq_floor_turn_pgbench_$$"
# shellcheck source=lib.sh
source bench/lib.sh
trap release EXIT

beside_pgbench "$DB" "$PB_DB" "$WORK/tokens.json" "$WORK/sq.log" "$POOL"
sq_url=$SERVED_URL
# The size of a commit's answer, for the floor's.
bytes=$(jq -r '.response_bytes' <("$LG" run --name size --duration-secs 1 --warmup-secs 0 --json \
    --url "$sq_url" --tokens-file "$WORK/tokens.json" --clients 1 --tool commit_play_turn))

# Started through a link of its own name, so that its windows' CPU is its own.
ln -sf "$LG" "$WORK/loadgen-turn"
"$WORK/loadgen-turn" baseline --body-bytes "$bytes" --database-url "$PG_URL/$DB" --turn \
    --pool "$POOL" >"$WORK/turn.out" &
PIDS+=("$!")
turn_url=$(wait_for_line "$WORK/turn.out" '^http://.*' "${PIDS[-1]}")/play/mcp

turn_vars
log "commit_play_turn, $bytes-byte answers"
for c in $CLIENTS; do
    for r in $(seq 1 "$ROUNDS"); do
        pb="pgbench-$c-$r"
        for side in sq turn; do
            case $side in
                sq) url=$sq_url server=sidequest ;;
                turn) url=$turn_url server=loadgen-turn ;;
            esac
            checkpoint
            measure_wrk "$side-$c-$r" "$url" "$WORK/tokens.json" "$c" "$server" commit_play_turn
        done
        measure_pgbench "$pb" "$c" bench/turn.sql "$PG_URL/$PB_DB"
        for side in sq turn pgbench; do
            jq -rn --slurpfile a "$OUT/$side-$c-$r.json" --slurpfile p "$OUT/$pb.json" '
                def f: . // 0 | round;
                $a[0] as $a | "\($a.name): \($a.rps | round)/s = \($a.rps / $p[0].rps * 100 | round / 100) of pgbench   µs a commit: server \($a.cpu.server.us_per_request | f), postgres \($a.cpu.named.postgres.us_per_request | f), client \($a.cpu.loadgen.us_per_request | f), busy \($a.cpu.machine_busy_pct | f)%"'
        done
    done
done
echo "results in $OUT"
