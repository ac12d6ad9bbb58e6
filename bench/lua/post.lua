-- POST the JSON bodies of a file (one per line, built by bench/lib/api.ts `wire`) in turn.
-- Thread t of n starts at line t and steps by n, so threads send different bodies (distinct
-- identifiers for activations). Env: WRK_BODIES (file), WRK_PATH (request path), WRK_THREADS,
-- WRK_KEEP_FILE (optional: 2xx bodies are written there by done()).
local dir = debug.getinfo(1, "S").source:sub(2):match("(.*/)") or "./"
local lib = dofile(dir .. "lib.lua")

setup = lib.setup
response = lib.response
done = lib.done

local requests_ = {}
local count, index, step = 0, 0, 1

function init(args)
  local path = os.getenv("WRK_PATH")
  local n = tonumber(os.getenv("WRK_THREADS") or "1")
  local headers = { ["Content-Type"] = "application/json" }
  local line_no = 0
  for line in io.lines(os.getenv("WRK_BODIES")) do
    if line_no % n == tid then
      requests_[#requests_ + 1] = wrk.format("POST", path, headers, line)
    end
    line_no = line_no + 1
  end
  count = #requests_
  keep_bodies = (os.getenv("WRK_KEEP_FILE") or "") ~= ""
  if count == 0 then error("no request bodies for thread " .. tid) end
end

function request()
  index = index + 1
  if index > count then index = 1 end
  sent = sent + 1
  return requests_[index]
end
