-- serve.lua: a wrk script that posts LibreTranslate requests to `nmt serve`, one sentence each, cycling
-- through the lines of a file and through the language pairs given after it (one pair a request, in
-- turn), and reports sentences/s, p50/p99 latency and the non-200 answers.
--   wrk -t4 -c64 -d30s --latency -s tools/bench/serve.lua http://127.0.0.1:5000 -- test.en en de [en fr ...]
-- With TOKENS naming a file of one count a line (the target tokens of each line's translation, as
-- serve_load.sh writes it), it also reports target tokens/s: the requests answered times the mean
-- count of the lines sent.
local lines = {}
local tokens = {}
local pairs_json = {}

local function json_string(s)
  s = s:gsub('\\', '\\\\'):gsub('"', '\\"'):gsub('[%c]', function(c) return string.format('\\u%04x', c:byte()) end)
  return '"' .. s .. '"'
end

local next_line = 1
local next_pair = 1
local thread_index = 0
local threads = {}
-- Globals, so that done() reads them from each thread: lines sent and their target tokens.
sent = 0
sent_tokens = 0

function setup(thread)
  thread:set("id", thread_index)
  thread_index = thread_index + 1
  table.insert(threads, thread)
end

function init(args)
  local path = args[1] or error("serve.lua: give the sentence file after --")
  -- The language pairs the server serves (serve_load.sh reads them from GET /metrics); en->de by default.
  local i = 2
  repeat
    table.insert(pairs_json, ',"source":"' .. (args[i] or "en") .. '","target":"' .. (args[i + 1] or "de") .. '"}')
    i = i + 2
  until args[i] == nil
  for line in io.lines(path) do
    if #line > 0 then table.insert(lines, line) end
  end
  local counts = os.getenv("TOKENS")
  if counts and #counts > 0 then
    for count in io.lines(counts) do table.insert(tokens, tonumber(count)) end
    if #tokens ~= #lines then error("serve.lua: " .. counts .. " has " .. #tokens .. " counts for " .. #lines .. " lines") end
  end
  -- Threads start at different places of the file and of the pairs.
  next_line = (id * 97) % #lines + 1
  next_pair = id % #pairs_json + 1
  wrk.method = "POST"
  wrk.headers["Content-Type"] = "application/json"
end

function request()
  local line = lines[next_line]
  sent = sent + 1
  if #tokens > 0 then sent_tokens = sent_tokens + tokens[next_line] end
  next_line = next_line % #lines + 1
  local pair = pairs_json[next_pair]
  next_pair = next_pair % #pairs_json + 1
  return wrk.format(nil, "/translate", nil, '{"q":' .. json_string(line) .. pair)
end

function done(summary, latency, requests)
  local errors = summary.errors.status + summary.errors.connect + summary.errors.read + summary.errors.write +
                 summary.errors.timeout
  local per_s = summary.requests / (summary.duration / 1e6)
  local n, t = 0, 0
  for _, thread in ipairs(threads) do
    n = n + thread:get("sent")
    t = t + thread:get("sent_tokens")
  end
  local rate = (t > 0 and n > 0) and string.format("  tokens/s %.1f", per_s * t / n) or ""
  io.write(string.format("sentences/s %.1f%s  p50 %.1f ms  p99 %.1f ms  requests %d  errors %d (non-2xx %d, timeouts %d)\n",
    per_s, rate, latency:percentile(50) / 1000, latency:percentile(99) / 1000,
    summary.requests, errors, summary.errors.status, summary.errors.timeout))
end
