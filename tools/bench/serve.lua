-- serve.lua: a wrk script that posts LibreTranslate requests to `nmt serve`, one sentence each, cycling
-- through the lines of a file, and reports sentences/s, p50/p99 latency and the non-200 answers.
--   wrk -t4 -c64 -d30s --latency -s tools/bench/serve.lua http://127.0.0.1:5000 -- test.en
local lines = {}

local function json_string(s)
  s = s:gsub('\\', '\\\\'):gsub('"', '\\"'):gsub('[%c]', function(c) return string.format('\\u%04x', c:byte()) end)
  return '"' .. s .. '"'
end

local next_line = 1
local thread_index = 0
local threads = {}

function setup(thread)
  thread:set("id", thread_index)
  thread_index = thread_index + 1
  table.insert(threads, thread)
end

function init(args)
  local path = args[1] or error("serve.lua: give the sentence file after --")
  -- The language pair the server serves (serve_load.sh reads it from GET /languages).
  pair = ',"source":"' .. (args[2] or "en") .. '","target":"' .. (args[3] or "de") .. '"}'
  for line in io.lines(path) do
    if #line > 0 then table.insert(lines, line) end
  end
  -- Threads start at different places of the file.
  next_line = (id * 97) % #lines + 1
  wrk.method = "POST"
  wrk.headers["Content-Type"] = "application/json"
end

function request()
  local line = lines[next_line]
  next_line = next_line % #lines + 1
  return wrk.format(nil, "/translate", nil,
    '{"q":' .. json_string(line) .. pair)
end

function done(summary, latency, requests)
  local errors = summary.errors.status + summary.errors.connect + summary.errors.read + summary.errors.write +
                 summary.errors.timeout
  io.write(string.format("sentences/s %.1f  p50 %.1f ms  p99 %.1f ms  requests %d  errors %d (non-2xx %d, timeouts %d)\n",
    summary.requests / (summary.duration / 1e6), latency:percentile(50) / 1000, latency:percentile(99) / 1000,
    summary.requests, errors, summary.errors.status, summary.errors.timeout))
end
