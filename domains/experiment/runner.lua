-- torch.experiment.runner -- runs the trials of a checked sweep spec as
-- child processes, at most `jobs` at a time: each in runs/<sweep>/<trial>/
-- with config.json, stdout.txt, stderr.txt, metrics.jsonl and status.json.
-- Watches their metrics (NaN stops a trial), shows a live status line on
-- stderr, survives failing trials, and on Ctrl-C / SIGTERM stops the running
-- trials and marks them interrupted so that --resume reruns them. The
-- summary (table, CSV, plots) is report.lua's job.
local torch = require "torch"
local json = require "torch.experiment.json"
local S = require "torch.experiment.spec"

local proc = require "torch.experiment._proc"
local M = {}

local POLL = 0.1          -- seconds between looks at the running trials
local GRACE = 5           -- seconds a stopped trial gets before SIGKILL
local TAIL_LINES = 15     -- lines of stderr kept in status.json of a failed trial

local function fmt_time(s)
  s = math.max(0, s)
  if s >= 3600 then return ("%dh%02dm"):format(s // 3600, math.floor(s % 3600 / 60)) end
  if s >= 60 then return ("%dm%02ds"):format(s // 60, math.floor(s % 60)) end
  return ("%.0fs"):format(s)
end
M.fmt_time = fmt_time

-- The last n lines of a text file (at most 4 kB of it), as a list.
local function tail(path, n)
  local f = io.open(path, "rb")
  if not f then return {} end
  local size = f:seek("end")
  f:seek("set", math.max(0, size - 4096))
  local text = f:read("a") or ""
  f:close()
  local lines = {}
  for line in text:gmatch("[^\n]+") do lines[#lines + 1] = line end
  if size > 4096 then table.remove(lines, 1) end -- probably cut
  return {table.unpack(lines, math.max(1, #lines - n + 1))}
end
M.tail = tail

------------------------------------------------------------------------
-- metrics.jsonl, read as it grows
------------------------------------------------------------------------

local function new_reader(path)
  return {path = path, offset = 0, partial = "", rows = {}}
end

-- Appends the complete lines written since the last call to r.rows and
-- returns the new rows. Lines that are not JSON objects are skipped (a
-- trial killed mid-write leaves half a line).
local function read_rows(r)
  local f = io.open(r.path, "rb")
  if not f then return {} end
  f:seek("set", r.offset)
  local chunk = f:read("a") or ""
  f:close()
  r.offset = r.offset + #chunk
  local text, new, last = r.partial .. chunk, {}, 1
  for line, after in text:gmatch("([^\n]*)\n()") do
    last = after
    local ok, row = pcall(json.decode, line)
    if ok and type(row) == "table" then
      r.rows[#r.rows + 1] = row
      new[#new + 1] = row
    end
  end
  r.partial = text:sub(last)
  return new
end

-- All rows of a finished trial's metrics file.
function M.read_metrics(path)
  local r = new_reader(path)
  read_rows(r)
  return r.rows
end

-- The first non-finite value of the sweep's metric or of a field named
-- *loss* in row: field, value; or nil.
local function bad_value(row, metric)
  for k, v in pairs(row) do
    if type(v) == "number" and (v ~= v or v == math.huge or v == -math.huge)
        and (k == metric or tostring(k):find("loss")) then
      return k, v
    end
  end
end

------------------------------------------------------------------------
-- the status line
------------------------------------------------------------------------

local Status = {}
Status.__index = Status

local function new_status(name, total, quiet)
  return setmetatable({name = name, total = total, tty = proc.isatty(2), quiet = quiet, shown = false,
    last_print = -math.huge, t0 = torch.time()}, Status)
end

function Status:line(c, eta)
  local elapsed = torch.time() - self.t0
  local parts = {("sweep %s: %d/%d finished (%d done, %d failed), %d running"):format(self.name,
    c.done + c.failed, self.total, c.done, c.failed, c.running)}
  parts[#parts + 1] = ("%s elapsed"):format(fmt_time(elapsed))
  if c.running + c.waiting > 0 then parts[#parts + 1] = "ETA " .. (eta and fmt_time(eta) or "?") end
  return table.concat(parts, ", ")
end

-- Redraws the line in place on a terminal; elsewhere prints it when forced
-- or every 30 s.
function Status:show(c, eta, force)
  if self.quiet then return end
  local line = self:line(c, eta)
  if self.tty then
    if line == self.drawn then return end
    io.stderr:write("\r\27[K", line)
    self.shown, self.drawn = true, line
  else
    local key = ("%d %d %d"):format(c.done, c.failed, c.running)
    if (force and key ~= self.last_key) or torch.time() - self.last_print >= 30 then
      io.stderr:write(line, "\n")
      self.last_print, self.last_key = torch.time(), key
    end
  end
  io.stderr:flush()
end

-- Prints one event line (a trial started, finished or failed) above the
-- status line.
function Status:event(msg)
  if self.quiet then return end
  self.drawn = nil
  io.stderr:write(self.tty and "\r\27[K" or "", msg, "\n")
  io.stderr:flush()
end

function Status:finish()
  if not self.quiet and self.tty and self.shown then io.stderr:write("\n") end
end

------------------------------------------------------------------------
-- trials
------------------------------------------------------------------------

local function now_iso() return os.date("!%Y-%m-%dT%H:%M:%SZ") end

-- What the trial gets on its command line (besides the script).
local function trial_options(ctx, t)
  local o = {}
  for k, v in pairs(t.options) do o[k] = v end
  if ctx.pass_threads and o.threads == nil then o.threads = ctx.threads end
  if ctx.pass_checkpoint and o.checkpoint == nil then o.checkpoint = t.dir .. "/checkpoint.safetensors" end
  return o
end

-- The record of what a trial runs; a resumed sweep compares it to decide
-- whether a finished trial still counts.
local function config_of(ctx, t)
  local o = trial_options(ctx, t)
  local argv = {ctx.exe, ctx.spec.script}
  for _, a in ipairs(S.args(o)) do argv[#argv + 1] = a end
  return {sweep = ctx.spec.name, trial = t.name, index = t.index, script = ctx.spec.script, params = t.params,
    options = o, argv = argv, env = ctx.env_record}
end

local function same_config(a, b)
  return a and b and json.encode(a.options) == json.encode(b.options) and a.script == b.script
end

local function start(ctx, t)
  proc.mkdir(t.dir)
  for _, f in ipairs{"metrics.jsonl", "status.json", "stdout.txt", "stderr.txt"} do os.remove(t.dir .. "/" .. f) end
  local config = config_of(ctx, t)
  json.write(t.dir .. "/config.json", config)
  local env = {MOONTORCH_TRIAL_DIR = t.dir, MOONTORCH_TRIAL = t.name, OMP_NUM_THREADS = tostring(ctx.threads)}
  for k, v in pairs(ctx.spec.env) do env[k] = v end
  t.started, t.reader, t.reason, t.stopping = torch.time(), new_reader(t.dir .. "/metrics.jsonl")
  t.pid = proc.spawn{argv = config.argv, env = env, stdout = t.dir .. "/stdout.txt", stderr = t.dir .. "/stderr.txt"}
  t.state = "running"
  json.write(t.dir .. "/status.json", {status = "running", pid = t.pid, started = now_iso()})
end

-- The value of the sweep's metric in rows: the last one logged, or the
-- best (use = "best"); nil when never logged.
function M.metric_value(rows, metric)
  local best
  for _, row in ipairs(rows) do
    local v = row[metric.name]
    if type(v) == "number" then
      if metric.use == "last" or best == nil or v ~= v
          or (metric.mode == "min" and v < best) or (metric.mode == "max" and v > best) then
        best = v
      end
    end
  end
  return best
end

local function finish(ctx, t, how, code)
  read_rows(t.reader)
  t.rows = t.reader.rows
  t.seconds = torch.time() - t.started
  local ok = how == "exited" and code == 0 and not t.reason
  if not t.reason then
    if how == "exited" then t.reason = code ~= 0 and ("exit code %d"):format(code) or nil
    elseif how == "signaled" then t.reason = ("killed by signal %d"):format(code)
    else t.reason = "lost track of the process" end
  end
  t.state = ok and "done" or "failed"
  t.metric = M.metric_value(t.rows, ctx.spec.metric)
  local rec = {status = t.state, seconds = t.seconds, pid = t.pid, finished = now_iso(),
    metric = t.metric, metric_name = ctx.spec.metric.name}
  if how == "exited" then rec.exit_code = code elseif how == "signaled" then rec.signal = code end
  if not ok then
    rec.reason = t.reason
    rec.stderr_tail = tail(t.dir .. "/stderr.txt", TAIL_LINES)
    t.stderr_tail = rec.stderr_tail
  end
  json.write(t.dir .. "/status.json", rec)
  if ok then
    ctx.status:event(("done     %s in %s%s"):format(t.name, fmt_time(t.seconds), t.metric and
      ("  %s %.6g"):format(ctx.spec.metric.name, t.metric) or ""))
  else
    local last = rec.stderr_tail[#rec.stderr_tail]
    ctx.status:event(("FAILED   %s after %s: %s%s"):format(t.name, fmt_time(t.seconds), t.reason,
      last and ("\n         stderr: " .. last) or ""))
  end
end

-- Stops a running trial: SIGTERM now, SIGKILL after GRACE seconds.
local function stop(t, reason)
  if t.stopping then return end
  t.reason = t.reason or reason
  t.stopping = torch.time()
  proc.kill(t.pid, "TERM")
end

local function poll(ctx, t)
  local new = read_rows(t.reader)
  if ctx.spec.stop_on_nan and not t.stopping then
    for _, row in ipairs(new) do
      local k, v = bad_value(row, ctx.spec.metric.name)
      if k then
        stop(t, ("%s is %s%s"):format(k, tostring(v), row.step and (" at step " .. tostring(row.step)) or ""))
        break
      end
    end
  end
  if ctx.spec.timeout and not t.stopping and torch.time() - t.started > ctx.spec.timeout then
    stop(t, ("timed out after %s"):format(fmt_time(ctx.spec.timeout)))
  end
  if t.stopping and torch.time() - t.stopping > GRACE then proc.kill(t.pid, "KILL") end
  local how, code = proc.wait(t.pid)
  if how then finish(ctx, t, how, code) end
end

local function counts(ctx)
  local c = {done = 0, failed = 0, running = 0, waiting = 0}
  for _, t in ipairs(ctx.trials) do
    if t.state == "done" then c.done = c.done + 1
    elseif t.state == "failed" then c.failed = c.failed + 1
    elseif t.state == "running" then c.running = c.running + 1
    else c.waiting = c.waiting + 1 end
  end
  return c
end

-- Seconds left: the mean time of the trials finished in this run, spread
-- over the job slots.
local function eta(ctx, c)
  if ctx.ran == 0 then return nil end
  local mean, left = ctx.ran_seconds / ctx.ran, 0
  for _, t in ipairs(ctx.trials) do
    if t.state == "running" then left = left + math.max(0, mean - (torch.time() - t.started))
    elseif t.state == "waiting" then left = left + mean end
  end
  return left / math.min(ctx.jobs, math.max(1, c.running + c.waiting))
end

-- Marks what a finished trial of an earlier run left behind as this run's
-- result, or leaves the trial waiting when it must run (again).
local function adopt(ctx, t)
  local st = json.read(t.dir .. "/status.json")
  local cfg = json.read(t.dir .. "/config.json")
  if not st or (st.status ~= "done" and st.status ~= "failed") then return false end
  if st.status == "failed" and ctx.retry_failed then return false end
  if not same_config(cfg, config_of(ctx, t)) then
    ctx.status:event(("rerun    %s: its options changed since the last run"):format(t.name))
    return false
  end
  t.state, t.seconds, t.reason, t.stderr_tail = st.status, st.seconds, st.reason, st.stderr_tail
  t.rows = M.read_metrics(t.dir .. "/metrics.jsonl")
  t.metric = M.metric_value(t.rows, ctx.spec.metric)
  t.resumed = true
  return true
end

local function interrupt_all(ctx)
  local running = {}
  for _, t in ipairs(ctx.trials) do
    if t.state == "running" and t.pid then
      proc.kill(t.pid, "TERM")
      running[#running + 1] = t
    end
  end
  local deadline = torch.time() + GRACE
  for _, t in ipairs(running) do
    while not proc.wait(t.pid) do
      if torch.time() > deadline then
        proc.kill(t.pid, "KILL")
        proc.wait(t.pid, true)
        break
      end
      proc.sleep(0.05)
    end
    t.state = "interrupted"
    json.write(t.dir .. "/status.json", {status = "interrupted", pid = t.pid, seconds = torch.time() - t.started,
      finished = now_iso()})
  end
  return #running
end

local run_locked

-- Runs the sweep. opts: jobs, resume, retry_failed, runs (directory),
-- quiet (no status output), exe (the moontorch to run trials with).
-- Returns the context: spec, dir, trials (with state, metric, rows,
-- seconds, reason), interrupted. Holds runs/<sweep>/.lock meanwhile.
function M.run(spec, opts)
  opts = opts or {}
  local dir = (opts.runs or spec.runs) .. "/" .. spec.name
  proc.mkdir(dir)
  local lock = proc.lock(dir .. "/.lock")
  if not lock then
    error(("sweep %s: another process is running it (%s/.lock is held)"):format(spec.name, dir), 0)
  end
  local ok, res = pcall(run_locked, spec, opts, dir)
  proc.unlock(lock)
  if not ok then error(res, 0) end
  return res
end

-- The sweep proper, once the lock is held.
function run_locked(spec, opts, dir)
  local jobs = opts.jobs or spec.jobs
  local earlier = json.read(dir .. "/sweep.json")
  if earlier and not opts.resume then
    error(("sweep %s: %s holds an earlier run; pass --resume (resume = true) to continue it, or remove the "
      .. "directory to start over"):format(spec.name, dir), 0)
  end
  local threads = spec.threads or math.max(1, torch.get_num_threads() // jobs)
  local ctx = {spec = spec, dir = dir, jobs = jobs, threads = threads, exe = opts.exe or proc.exe(),
    retry_failed = opts.retry_failed, ran = 0, ran_seconds = 0,
    pass_threads = spec.script_options.threads ~= nil,
    pass_checkpoint = spec.checkpoint == true or (spec.checkpoint == "auto" and spec.script_options.checkpoint ~= nil)}
  ctx.env_record = {OMP_NUM_THREADS = tostring(threads)}
  for k, v in pairs(spec.env) do ctx.env_record[k] = v end
  local trials = S.trials(spec)
  ctx.trials = trials
  ctx.status = new_status(spec.name, #trials, opts.quiet)
  for _, w in ipairs(spec.warnings) do ctx.status:event("warning: " .. w) end
  local spec_record = {}
  for k, v in pairs(spec) do if k ~= "script_options" and k ~= "warnings" then spec_record[k] = v end end
  json.write(dir .. "/sweep.json", {spec = spec_record, trials = #trials, started = now_iso()})
  local adopted = 0
  for _, t in ipairs(trials) do
    t.dir = dir .. "/" .. t.name
    t.state = "waiting"
    if opts.resume and adopt(ctx, t) then adopted = adopted + 1 end
  end
  if opts.resume and earlier then
    ctx.status:event(("resume: %d of %d trials finished earlier, %d to run"):format(adopted, #trials,
      #trials - adopted))
  end
  ctx.status:event(("sweep %s: %d trials, %d at a time, %d thread%s each, results in %s"):format(spec.name, #trials,
    jobs, threads, threads == 1 and "" or "s", dir))
  proc.trap_term(true)
  local ok, err = pcall(function()
    local next_i = 1
    while true do
      if proc.term_requested() then error("interrupted", 0) end
      local c = counts(ctx)
      while c.running < jobs and next_i <= #trials do
        local t = trials[next_i]
        next_i = next_i + 1
        if t.state == "waiting" then
          start(ctx, t)
          ctx.status:event(("start    %s"):format(t.name))
          c.running, c.waiting = c.running + 1, c.waiting - 1
        end
      end
      if c.running == 0 and next_i > #trials then break end
      for _, t in ipairs(trials) do
        if t.state == "running" then
          poll(ctx, t)
          if t.state ~= "running" then ctx.ran, ctx.ran_seconds = ctx.ran + 1, ctx.ran_seconds + t.seconds end
        end
      end
      local c2 = counts(ctx)
      ctx.status:show(c2, eta(ctx, c2), c2.done ~= c.done or c2.failed ~= c.failed)
      proc.sleep(POLL)
    end
  end)
  proc.trap_term(false)
  if not ok then
    local stopped = interrupt_all(ctx)
    ctx.status:finish()
    if tostring(err):match("interrupted$") then
      ctx.interrupted = true
      local c = counts(ctx)
      io.stderr:write(("sweep %s interrupted: %d of %d trials finished, %d stopped; run it again with --resume "
        .. "to finish it\n"):format(spec.name, c.done + c.failed, #trials, stopped))
      return ctx
    end
    error(err, 0)
  end
  ctx.status:show(counts(ctx), nil, true)
  ctx.status:finish()
  return ctx
end

return M
