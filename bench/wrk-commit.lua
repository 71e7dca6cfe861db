-- wrk's side of a commit_play_turn run (bench/run.sh, when wrk is installed):
--
--   wrk -t 2 -c C -d 15s -s bench/wrk-commit.lua URL -- TOKENS_FILE 2 C
--
-- (the last two arguments: wrk's thread count, and the connections, which must be a multiple
-- of it). Client i commits on assignment i, one turn at a time, as loadgen's client i does:
-- each thread takes its share of the first C tokens (thread k: tokens k + 1, k + 1 + T, ...),
-- one per connection. A turn builds on the version the previous answer returned, and wrk
-- does not say which connection an answer came on, so the request's JSON-RPC id names its
-- assignment: response() reads the id and the new version and frees the assignment; the next
-- request() takes a free one. An assignment is never in flight twice, and each thread has as
-- many assignments as connections.
--
-- The same request loadgen sends (crates/loadgen/src/workload.rs, `TurnTexts`): the same
-- headers, a 200-character action, a 600-character narration, 2 KB of memory, two
-- consequences of 150 characters, and a fresh operation id per turn. An assignment's first
-- request reads get_play_context to learn its version, and so does the request after a failed
-- commit (which counts as an error). Every answer is checked as wrk-read.lua checks it:
-- anything but HTTP 200 carrying a JSON-RPC result that is not an error counts as an error. At
-- the end one JSON line in the fields `loadgen wrk` reads.
--
-- Operation ids are UUID-shaped: this run's start second, the assignment, and a counter. Two
-- runs on the same assignment cannot share one, since each run lasts longer than a second.

-- The threads' numbering, the tokens file and the closing line, shared with the other wrk
-- script.
local report = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "wrk-report.lua")
setup = report.setup
done = report.done

errors = 0
local salt = 0
-- Per assignment (the JSON-RPC id): its request head, its action text, the version its next turn
-- builds on (nil: read it first) and its turns so far.
local headers, actions, versions, turns = {}, {}, {}, {}
local free = {}
-- wrk calls thread 0's request() once before any connection opens, to check the request it
-- returns (script_verify_request); that call must not take an assignment.
local verifying = false

local read_body = '{"jsonrpc":"2.0","id":%d,"method":"tools/call",'
    .. '"params":{"name":"get_play_context","arguments":{}}}'
local head, middle, tail

-- `text` repeated and cut to exactly `n` characters (the texts are ASCII).
local function sized(text, n)
    return string.rep(text, math.ceil(n / #text)):sub(1, n)
end

local function json_string(s)
    return '"' .. s:gsub('[\\"]', '\\%0'):gsub('\n', '\\n') .. '"'
end

function init(args)
    local tokens = report.tokens(args[1])
    local stride = tonumber(args[2]) or 1
    local clients = tonumber(args[3]) or #tokens
    assert(clients % stride == 0, clients .. " connections do not split over " .. stride .. " threads")
    assert(#tokens >= clients, clients .. " clients need " .. clients .. " tokens")
    for k = thread_id + 1, clients, stride do
        local i = k - 1 -- loadgen's client number
        -- The request line and headers wrk.format would write, up to the body's length (built
        -- once: only the length and the body change from turn to turn).
        headers[i] = "POST " .. wrk.path .. " HTTP/1.1\r\nHost: " .. wrk.host .. ":" .. wrk.port
            .. "\r\nContent-Type: application/json\r\n"
            .. "Accept: application/json, text/event-stream\r\n"
            .. "MCP-Protocol-Version: 2025-11-25\r\nAuthorization: Bearer " .. tokens[k]
            .. "\r\nContent-Length: "
        actions[i] = json_string(sized("Client " .. i .. ": Arin walks the pier at low tide, "
            .. "asking the net-menders about the dark lighthouse. ", 200))
        turns[i] = 0
        table.insert(free, i)
    end
    verifying = thread_id == 0
    salt = os.time() % 0x100000000
    local narration = sized("The fog thins for a moment. Mira looks up from her nets, studies "
        .. "Arin, and points at the shuttered harbormaster's office without a word. ", 600)
    local memory = sized("## Arin's notes\n- Mira searches the pier each morning for her "
        .. "brother.\n- The lighthouse has been dark for three weeks.\n- The harbormaster "
        .. "avoids questions about the tide tables.\n", 2048)
    local trust = sized("Mira now trusts Arin enough to share what she saw on the night her "
        .. "brother vanished. ", 150)
    local tables = sized("Arin learned that the harbormaster's office keeps a second, hidden "
        .. "set of tide tables. ", 150)
    head = ',"method":"tools/call","params":{"name":"commit_play_turn",'
        .. '"arguments":{"consequences":[{"category":"relationship","description":'
        .. json_string(trust) .. '},{"category":"discovery","description":'
        .. json_string(tables) .. '}],"current_scene":"harbor","expected_version":'
    middle = ',"memory_markdown":' .. json_string(memory)
        .. ',"narration":' .. json_string(narration) .. ',"operation_id":"'
    tail = '","player_action":'
end

-- The id of a request sent when no assignment was free (after an answer without its id): an
-- error whatever it answers, so a run that loses track of an assignment fails its error check.
local ORPHAN = 1000000

-- A POST of `body` for assignment `i`.
local function post(i, body)
    return headers[i] .. #body .. "\r\n\r\n" .. body
end

function request()
    if verifying then
        verifying = false
        return post(next(headers), string.format(read_body, ORPHAN))
    end
    local i = table.remove(free)
    if i == nil then
        local any = next(headers)
        return post(any, string.format(read_body, ORPHAN))
    end
    local version = versions[i]
    if version == nil then
        return post(i, string.format(read_body, i))
    end
    turns[i] = turns[i] + 1
    local id = string.format("%08x-%04x-4000-8000-%012x", salt, i % 0x10000, turns[i])
    return post(i, '{"jsonrpc":"2.0","id":' .. i .. head .. version .. middle .. id .. tail
        .. actions[i] .. '}}}')
end

function response(status, _, answer)
    local i = tonumber(answer:match('^{"jsonrpc":"2.0","id":(%d+)'))
    if i == nil or headers[i] == nil then
        -- An orphan's answer, or one without its request's id: nothing to continue from.
        errors = errors + 1
        return
    end
    local ok = status == 200 and answer:find('"result"', 1, true)
        and not answer:find('"isError":true', 1, true)
    -- The structured result's version (the text content's copy has its quotes escaped).
    local v = ok and answer:match('"version":(%d+)')
    versions[i] = v or nil
    if not v and status < 400 then
        -- wrk itself counts statuses from 400 up.
        errors = errors + 1
    end
    table.insert(free, i)
end
