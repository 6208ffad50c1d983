-- torch.experiment -- batch experiments. Training scripts report metrics
-- with torch.experiment.log{step=, loss=, ...} (a JSON line in the trial's
-- metrics.jsonl when run by a sweep, nothing otherwise); sweeps run a script
-- over a grid or random sample of options (torch.experiment.sweep, or
-- `moontorch sweep SPEC.lua`). See docs/experiments.md.
-- Loading this module is cheap: the sweep machinery loads on first use.
local torch = require "torch"

local M = {__help = "torch.experiment: log{step=, loss=, ...} (metrics of a sweep trial), sweep(spec_or_path[, opts]), "
  .. "trials(spec), load_spec(spec_or_path), main(args) (moontorch sweep); docs/experiments.md"}

local raw = {}              -- the functions below before their public wrappers (for calls from inside)
local metrics_file         -- open metrics.jsonl of this trial, or false when not in a trial
local t0 = torch.time()

-- The first fields of a metrics line, in this order; the rest sorted.
local FIRST = {step = 1, epoch = 2, time = 3}
local function key_order(keys)
  table.sort(keys, function(a, b)
    local fa, fb = FIRST[a] or 99, FIRST[b] or 99
    if fa ~= fb then return fa < fb end
    return a < b
  end)
end

-- torch.experiment.trial_dir() -> the directory of the sweep trial this
-- process runs as ($MOONTORCH_TRIAL_DIR), or nil outside a sweep.
function M.trial_dir()
  local d = os.getenv("MOONTORCH_TRIAL_DIR")
  if d == "" then return nil end
  return d
end

-- torch.experiment.log{step = 100, loss = 0.42, ...}: appends the fields
-- (numbers, strings, booleans; 0-dim or one-element tensors are read with
-- :item()) and `time` (seconds since torch.experiment was loaded) as one
-- JSON line to $MOONTORCH_TRIAL_DIR/metrics.jsonl, flushed at once so a
-- killed trial leaves readable metrics. Outside a sweep it does nothing.
-- Returns true if a line was written.
function M.log(fields)
  if type(fields) ~= "table" then
    error("experiment.log: expected a table of metrics {step=, loss=, ...}, got a " .. type(fields), 2)
  end
  local row = {}
  for k, v in pairs(fields) do
    if type(k) ~= "string" then error("experiment.log: metric names must be strings, got " .. tostring(k), 2) end
    if torch.is_tensor(v) then
      if v:numel() ~= 1 then
        error(("experiment.log: %s is a tensor of %d elements; log a number"):format(k, v:numel()), 2)
      end
      v = v:item()
    end
    local tv = type(v)
    if tv ~= "number" and tv ~= "string" and tv ~= "boolean" then
      error(("experiment.log: %s must be a number, string or boolean, got a %s"):format(k, tv), 2)
    end
    row[k] = v
  end
  if metrics_file == nil then
    local dir = raw.trial_dir()
    if dir then
      local f, err = io.open(dir .. "/metrics.jsonl", "a")
      if not f then error("experiment.log: cannot open " .. dir .. "/metrics.jsonl: " .. tostring(err), 2) end
      f:setvbuf("line")
      metrics_file = f
    else
      metrics_file = false
    end
  end
  if not metrics_file then return false end
  if row.time == nil then row.time = math.floor((torch.time() - t0) * 1000 + 0.5) / 1000 end
  metrics_file:write(require("torch.experiment.json").encode(row, key_order), "\n")
  metrics_file:flush()
  return true
end

-- torch.experiment.load_spec(spec_or_path) -> the checked spec (defaults
-- filled in); raises "sweep spec: <path>: <problem>".
function M.load_spec(spec_or_path)
  return require("torch.experiment.spec").load(spec_or_path)
end

-- torch.experiment.trials(spec_or_path) -> the list of trials the sweep
-- would run: {index, name, params, options}.
function M.trials(spec_or_path)
  local S = require "torch.experiment.spec"
  local spec = type(spec_or_path) == "table" and spec_or_path.script_options and spec_or_path
    or S.load(spec_or_path)
  return (S.trials(spec))
end

-- torch.experiment.sweep(spec_or_path[, opts]) runs the sweep and writes
-- its summary. opts: jobs, resume, retry_failed, runs, quiet, exe.
-- Returns {dir, interrupted, trials = {{name, state, metric, seconds,
-- reason, params, rows}, ...} sorted best first, done, failed}.
function M.sweep(spec_or_path, opts)
  opts = opts or {}
  torch._check_options("experiment.sweep", opts, "jobs resume retry_failed runs quiet exe")
  if opts.jobs ~= nil and (math.type(opts.jobs) ~= "integer" or opts.jobs < 1) then
    error("experiment.sweep: jobs must be a positive integer, got " .. tostring(opts.jobs), 2)
  end
  local spec = raw.load_spec(spec_or_path)
  local ctx = require("torch.experiment.runner").run(spec, opts)
  local report = require "torch.experiment.report"
  local result = {dir = ctx.dir, interrupted = ctx.interrupted or false, done = 0, failed = 0, trials = {}}
  for _, t in ipairs(report.sorted(ctx)) do
    result.trials[#result.trials + 1] = {name = t.name, state = t.state, metric = t.metric, seconds = t.seconds,
      reason = t.reason, params = t.params, rows = t.rows, resumed = t.resumed or false}
    if t.state == "done" then result.done = result.done + 1 end
    if t.state == "failed" then result.failed = result.failed + 1 end
  end
  if not ctx.interrupted then
    result.files = report.write(ctx, opts.quiet and {write = function() end} or io.stdout)
  end
  return result
end

local USAGE = [[
usage: moontorch sweep SPEC.lua [--jobs N] [--resume] [--retry-failed] [--runs DIR] [--dry-run]
Runs the training script of the sweep spec once per trial (a grid or random
sample of its options), N trials at a time, each as its own moontorch process
in DIR/<sweep>/<trial>/ (DIR: the spec's runs, default runs). At the end it
prints the trials sorted by the spec's metric and writes DIR/<sweep>/summary.md,
summary.csv and summary.png.
  --jobs N        trials at the same time (default: the spec's jobs, else 1)
  --resume        continue an interrupted sweep: finished trials are kept
  --retry-failed  with --resume, run failed trials again too
  --runs DIR      where the results go (overrides the spec's runs)
  --dry-run       check the spec and list the trials without running them
Exit status: 0 when every trial succeeded, 3 when some failed, 1 on an
error (a bad spec), 130 when interrupted. See docs/experiments.md.
]]

-- torch.experiment.main(args) -- `moontorch sweep ...`; returns the exit
-- status. Errors are printed as one line (no traceback).
function M.main(args)
  local opts, path, dry = {}, nil, false
  local i = 1
  local function fail(msg)
    io.stderr:write("moontorch sweep: ", msg, "\n")
    return 1
  end
  while i <= #args do
    local a = args[i]
    if a == "--help" or a == "-h" then
      io.stdout:write(USAGE)
      return 0
    elseif a == "--jobs" or a == "-j" then
      local n = math.tointeger(tonumber(args[i + 1] or ""))
      if not n or n < 1 then return fail("--jobs needs a positive integer") end
      opts.jobs, i = n, i + 1
    elseif a == "--runs" then
      if not args[i + 1] then return fail("--runs needs a directory") end
      opts.runs, i = args[i + 1], i + 1
    elseif a == "--resume" then opts.resume = true
    elseif a == "--retry-failed" then opts.retry_failed = true
    elseif a == "--dry-run" then dry = true
    elseif a:sub(1, 1) == "-" then return fail("unknown option " .. a .. " (moontorch sweep --help)")
    elseif path then return fail("one spec file only, got " .. path .. " and " .. a)
    else path = a end
    i = i + 1
  end
  if not path then
    io.stderr:write(USAGE)
    return 1
  end
  local ok, res = pcall(function()
    if dry then
      local spec = raw.load_spec(path)
      for _, w in ipairs(spec.warnings) do io.stderr:write("warning: ", w, "\n") end
      local S = require "torch.experiment.spec"
      for _, t in ipairs(S.trials(spec)) do
        print(t.name, table.concat(S.args(t.options), " "))
      end
      return {failed = 0}
    end
    return raw.sweep(path, opts)
  end)
  if not ok then return fail(tostring(res)) end
  if res.interrupted then return 130 end
  return res.failed > 0 and 3 or 0
end

-- The functions users call are public entry points: an error raised inside
-- the library names the function at the caller's line.
for _, k in ipairs{"trial_dir", "log", "load_spec", "trials", "sweep"} do
  raw[k] = M[k]
  M[k] = torch._public(M[k], "experiment." .. k)
end

return M
