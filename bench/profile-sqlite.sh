#!/usr/bin/env bash
# Usage: bash bench/profile-sqlite.sh (after the release build of bench/run.sh); CACHE=0 profiles
# with the read cache off; SECS sets the measured window. Output in target/prof/$TAG.
# callgrind profile of get_play_context on SQLite: server under valgrind, loadgen outside.
set -euo pipefail
cd "$(dirname "$0")/.."
CACHE=${CACHE:-}
TAG=${TAG:-cache${CACHE:+-$CACHE}}
D=target/prof/$TAG; rm -rf "$D"; mkdir -p "$D"
SQ=target/release/sidequest; LG=target/release/loadgen
"$SQ" --database-url "sqlite://$PWD/$D/p.db" demo --assignments 8 --json > "$D/tokens.json"
valgrind --tool=callgrind --callgrind-out-file="$D/callgrind.out" \
  "$SQ" --database-url "sqlite://$PWD/$D/p.db" --log-format json serve --bind 127.0.0.1:0 \
  --token-rate-per-minute 1000000 --token-concurrency 64 --global-concurrency 512 \
  --pre-auth-concurrency 512 --db-max-connections 8 ${CACHE:+--read-cache-bytes $CACHE} > "$D/server.log" 2>&1 &
VPID=$!
for _ in $(seq 1 600); do grep -q '"address"' "$D/server.log" 2>/dev/null && break; sleep 0.2; done
ADDR=$(grep -Eom1 '"address":"[^"]+"' "$D/server.log" | cut -d'"' -f4)
URL="http://$ADDR/play/mcp"
"$LG" prime --url "$URL" --tokens-file "$D/tokens.json" --clients 8 --turns 10
callgrind_control --zero "$VPID" >/dev/null
"$LG" run --name prof --duration-secs "${SECS:-20}" --warmup-secs 0 --json --url "$URL" \
  --tokens-file "$D/tokens.json" --clients 8 --tool get_play_context > "$D/run.json"
callgrind_control --dump "$VPID" >/dev/null
sleep 1
kill -TERM "$VPID"; wait "$VPID" || true
jq -c '{requests, rps, errors}' "$D/run.json" 2>/dev/null || tail -1 "$D/run.json"
ls -la "$D"
