-- What bench/wrk-read.lua and bench/wrk-commit.lua share, loaded by each with dofile: the
-- threads' numbering (`setup`: each thread's `thread_id`, 0 up), the play tokens of a tokens
-- file (`tokens`) and the closing JSON line (`done`: requests, errors, duration and latency
-- in µs, the fields `loadgen wrk` reads). A
-- thread's answer check counts its failures in its global `errors`; wrk itself counts statuses
-- from 400 up, and `done` adds both.

local report = {}
local threads = {}
local next_id = 0

function report.setup(thread)
    thread:set("thread_id", next_id)
    next_id = next_id + 1
    table.insert(threads, thread)
end

-- The play tokens of `sidequest demo --json` output, in order.
function report.tokens(path)
    local f = assert(io.open(path, "r"))
    local text = f:read("*a")
    f:close()
    local tokens = {}
    for token in text:gmatch('"token"%s*:%s*"([^"]+)"') do
        table.insert(tokens, token)
    end
    assert(#tokens > 0, "no tokens in " .. path)
    return tokens
end

function report.done(summary, latency, _)
    local checked = 0
    for _, thread in ipairs(threads) do
        checked = checked + thread:get("errors")
    end
    io.write(string.format(
        '{"requests":%d,"errors":%d,"socket_errors":%d,"duration_us":%d,'
            .. '"p50_us":%d,"p99_us":%d,"max_us":%d,"bytes":%d}\n',
        summary.requests, checked + summary.errors.status,
        summary.errors.connect + summary.errors.read + summary.errors.write
            + summary.errors.timeout,
        summary.duration, latency:percentile(50), latency:percentile(99), latency.max,
        summary.bytes))
end

return report
