-- tests/experiment/test_sweep.lua -- sweeps end to end (lua/torch/experiment/,
-- `moontorch sweep`): a small real 2x3 grid over train_fashion_mnist.lua with
-- two jobs where one grid point crashes; NaN losses and timeouts stop a
-- trial; an interrupted (SIGINT) or killed (SIGKILL) sweep resumes without
-- rerunning finished trials. The other sweeps use tests/experiment/fake_train.lua.
local experiment = torch.experiment
local json = require "torch.experiment.json"
local proc = require("torch.experiment._proc")
local exe = arg and arg[-1] or "build/moontorch"
local here = debug.getinfo(1, "S").source:match("^@(.*)/[^/]*$") or "tests/experiment"
local fake = here .. "/fake_train.lua"
local fashion = here .. "/../../../scripts/train_fashion_mnist.lua"

local function tmpdir()
  local d = os.tmpname()
  os.remove(d)
  proc.mkdir(d)
  return d
end

local function read(path)
  local f = io.open(path, "rb")
  if not f then return nil end
  local s = f:read("a")
  f:close()
  return s
end

local function write_spec(dir, text)
  local path = dir .. "/spec.lua"
  local f = assert(io.open(path, "w"))
  f:write(text)
  f:close()
  return path
end

-- Runs `moontorch sweep args` to the end: exit code, stdout, stderr.
local function sweep_cli(dir, args)
  local p = io.popen(("%s sweep %s 2>%s/cli_err.txt"):format(exe, args, dir))
  local out = p:read("a")
  local _, _, code = p:close()
  return code, out, read(dir .. "/cli_err.txt") or ""
end

local function status_of(trial_dir) return json.read(trial_dir .. "/status.json") end

local function trial_dirs(sweep_dir)
  local out = {}
  local p = io.popen("ls -1 '" .. sweep_dir .. "' 2>/dev/null")
  for name in p:lines() do
    if name:match("^%d%d%d%-") then out[#out + 1] = sweep_dir .. "/" .. name end
  end
  p:close()
  return out
end

local function count_status(sweep_dir, what)
  local n = 0
  for _, d in ipairs(trial_dirs(sweep_dir)) do
    local st = status_of(d)
    if st and st.status == what then n = n + 1 end
  end
  return n
end

test("a 2x3 sweep over train_fashion_mnist.lua with 2 jobs: a crashing grid point fails, the rest finish", function()
  if not io.open("/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz") then
    print("  (skipped: dataset-fashion-mnist is not installed)")
    return
  end
  local dir = tmpdir()
  -- batch_size 0 makes the script's DataLoader raise: those trials crash
  local spec = write_spec(dir, ([[
return {name = "fm", script = %q, metric = "test_accuracy", threads = 1,
  base = {epochs = 1, model = "mlp", workers = 1, limit = 256},
  axes = {lr = {1e-3, 3e-3}, batch_size = {32, 64, 0}},
  plot = {"train_loss", "test_accuracy"}}
]]):format(fashion))
  local code, out, err = sweep_cli(dir, ("%s --jobs 2 --runs %s"):format(spec, dir))
  check_eq(code, 3, "exit status with failed trials\n" .. err)
  local sd = dir .. "/fm"
  check_eq(#trial_dirs(sd), 6)
  check_eq(count_status(sd, "done"), 4)
  check_eq(count_status(sd, "failed"), 2)
  local failed = status_of(sd .. "/005-batch_size=0-lr=0.001")
  check_eq(failed.exit_code, 1)
  check(table.concat(failed.stderr_tail, "\n"):find("batch_size must be a positive integer", 1, true),
    "the failed trial keeps the tail of its stderr")
  check(err:find("FAILED   005-batch_size=0-lr=0.001", 1, true), err)
  -- a finished trial: its files, metrics, checkpoint and the thread count it got
  local t1 = sd .. "/001-batch_size=32-lr=0.001"
  for _, f in ipairs{"config.json", "stdout.txt", "stderr.txt", "metrics.jsonl", "status.json",
      "checkpoint.safetensors"} do
    check(read(t1 .. "/" .. f), "trial file " .. f)
  end
  local cfg = json.read(t1 .. "/config.json")
  local argv = table.concat(cfg.argv, " ")
  for _, want in ipairs{"--batch-size 32 ", "--checkpoint " .. t1 .. "/checkpoint.safetensors", "--lr 0.001 ",
      "--threads 1 "} do
    check(argv:find(want, 1, true), argv)
  end
  local rows = require("torch.experiment.runner").read_metrics(t1 .. "/metrics.jsonl")
  check(#rows >= 2 and rows[#rows].test_accuracy > 0.3, "the epoch's test accuracy is logged")
  -- the summary: sorted by accuracy (best first), failed trials last
  local md = read(sd .. "/summary.md")
  check(md and out:find("| rank | trial", 1, true), out)
  local accs, statuses = {}, {}
  for line in md:gmatch("[^\n]+") do
    local st, acc = line:match("^| %d+%s+| %S+%s+| %S+%s+| %S+%s+| (%a+)%s+| ([%d.]*)")
    if st then statuses[#statuses + 1], accs[#accs + 1] = st, tonumber(acc) end
  end
  check_eq(statuses, {"done", "done", "done", "done", "failed", "failed"})
  for i = 2, 4 do check(accs[i - 1] >= accs[i], "sorted by test_accuracy, best first") end
  local csv = read(sd .. "/summary.csv")
  check(csv:match("^rank,trial,batch_size,lr,status,test_accuracy,"), csv)
  check_eq(select(2, csv:gsub("\n", "")), 7)
  for _, png in ipairs{"summary.png", "summary_test_accuracy.png"} do
    local head = read(sd .. "/" .. png)
    check(head and head:sub(1, 8) == "\137PNG\r\n\26\n", png .. " is a PNG")
  end
  os.execute("rm -rf '" .. dir .. "'")
end)

test("a NaN loss or a timeout stops that trial only; it is recorded as failed", function()
  local dir = tmpdir()
  local res = experiment.sweep({name = "nan", script = fake, metric = "loss", jobs = 4, timeout = 5,
    base = {steps = 100}, axes = {nan_at = {-1, 2}, sleep = {0.01, 1}}}, {runs = dir, quiet = true})
  check_eq({res.done, res.failed}, {1, 3})
  local by = {}
  for _, t in ipairs(res.trials) do by[t.params.nan_at .. "/" .. t.params.sleep] = t end
  check_eq(by["-1/0.01"].state, "done")
  check_eq(res.trials[1].name, by["-1/0.01"].name)
  -- with 1 s per step the trial would run 100 s: NaN at step 2 stops it
  for _, k in ipairs{"2/0.01", "2/1"} do
    check(by[k].reason:find("^loss is %-?nan at step 2"), k .. ": " .. by[k].reason)
  end
  check(by["-1/1"].reason == "timed out after 5s", by["-1/1"].reason)
  check(read(res.dir .. "/summary.md"):find("timed out after 5s", 1, true), "the reason is in the summary")
  os.execute("rm -rf '" .. dir .. "'")
end)

-- Starts `moontorch sweep` in the background; returns its pid.
local function sweep_bg(dir, args)
  return proc.spawn{argv = {exe, "sweep", table.unpack(args)}, stdout = dir .. "/bg_out.txt",
    stderr = dir .. "/bg_err.txt"}
end

local function wait_until(cond, seconds)
  local t0 = torch.time()
  while not cond() do
    if torch.time() - t0 > seconds then return false end
    proc.sleep(0.02)
  end
  return true
end

test("an interrupted sweep resumes: finished trials are kept, unfinished ones run again", function()
  local dir = tmpdir()
  local spec = write_spec(dir, ([[
return {name = "resume", script = %q, metric = "loss", threads = 1,
  base = {steps = 3, sleep = 0.15}, axes = {lr = {0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8}}}
]]):format(fake))
  local sd = dir .. "/resume"
  local args = {spec, "--jobs", "2", "--runs", dir}
  -- 1: Ctrl-C (SIGINT) once two trials are done
  local pid = sweep_bg(dir, args)
  check(wait_until(function() return count_status(sd, "done") >= 2 end, 60), "two trials finish")
  check_error(function() experiment.sweep(spec, {runs = dir, resume = true, quiet = true}) end,
    "another process is running it")
  proc.kill(pid, "INT")
  check_eq({proc.wait(pid, true)}, {"exited", 130})
  check(read(dir .. "/bg_err.txt"):find("interrupted: %d of 8 trials finished"), read(dir .. "/bg_err.txt"))
  local first = {}
  for _, d in ipairs(trial_dirs(sd)) do
    local st = status_of(d)
    if st.status == "done" then first[d] = st.pid end
    check(st.status == "done" or st.status == "interrupted", "after SIGINT a trial is done or interrupted: " .. st.status)
  end
  local ndone = count_status(sd, "done")
  check(ndone >= 2 and ndone < 8, "some trials left")
  -- without --resume, the earlier run is not overwritten
  local code, _, err = sweep_cli(dir, table.concat(args, " "))
  check(code == 1 and err:find("holds an earlier run; pass --resume", 1, true), err)
  -- 2: resume, then SIGKILL: the running trials die with the sweep
  pid = sweep_bg(dir, {spec, "--jobs", "2", "--runs", dir, "--resume"})
  check(wait_until(function() return count_status(sd, "done") >= ndone + 1 end, 60), "one more trial finishes")
  proc.kill(pid, "KILL")
  proc.wait(pid, true)
  for _, d in ipairs(trial_dirs(sd)) do
    local st = status_of(d)
    if st and st.status == "running" then
      check(wait_until(function() return not io.open("/proc/" .. st.pid .. "/stat") end, 10),
        "a trial of a killed sweep does not outlive it")
    end
  end
  -- 3: resume to the end
  local before = {}
  for _, d in ipairs(trial_dirs(sd)) do
    local st = status_of(d)
    if st and st.status == "done" then before[d] = st.pid end
  end
  local out
  code, out, err = sweep_cli(dir, table.concat(args, " ") .. " --resume")
  check_eq(code, 0, err)
  local n = 0
  for _ in pairs(before) do n = n + 1 end
  check(err:find(("resume: %d of 8 trials finished earlier, %d to run"):format(n, 8 - n), 1, true), err)
  check_eq(count_status(sd, "done"), 8)
  for d, p in pairs(before) do check_eq(status_of(d).pid, p, d .. " was not run again") end
  for d, p in pairs(first) do check_eq(status_of(d).pid, p, d .. " was not run again") end
  check(out:find("| 1    | 008-lr=0.8", 1, true), "the best trial (lowest loss) first:\n" .. out)
  os.execute("rm -rf '" .. dir .. "'")
end)

test("moontorch sweep: usage, bad options and spec errors are one-line messages", function()
  local dir = tmpdir()
  local code, out = sweep_cli(dir, "--help")
  check(code == 0 and out:find("usage: moontorch sweep SPEC.lua", 1, true), out)
  local err
  code, _, err = sweep_cli(dir, "spec.lua --jobs zero")
  check(code == 1 and err == "moontorch sweep: --jobs needs a positive integer\n", err)
  local spec = write_spec(dir, ("return {script = %q, axes = {lr = {}}, metric = 'loss'}"):format(fake))
  code, _, err = sweep_cli(dir, spec)
  check(code == 1 and err == "moontorch sweep: sweep spec: axes.lr: empty list\n", err)
  spec = write_spec(dir, ("return {script = %q, axes = {lr = {0.1, 0.2}}, metric = 'loss'}"):format(fake))
  code, out = sweep_cli(dir, spec .. " --dry-run")
  check(code == 0 and out:find("001%-lr=0.1\t%-%-lr 0.1") and out:find("002%-lr=0.2"), out)
  os.execute("rm -rf '" .. dir .. "'")
end)

test("a sweep can run again with resume in the same process (its lock is released)", function()
  local dir = tmpdir()
  local spec = {name = "twice", script = fake, metric = "loss", base = {steps = 1}, axes = {lr = {0.1, 0.2}}}
  local a = experiment.sweep(spec, {runs = dir, quiet = true})
  local b = experiment.sweep(spec, {runs = dir, quiet = true, resume = true})
  check_eq({a.done, b.done}, {2, 2})
  check(b.trials[1].resumed and b.trials[2].resumed, "finished trials are kept")
  os.execute("rm -rf '" .. dir .. "'")
end)
