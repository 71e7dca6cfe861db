# Shell helpers the bench scripts share (sourced, not run).

log() { printf '\n== %s\n' "$*" >&2; }

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
