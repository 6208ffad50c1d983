-- tests/experiment/test_log.lua -- the metric protocol between training
-- scripts and sweeps: torch.experiment.log appends flushed JSON lines to
-- $MOONTORCH_TRIAL_DIR/metrics.jsonl (nothing outside a sweep), and the
-- JSON module reads back what it writes, NaN included.
local experiment = torch.experiment
local json = require "torch.experiment.json"
local proc = require("torch.experiment._proc")
local exe = arg and arg[-1] or "build/moontorch"

local function tmpdir()
  local d = os.tmpname()
  os.remove(d)
  proc.mkdir(d)
  return d
end

local function lines(path)
  local out = {}
  local f = io.open(path)
  if not f then return out end
  for l in f:lines() do out[#out + 1] = l end
  f:close()
  return out
end

-- Runs `moontorch -e code` as a trial in dir; returns its pid (not waited).
local function run_in_trial(dir, code)
  return proc.spawn{argv = {exe, "-e", code}, env = {MOONTORCH_TRIAL_DIR = dir}, stdout = dir .. "/out.txt",
    stderr = dir .. "/err.txt"}
end

test("json round-trips objects, lists, strings, integers, floats, NaN and infinities", function()
  local v = {a = 1, b = 0.1, c = {1, 2, 3}, d = "q\"uote\n", e = 1 / 0, f = -1 / 0, g = true, h = 3.0}
  local back = json.decode(json.encode(v))
  check_eq(back.a, 1)
  check(math.type(back.a) == "integer" and math.type(back.h) == "float", "integers stay integers, floats floats")
  check_eq({back.b, back.c, back.d, back.e, back.f, back.g}, {0.1, {1, 2, 3}, "q\"uote\n", 1 / 0, -1 / 0, true})
  local n = json.decode(json.encode{x = 0 / 0}).x
  check(n ~= n, "NaN survives")
  check_eq(json.encode{b = 1, a = 2}, '{"a": 2, "b": 1}')
  check_error(function() json.decode('{"a": 1,}') end, "json: expected a string key")
  check_error(function() json.decode('[1, 2') end, "json:")
end)

test("outside a sweep, log does nothing", function()
  if experiment.trial_dir() then return end -- the suite itself runs in a trial
  check_eq(experiment.log{step = 1, loss = 0.5}, false)
end)

test("in a trial, each log call is one flushed JSON line with step first and a time", function()
  local dir = tmpdir()
  local pid = run_in_trial(dir, "torch.experiment.log{loss = 0.5, step = 1}; " ..
    "torch.experiment.log{step = 2, loss = 0/0, acc = torch.tensor(0.25), note = 'x'}")
  check_eq({proc.wait(pid, true)}, {"exited", 0})
  local ls = lines(dir .. "/metrics.jsonl")
  check_eq(#ls, 2)
  check(ls[1]:match('^{"step": 1, "time": [%d.]+, "loss": 0.5}$'), ls[1])
  local row = json.decode(ls[2])
  check(row.loss ~= row.loss, "NaN logged as NaN")
  check_eq({row.step, row.acc, row.note}, {2, 0.25, "x"})
  os.execute("rm -rf '" .. dir .. "'")
end)

test("a killed trial leaves the lines it logged readable", function()
  local dir = tmpdir()
  local pid = run_in_trial(dir, "for i = 1, 3 do torch.experiment.log{step = i, loss = 1 / i} end; " ..
    "io.stdout:write('logged\\n'); io.stdout:flush(); require('torch.experiment._proc').sleep(30)")
  local t0 = torch.time()
  while #lines(dir .. "/out.txt") == 0 and torch.time() - t0 < 20 do proc.sleep(0.02) end
  proc.kill(pid, "KILL")
  check_eq({proc.wait(pid, true)}, {"signaled", 9})
  local ls = lines(dir .. "/metrics.jsonl")
  check_eq(#ls, 3)
  check_eq(json.decode(ls[3]).step, 3)
  os.execute("rm -rf '" .. dir .. "'")
end)

test("log rejects what it cannot write", function()
  check_error(function() experiment.log(3) end, "experiment.log: expected a table of metrics")
  check_error(function() experiment.log{loss = {1}} end, "experiment.log: loss must be a number, string or boolean")
  check_error(function() experiment.log{loss = torch.zeros(3)} end, "loss is a tensor of 3 elements")
  check_error(function() experiment.log{[1] = 2} end, "metric names must be strings")
end)
