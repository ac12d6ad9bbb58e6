-- GET the URL given on the command line; only counts statuses and prints the summary.
local dir = debug.getinfo(1, "S").source:sub(2):match("(.*/)") or "./"
local lib = dofile(dir .. "lib.lua")

setup = lib.setup
response = lib.response
done = lib.done
