#!/usr/bin/env bash
# A PostgreSQL configured as a production server on this machine would be (docs/benchmarks.md,
# "Ingest on a PostgreSQL configured for the machine"): a cluster of its own under
# target/bench/pg-tuned, on 127.0.0.1:${PORT:-5433}, with the usual sizing for 24 GiB and two
# cores (a quarter of the memory for shared buffers, a WAL large enough that checkpoints are
# spaced by time, autovacuum on) and every durability setting left as shipped (fsync,
# synchronous_commit, full_page_writes). `bash bench/pg-tuned.sh start` initializes it once
# and starts it; `stop` stops it. Then: PG_URL=postgres://postgres@127.0.0.1:5433 BACKENDS=pg
# bash bench/meta.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh
PORT=${PORT:-5433}
DATA=${DATA:-$PWD/target/bench/pg-tuned}
BIN=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1)
as_postgres() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }

case ${1:-start} in
  start)
    if [ ! -f "$DATA/PG_VERSION" ]; then
      log "initdb $DATA"
      mkdir -p "$DATA"
      [ "$(id -u)" = 0 ] && chown postgres: "$DATA"
      as_postgres "$BIN/initdb" -D "$DATA" -U postgres --auth=trust >/dev/null
      cat >> "$DATA/postgresql.conf" <<EOF
listen_addresses = '127.0.0.1'
port = $PORT
unix_socket_directories = '$DATA'
shared_buffers = 6GB
effective_cache_size = 18GB
work_mem = 16MB
maintenance_work_mem = 1GB
wal_buffers = 16MB
wal_compression = on
min_wal_size = 2GB
max_wal_size = 16GB
checkpoint_timeout = 15min
checkpoint_completion_target = 0.9
random_page_cost = 1.1
effective_io_concurrency = 200
autovacuum = on
EOF
    fi
    log "starting PostgreSQL on 127.0.0.1:$PORT"
    as_postgres "$BIN/pg_ctl" -D "$DATA" -l "$DATA/server.log" -w start >/dev/null
    psql "postgres://postgres@127.0.0.1:$PORT/postgres" -Atc \
      "SELECT 'shared_buffers ' || current_setting('shared_buffers') || ', max_wal_size ' || current_setting('max_wal_size')"
    ;;
  stop)
    as_postgres "$BIN/pg_ctl" -D "$DATA" -w stop >/dev/null
    ;;
  *) echo "usage: $0 start|stop" >&2; exit 2 ;;
esac
