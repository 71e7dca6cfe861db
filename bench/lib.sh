# Shell helpers the bench scripts share (sourced, not run).

log() { printf '\n== %s\n' "$*" >&2; }

# What a script started and created: the processes `release` stops and the databases it drops
# (on PG_URL, connected to PG_ADMIN_DB). Scripts add to them and trap EXIT with `release` (or a
# cleanup of their own that calls it).
PIDS=()
DATABASES=()

# release: stops every process of PIDS and drops every database of DATABASES.
release() {
    local p db
    for p in "${PIDS[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
    for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
    for db in "${DATABASES[@]}"; do
        psql -q "$PG_URL/${PG_ADMIN_DB:-postgres}" -c "DROP DATABASE IF EXISTS \"$db\" WITH (FORCE)" \
            >/dev/null 2>&1 || true
    done
}

# stop PID: stops one process of PIDS now, and forgets it.
stop() {
    local keep=() p
    kill -TERM "$1" 2>/dev/null || true
    wait "$1" 2>/dev/null || true
    for p in "${PIDS[@]}"; do [[ $p == "$1" ]] || keep+=("$p"); done
    PIDS=("${keep[@]}")
}

# create_db NAME: a database on PG_URL, dropped by `release`.
create_db() {
    psql -q "$PG_URL/${PG_ADMIN_DB:-postgres}" -c "CREATE DATABASE \"$1\"" >/dev/null
    DATABASES+=("$1")
}

# Waits until FILE contains a line matching REGEX; prints the first match.
wait_for_line() {
    local file=$1 regex=$2 pid=$3
    for _ in $(seq 1 300); do
        if grep -Eom1 "$regex" "$file" 2>/dev/null; then return 0; fi
        if ! kill -0 "$pid" 2>/dev/null; then
            echo "process $pid exited; its output:" >&2
            cat "$file" >&2
            return 1
        fi
        sleep 0.1
    done
    echo "timed out waiting for /$regex/ in $file" >&2
    return 1
}

# serve_sidequest DATABASE_URL POOL LOG [ARGS...]: `$SQ serve` in the background on a free
# port with the benchmarks' admission (raised past every client count), POOL connections, JSON
# logs to LOG and ARGS; sets SERVED (its pid) and SERVED_URL (its player door) once it listens.
serve_sidequest() {
    local url=$1 pool=$2 logfile=$3
    "$SQ" --database-url "$url" --log-format json serve --bind 127.0.0.1:0 \
        --token-rate-per-minute 1000000 --token-concurrency 64 --global-concurrency 512 \
        --pre-auth-concurrency 512 --db-max-connections "$pool" "${@:4}" >"$logfile" 2>&1 &
    SERVED=$!
    SERVED_URL="http://$(wait_for_line "$logfile" '"address":"[^"]+"' "$SERVED" | cut -d'"' -f4)/play/mcp"
}

# seed_pgbench DATABASE_URL N: the schema (`$SQ demo`, one assignment) and N more assignments
# with predictable ids and play tokens (bench/seed.sql), for pgbench's client i on assignment i;
# then `fill`ed, as the server's database is.
seed_pgbench() {
    "$SQ" --database-url "$1" demo --assignments 1 --json >/dev/null
    psql -q -v ON_ERROR_STOP=1 -v n="$2" -v block=8000 -v mark= "$1" -f "$ROOT/bench/seed.sql" \
        >/dev/null
    fill "$1"
}

# beside_pgbench DB PB_DB TOKENS LOG POOL: the two databases of a Sidequest-against-pgbench
# comparison, created (dropped by `release`). DB holds 64 demo assignments (their tokens written
# to TOKENS), served with `serve_sidequest` (LOG, POOL; SERVED and SERVED_URL set, the server in
# PIDS), primed with 10 turns each and then `fill`ed; PB_DB is pgbench's seeded copy.
beside_pgbench() {
    local db=$1 pb_db=$2 tokens=$3
    create_db "$db"
    create_db "$pb_db"
    "$SQ" --database-url "$PG_URL/$db" demo --assignments 64 --json >"$tokens"
    seed_pgbench "$PG_URL/$pb_db" 64
    serve_sidequest "$PG_URL/$db" "$5" "$4"
    PIDS+=("$SERVED")
    "$LG" prime --url "$SERVED_URL" --tokens-file "$tokens" --clients 64 --turns 10
    fill "$PG_URL/$db"
}

# fill DATABASE_URL: FILLER (default 10000) assignments and play tokens no client uses
# (bench/seed.sql, ids of block 9000, digests marked f), then ANALYZE. Both sides of a pgbench
# comparison get it, the server's database after priming and pgbench's copy after seeding, so
# that both plan their statements on the same statistics, those of a service with thousands of
# assignments: index scans. (Until 2026-12-07, ninth session, only pgbench's 65-row tables were
# analyzed: the planner scanned them whole and hashed, twice PostgreSQL's CPU a read, while the
# server's database had no statistics, autovacuum being off or coming at a moment of its own.)
fill() {
    psql -q -v ON_ERROR_STOP=1 -v n="${FILLER:-10000}" -v block=9000 -v mark=f "$1" \
        -f "$ROOT/bench/seed.sql" -c ANALYZE >/dev/null
}

# measure_wrk NAME URL TOKENS CLIENTS SERVER_NAME [TOOL]: get_play_context (bench/wrk-read.lua)
# or, with TOOL commit_play_turn, turns (bench/wrk-commit.lua: client i on assignment i, one
# turn at a time) driven by wrk with CLIENTS connections on two threads, every answer checked; a
# WARMUP-second run first, then DURATION seconds measured while `loadgen cpu` watches the server
# (SERVER_NAME: its process name), PostgreSQL and wrk. Writes $OUT/NAME.json in run's shape
# (`loadgen wrk`). Needs LG, OUT, WORK, WARMUP, DURATION, ROOT.
measure_wrk() {
    local name=$1 url=$2 tokens=$3 clients=$4 server=$5 tool=${6:-get_play_context} watcher
    local script=wrk-read.lua
    if [[ $tool == commit_play_turn ]]; then script=wrk-commit.lua; fi
    wrk -t 2 -c "$clients" -d "${WARMUP}s" -s "$ROOT/bench/$script" "$url" \
        -- "$tokens" 2 "$clients" >/dev/null
    "$LG" cpu --warmup-secs 0.5 --duration-secs "$(( DURATION - 1 ))" --cpu-name postgres \
        --cpu-name wrk --cpu-name "$server" >"$WORK/$name.cpu" &
    watcher=$!
    wrk -t 2 -c "$clients" -d "${DURATION}s" --timeout 10s -s "$ROOT/bench/$script" "$url" \
        -- "$tokens" 2 "$clients" >"$WORK/$name.wrk"
    wait "$watcher"
    "$LG" wrk --name "$name" --clients "$clients" --cpu-file "$WORK/$name.cpu" \
        --server-name "$server" --json "$WORK/$name.wrk" >"$OUT/$name.json"
}

# checkpoint: a CHECKPOINT on the PostgreSQL at PG_URL (as PG_ADMIN_DB), so that a run that writes
# starts with no other run's WAL to flush: without it the WAL of the previous write runs set off
# a checkpoint inside whichever write window came next (seen on 2026-12-07: one in each of three
# runs' windows, p99 up to 8 × p50).
checkpoint() {
    psql -q "$PG_URL/${PG_ADMIN_DB:-postgres}" -c CHECKPOINT >/dev/null
}

# measure_pgbench NAME CLIENTS FILE DATABASE_URL: FILE under `pgbench -M prepared -j 2` with
# CLIENTS clients and TURN_VARS, after a CHECKPOINT, for WARMUP + DURATION seconds while
# `loadgen cpu` watches PostgreSQL and pgbench over the last DURATION. pgbench's output is kept
# as $OUT/NAME.txt, its per-transaction log under $WORK/pgbench, and the window (cut as
# loadgen's runs are) as $OUT/NAME.json. Needs LG, OUT, WORK, WARMUP, DURATION, TURN_VARS.
measure_pgbench() {
    local name=$1 clients=$2 file=$3 url=$4 watcher
    mkdir -p "$WORK/pgbench"
    rm -f "$WORK/pgbench/$name".*
    checkpoint
    "$LG" cpu --warmup-secs "$WARMUP" --duration-secs "$DURATION" --cpu-name postgres \
        --cpu-name pgbench >"$WORK/$name.cpu" &
    watcher=$!
    if ! pgbench -n -M prepared -c "$clients" -j 2 -T "$((WARMUP + DURATION))" -f "$file" \
        -l --log-prefix="$WORK/pgbench/$name" "${TURN_VARS[@]}" "$url" >"$OUT/$name.txt" 2>&1; then
        cat "$OUT/$name.txt" >&2
        kill "$watcher" 2>/dev/null || true
        return 1
    fi
    wait "$watcher"
    "$LG" pgbench --name "$name" --clients "$clients" --warmup-secs "$WARMUP" \
        --duration-secs "$DURATION" --cpu-file "$WORK/$name.cpu" --json "$WORK/pgbench/$name".* \
        >"$OUT/$name.json"
}

# turn_vars: sets the array TURN_VARS to pgbench's -D variables of bench/turn.sql: texts of the
# sizes loadgen commits (see crates/loadgen/src/workload.rs), a receipt result of the size the
# server stores, and the time now.
turn_vars() {
    local uuid='00000000-0000-4000-8000-000000000000' desc result
    text() { head -c "$1" /dev/zero | tr '\0' "$2"; }
    desc=$(text 150 d)
    result="{\"session_id\":\"$uuid\",\"version\":2,\"consequences\":[{\"id\":\"$uuid\",\"status\":\"pending\",\"category\":\"relationship\",\"description\":\"$desc\"},{\"id\":\"$uuid\",\"status\":\"pending\",\"category\":\"discovery\",\"description\":\"$desc\"}]}"
    TURN_VARS=(-D "action=$(text 200 a)" -D "narration=$(text 600 n)" -D "memory=$(text 2048 m)"
        -D "desc0=$desc" -D "desc1=$desc" -D "hash=$(text 64 f)" -D "result=$result"
        -D "scene=harbor" -D "now=$(date +%s%3N)" -D "a_version=0")
}
