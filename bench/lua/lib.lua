-- Shared by the bench scripts (loaded with dofile from the script's own directory).
-- Counts responses per status in each thread, optionally keeps 2xx bodies, and prints one
-- machine-readable summary line from done():  WRK_JSON {...}
-- wrk runs one Lua state per thread plus a main state; done() (main state) reads each thread's
-- counters with thread:get(), which copies tables across states.
local M = {}

local threads = {}

function M.setup(thread)
  thread:set("tid", #threads)
  table.insert(threads, thread)
end

-- Per-thread state (globals of the thread's Lua state).
statuses = {}
sent = 0
kept = {}
keep_bodies = false

function M.response(status, headers, body)
  statuses[status] = (statuses[status] or 0) + 1
  if keep_bodies and status >= 200 and status < 300 then
    kept[#kept + 1] = body
  end
end

local function json_number(n)
  if n ~= n or n == math.huge or n == -math.huge then return "null" end
  return string.format("%.17g", n)
end

function M.done(summary, latency, requests)
  local merged, total_sent = {}, 0
  local out_path = os.getenv("WRK_KEEP_FILE")
  local out = nil
  if out_path and out_path ~= "" then out = io.open(out_path, "w") end
  for _, t in ipairs(threads) do
    local s = t:get("statuses") or {}
    for code, n in pairs(s) do merged[code] = (merged[code] or 0) + n end
    total_sent = total_sent + (t:get("sent") or 0)
    if out then
      local k = t:get("kept") or {}
      for _, body in ipairs(k) do out:write(body, "\n") end
    end
  end
  if out then out:close() end
  local parts = {}
  for code, n in pairs(merged) do parts[#parts + 1] = string.format('"%d":%d', code, n) end
  local e = summary.errors
  io.write(string.format(
    'WRK_JSON {"requests":%d,"duration_us":%d,"bytes":%d,"sent":%d,' ..
    '"errors":{"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d},' ..
    '"latency_us":{"mean":%s,"stdev":%s,"max":%s,"p50":%s,"p90":%s,"p99":%s},"statuses":{%s}}\n',
    summary.requests, summary.duration, summary.bytes, total_sent,
    e.connect, e.read, e.write, e.status, e.timeout,
    json_number(latency.mean), json_number(latency.stdev), json_number(latency.max),
    json_number(latency:percentile(50)), json_number(latency:percentile(90)), json_number(latency:percentile(99)),
    table.concat(parts, ",")))
end

return M
