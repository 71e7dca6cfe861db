#!/usr/bin/env bash
# Reproduces every figure of docs/benchmarks.md in one command:
#
#   bash bench/run.sh
#
# Builds release binaries, then for each backend (a SQLite temp file; a fresh PostgreSQL
# database, dropped afterwards) creates 64 demo assignments, serves them with admission raised,
# primes each with PRIME_TURNS turns, and measures with `loadgen run`:
#   - get_play_context at each client count (on the primed assignments, then on as many fresh
#     ones: a small answer), and a bare axum handler (`loadgen baseline`)
#     returning a body of the same byte size, driven the same way;
#   - with wrk installed, get_play_context again on both sets, and a bare handler of each
#     answer's size, driven by wrk (a C client that costs less CPU a request than
#     loadgen: the figure compared with the peer), the handler by loadgen too (the ceilings of
#     `loadgen table` take a fresh-sized exchange as the least HTTP a commit can cost);
#   - on PostgreSQL, commit_play_turn at each client count, and with wrk installed again under
#     wrk (bench/wrk-commit.lua: client i on assignment i, as loadgen's); each of these and each
#     pgbench run starts after a CHECKPOINT, so none inherits another's WAL;
#   - a play session per client at the largest count (get_play_context and commit_play_turn in
#     turn, so every read is of a new version and the read cache fills), with the server's peak
#     RSS and the cache's entries and bytes scraped from its metrics listener afterwards;
# then pgbench with bench/turn.sql (a turn's one statement, its token checked in its guard) on
# a seeded copy of the schema at the same client counts -- plus, for the analysis, a turn whose
# token is checked first (request-reads.sql + turn.sql) and get_play_context's SQL
# (context.sql) -- and prints the
# Markdown table (`loadgen table`).
#
# Knobs (environment): DURATION (s, measured window, default 15), WARMUP (s, default 3),
# CLIENTS ("8 64"), BACKENDS ("sqlite pg"), PRIME_TURNS (10), PG_POOL (16), SQLITE_POOL (8),
# PG_URL (server, default postgres://postgres@127.0.0.1:5432; databases are created under it),
# PG_ADMIN_DB (database to connect to for CREATE/DROP DATABASE, default postgres),
# OUT (results directory, default target/bench/<timestamp>), WAIT_IDLE_SECS (wait up to this
# long for other compilations, i.e. `pgrep rustc`, to finish before measuring; default 0),
# LOADGEN_THREADS (loadgen's Tokio workers; default one per CPU), READ_CACHE_BYTES (the server's
# --read-cache-bytes; unset: its default, 0: no cache of rendered reads), USE_WRK (1 when wrk is
# installed: both sets' reads, a bare handler of each answer's size and the commits are also
# driven by wrk, bench/wrk-read.lua and bench/wrk-commit.lua; 0: not).
set -euo pipefail

DURATION=${DURATION:-15}
WARMUP=${WARMUP:-3}
CLIENTS=${CLIENTS:-"8 64"}
BACKENDS=${BACKENDS:-"sqlite pg"}
PRIME_TURNS=${PRIME_TURNS:-10}
PG_POOL=${PG_POOL:-16}
SQLITE_POOL=${SQLITE_POOL:-8}
PG_URL=${PG_URL:-postgres://postgres@127.0.0.1:5432}
PG_ADMIN_DB=${PG_ADMIN_DB:-postgres}
WAIT_IDLE_SECS=${WAIT_IDLE_SECS:-0}
# wrk drives the fresh-assignment reads too (the figure compared with the peer) when installed.
if command -v wrk >/dev/null; then USE_WRK=${USE_WRK:-1}; else USE_WRK=0; fi

cd "$(dirname "$0")/.."
ROOT=$PWD
OUT=${OUT:-$ROOT/target/bench/$(date +%Y%m%d-%H%M%S)}
mkdir -p "$OUT" "$ROOT/target"
# Scratch on the build disk, not /tmp (often tmpfs, where SQLite's fsync would be free).
WORK=$(mktemp -d "$ROOT/target/bench-work.XXXXXX")
MAX_CLIENTS=$(tr ' ' '\n' <<<"$CLIENTS" | sort -n | tail -1)

# shellcheck source=lib.sh
source "$ROOT/bench/lib.sh"
cleanup() {
    release
    rm -rf "$WORK"
}
trap cleanup EXIT

drop_db() {
    psql -q "$PG_URL/$PG_ADMIN_DB" -c "DROP DATABASE IF EXISTS \"$1\" WITH (FORCE)" >/dev/null
}

# --- build, and an honest note about what else runs on the machine ---------------------------
log "building release binaries"
cargo build --release -p sidequest -p loadgen
SQ=$ROOT/target/release/sidequest
LG=$ROOT/target/release/loadgen

if (( WAIT_IDLE_SECS > 0 )); then
    for _ in $(seq 1 "$WAIT_IDLE_SECS"); do
        [[ $(pgrep -c rustc || true) == 0 ]] && break
        sleep 1
    done
fi
{
    echo "date: $(date -Is)"
    echo "nproc: $(nproc)"
    echo "cpu: $(lscpu | sed -n 's/^Model name: *//p')"
    echo "memory: $(free -h | awk '/^Mem:/ {print $2}')"
    echo "postgres: $(psql -Atq "$PG_URL/$PG_ADMIN_DB" -c 'SHOW server_version' 2>/dev/null || echo '?')"
    echo "rustc processes at start: $(pgrep -c rustc || true)"
    echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "settings: DURATION=$DURATION WARMUP=$WARMUP CLIENTS=\"$CLIENTS\" PRIME_TURNS=$PRIME_TURNS PG_POOL=$PG_POOL SQLITE_POOL=$SQLITE_POOL READ_CACHE_BYTES=${READ_CACHE_BYTES:-default}"
} | tee "$OUT/env.txt" >&2

# measure NAME [loadgen run args...]: one `loadgen run`, its JSON kept as $OUT/NAME.json.
measure() {
    local name=$1
    shift
    "$LG" run --name "$name" --duration-secs "$DURATION" --warmup-secs "$WARMUP" --json "$@" >"$OUT/$name.json"
}

# bare PREFIX BYTES WITH_WRK: the bare axum handler answering BYTES-byte bodies, driven by
# loadgen at each client count as PREFIX-$backend-C (and by wrk as wrk-PREFIX-$backend-C when
# WITH_WRK is 1) with the same tokens and request as the server's runs.
bare() {
    local prefix=$1 bytes=$2 with_wrk=$3 base base_url c
    log "$backend: bare axum handler, $bytes-byte body"
    "$LG" baseline --bind 127.0.0.1:0 --body-bytes "$bytes" >"$WORK/baseline.out" &
    base=$!
    PIDS+=("$base")
    base_url=$(wait_for_line "$WORK/baseline.out" '^http://.*' "$base")
    for c in $CLIENTS; do
        measure "$prefix-$backend-$c" --url "$base_url/play/mcp" --tokens-file "$tokens" \
            --clients "$c" --tool get_play_context --server-pid "$base"
        if (( with_wrk )); then
            measure_wrk "wrk-$prefix-$backend-$c" "$base_url/play/mcp" "$WORK/fresh-$backend.json" \
                "$c" loadgen
        fi
    done
    stop "$base"
}

# --- Sidequest on each backend, and the bare-handler reference ------------------------------
for backend in $BACKENDS; do
    case $backend in
        sqlite)
            db_url="sqlite://$WORK/bench.db"
            pool=$SQLITE_POOL
            cpu_names=()
            ;;
        pg)
            db="sq_bench_$$"
            create_db "$db"
            db_url="$PG_URL/$db"
            pool=$PG_POOL
            cpu_names=(--cpu-name postgres)
            ;;
        *) echo "unknown backend $backend (sqlite or pg)" >&2; exit 2 ;;
    esac
    log "$backend: $MAX_CLIENTS demo assignments"
    "$SQ" --database-url "$db_url" demo --assignments "$MAX_CLIENTS" --json >"$WORK/tokens-$backend.json"
    tokens=$WORK/tokens-$backend.json
    # A second set never played: get_play_context of a fresh assignment (a small answer).
    "$SQ" --database-url "$db_url" demo --assignments "$MAX_CLIENTS" --json >"$WORK/fresh-$backend.json"

    serve_sidequest "$db_url" "$pool" "$WORK/server-$backend.log" --metrics-bind 127.0.0.1:0 \
        ${READ_CACHE_BYTES:+--read-cache-bytes "$READ_CACHE_BYTES"}
    server=$SERVED url=$SERVED_URL
    PIDS+=("$server")
    metrics=$(wait_for_line "$WORK/server-$backend.log" 'serving GET /metrics","address":"[^"]+"' "$server" | cut -d'"' -f5)
    log "$backend: server pid $server at $url (pool $pool); priming $PRIME_TURNS turns per assignment"
    "$LG" prime --url "$url" --tokens-file "$tokens" --clients "$MAX_CLIENTS" --turns "$PRIME_TURNS"
    # the same filler and statistics as pgbench's copy (lib.sh `fill`).
    if [[ $backend == pg ]]; then fill "$db_url"; fi

    for c in $CLIENTS; do
        measure "ctx-$backend-$c" --url "$url" --tokens-file "$tokens" --clients "$c" \
            --tool get_play_context --server-pid "$server" "${cpu_names[@]}"
    done
    for c in $CLIENTS; do
        measure "ctx-fresh-$backend-$c" --url "$url" --tokens-file "$WORK/fresh-$backend.json" \
            --clients "$c" --tool get_play_context --server-pid "$server" "${cpu_names[@]}"
    done
    if (( USE_WRK )); then
        for c in $CLIENTS; do
            measure_wrk "wrk-ctx-$backend-$c" "$url" "$tokens" "$c" sidequest
        done
        for c in $CLIENTS; do
            measure_wrk "wrk-fresh-$backend-$c" "$url" "$WORK/fresh-$backend.json" "$c" sidequest
        done
    fi
    body_bytes=$(jq -r .response_bytes "$OUT/ctx-$backend-$MAX_CLIENTS.json")
    fresh_bytes=$(jq -r .response_bytes "$OUT/ctx-fresh-$backend-$MAX_CLIENTS.json")

    if [[ $backend == pg ]]; then
        for c in $CLIENTS; do
            checkpoint
            measure "commit-pg-$c" --url "$url" --tokens-file "$tokens" --clients "$c" \
                --tool commit_play_turn --server-pid "$server" "${cpu_names[@]}"
        done
        if (( USE_WRK )); then
            for c in $CLIENTS; do
                checkpoint
                measure_wrk "wrk-commit-pg-$c" "$url" "$tokens" "$c" sidequest commit_play_turn
            done
        fi
    fi
    # A play session per client (read, turn, read, …): every read after a turn is a new
    # version's answer, so the read cache fills; its peak RSS is the one of a full cache.
    measure "session-$backend-$MAX_CLIENTS" --url "$url" --tokens-file "$tokens" \
        --clients "$MAX_CLIENTS" --tool play_session --server-pid "$server" "${cpu_names[@]}"
    curl -fsS "http://$metrics/metrics" \
        | awk -v name="cache-$backend-$MAX_CLIENTS" -v clients="$MAX_CLIENTS" -v bound="${READ_CACHE_BYTES:-33554432}" '
            /^mcp_door_cache_entries\{cache="play_reads"\}/ { entries = $2 }
            /^mcp_door_cache_weight\{cache="play_reads"\}/ { weight = $2 }
            END { printf "{\"name\":\"%s\",\"kind\":\"cache\",\"clients\":%d,\"entries\":%d,\"weight\":%d,\"bound\":%d}\n", name, clients, entries, weight, bound }' \
        >"$OUT/cache-$backend-$MAX_CLIENTS.json"
    stop "$server"
    cp "$WORK/server-$backend.log" "$OUT/server-$backend.log" 2>/dev/null || true
    if [[ $backend == pg ]]; then drop_db "$db"; fi

    bare base "$body_bytes" "$USE_WRK"
    bare base-fresh "$fresh_bytes" "$USE_WRK"
done

# --- pgbench: the same write, straight to PostgreSQL ----------------------------------------
if [[ " $BACKENDS " == *" pg "* ]]; then
    db="sq_pgbench_$$"
    create_db "$db"
    log "pgbench: schema copy $db with $MAX_CLIENTS seeded assignments"
    seed_pgbench "$PG_URL/$db" "$MAX_CLIENTS"
    cat bench/request-reads.sql bench/turn.sql >"$WORK/request.sql"

    turn_vars
    # turn: the target's reference. request and context: informative (see docs/benchmarks.md).
    for script in turn request context; do
        case $script in
            turn) file=bench/turn.sql ;;
            request) file=$WORK/request.sql ;;
            context) file=bench/context.sql ;;
        esac
        for c in $CLIENTS; do
            measure_pgbench "pgbench-$script-$c" "$c" "$file" "$PG_URL/$db"
        done
    done
    drop_db "$db"
fi

echo "rustc processes at end: $(pgrep -c rustc || true)" | tee -a "$OUT/env.txt" >&2
log "results in $OUT"
"$LG" table "$OUT" | tee "$OUT/table.md"
