-- wrk script: sends prebuilt raw HTTP requests, rotating through them (one per credential:
-- token, session), and prints a JSON summary line when done.
--   wrk ... -s rotate.lua <url> -- <requests file>
-- The file holds complete HTTP/1.1 requests separated by a NUL byte (written by lib/wrk.ts).
local requests = {}
local count = 0
local index = 0
local threads = {}
local thread_counter = 0

function setup(thread)
  thread_counter = thread_counter + 1
  thread:set("tid", thread_counter)
  table.insert(threads, thread)
end

function init(args)
  local f = assert(io.open(args[1], "rb"))
  local data = f:read("*a")
  f:close()
  for req in string.gmatch(data, "([^%z]+)") do
    count = count + 1
    requests[count] = req
  end
  -- Threads start at different places of the list.
  index = ((tid or 1) * 7919) % count
end

function request()
  index = index + 1
  if index > count then index = 1 end
  return requests[index]
end

function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    'WRK_JSON {"requests":%d,"duration_us":%d,"bytes":%d,"errors":{"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d},"latency_us":{"p50":%d,"p90":%d,"p99":%d,"max":%d,"mean":%.1f}}\n',
    summary.requests, summary.duration, summary.bytes, e.connect, e.read, e.write, e.status, e.timeout,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max, latency.mean))
end
