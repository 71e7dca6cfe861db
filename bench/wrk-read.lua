-- wrk's side of a get_play_context run (bench/run.sh and bench/peer.sh, when wrk is installed):
--
--   wrk -t 2 -c 8 -d 15s -s bench/wrk-read.lua URL -- TOKENS_FILE 2
--
-- (the last argument: wrk's thread count, so that each thread takes its own tokens).
--
-- The same request loadgen sends (JSON-RPC tools/call of get_play_context, the same headers),
-- with a play token from TOKENS_FILE (`sidequest demo --json`): each wrk thread takes its own
-- tokens, round robin over its requests, so the calls spread over the assignments as loadgen's
-- clients do. Every answer is checked: anything but HTTP 200 carrying a JSON-RPC result that
-- is not an error counts as an error. At the end one JSON line, in the fields `loadgen wrk`
-- reads: requests, errors, duration and latency (µs).

-- The threads' numbering, the tokens file and the closing line, shared with the other wrk
-- script.
local report = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "wrk-report.lua")
setup = report.setup
done = report.done

local body = '{"jsonrpc":"2.0","id":1,"method":"tools/call",'
    .. '"params":{"name":"get_play_context","arguments":{}}}'
local requests = {}
local n = 0
local i = 0
errors = 0

function init(args)
    local tokens = report.tokens(args[1])
    -- Thread k takes tokens k, k + T, k + 2T, ... (T threads; at least one each).
    local stride = tonumber(args[2]) or 1
    for k = thread_id + 1, #tokens, stride do
        table.insert(requests, wrk.format("POST", nil, {
            ["Content-Type"] = "application/json",
            ["Accept"] = "application/json, text/event-stream",
            ["MCP-Protocol-Version"] = "2025-11-25",
            ["Authorization"] = "Bearer " .. tokens[k],
        }, body))
    end
    n = #requests
    assert(n > 0, "thread " .. thread_id .. " has no token")
end

function request()
    i = i % n + 1
    return requests[i]
end

function response(status, headers, answer)
    -- wrk itself counts statuses from 400 up.
    if status < 400 and (status ~= 200 or not answer:find('"result"', 1, true)
        or answer:find('"isError":true', 1, true)) then
        errors = errors + 1
    end
end
