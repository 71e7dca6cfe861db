#!/usr/bin/env bash
# The commit target's two sides in turns, so that the VM's drift between windows minutes apart
# falls on both:
#
#   bash bench/interleaved.sh
#
# Serves one PostgreSQL database with Sidequest (bench/run.sh's admission settings, pool 16,
# 64 assignments primed with 10 turns) and seeds a second one for pgbench (bench/seed.sql), then
# ROUNDS times, for each client count: `commit_play_turn` driven by loadgen for SECS seconds,
# then bench/turn.sql driven by `pgbench -M prepared -j 2` for SECS seconds, each after a
# CHECKPOINT and WARMUP seconds of its own, with the CPU of the server, PostgreSQL and the
# client recorded.
# Prints one line a pair (both rates, their ratio, the CPU a commit of each side) and the
# median ratio per client count; every window's JSON is kept under OUT.
# Knobs: ROUNDS (3), CLIENTS ("8 64"), SECS (10), WARMUP (2), PG_URL
# (postgres://postgres@127.0.0.1:5432), OUT (target/bench/interleaved-<timestamp>).
# Needs target/release/{sidequest,loadgen}; nothing is built.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
ROUNDS=${ROUNDS:-3}
CLIENTS=${CLIENTS:-"8 64"}
SECS=${SECS:-10}
WARMUP=${WARMUP:-2}
PG_URL=${PG_URL:-postgres://postgres@127.0.0.1:5432}
OUT=${OUT:-$ROOT/target/bench/interleaved-$(date +%Y%m%d-%H%M%S)}
SQ=$ROOT/target/release/sidequest
LG=$ROOT/target/release/loadgen
WORK=$OUT/work
DURATION=$SECS
mkdir -p "$WORK"
SQ_DB="sq_il_$$"
PB_DB="sq_il_pgbench_$$"
# shellcheck source=lib.sh
source bench/lib.sh
trap release EXIT

beside_pgbench "$SQ_DB" "$PB_DB" "$OUT/tokens.json" "$OUT/server.log" 16
SERVER=$SERVED url=$SERVED_URL

turn_vars

for c in $CLIENTS; do
    ratios=()
    for r in $(seq 1 "$ROUNDS"); do
        sq="commit-$c-$r" pb="pgbench-$c-$r"
        checkpoint
        "$LG" run --name "$sq" --duration-secs "$SECS" --warmup-secs "$WARMUP" --json --url "$url" \
            --tokens-file "$OUT/tokens.json" --clients "$c" --tool commit_play_turn \
            --server-pid "$SERVER" --cpu-name postgres >"$OUT/$sq.json"
        measure_pgbench "$pb" "$c" bench/turn.sql "$PG_URL/$PB_DB"
        ratio=$(jq -n --slurpfile a "$OUT/$sq.json" --slurpfile b "$OUT/$pb.json" '$a[0].rps / $b[0].rps')
        ratios+=("$ratio")
        jq -rn --slurpfile a "$OUT/$sq.json" --slurpfile b "$OUT/$pb.json" --arg c "$c" --arg r "$r" '
            def f: . * 10 | round / 10;
            "\($c) clients, pair \($r): commits/s \($a[0].rps | round) / pgbench tx/s \($b[0].rps | round) = \($a[0].rps / $b[0].rps * 100 | round / 100)   µs a commit: server \($a[0].cpu.server.us_per_request | f), postgres \($a[0].cpu.named.postgres.us_per_request | f), loadgen \($a[0].cpu.loadgen.us_per_request | f) | pgbench: postgres \($b[0].cpu.named.postgres.us_per_request | f), pgbench \($b[0].cpu.named.pgbench.us_per_request | f)"'
    done
    printf '%s\n' "${ratios[@]}" | sort -g | awk -v c="$c" '{ v[NR] = $1 } END {
        m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
        printf "%s clients: median ratio %.2f over %d pairs (min %.2f, max %.2f)\n", c, m, NR, v[1], v[NR] }'
done
echo "results in $OUT"
