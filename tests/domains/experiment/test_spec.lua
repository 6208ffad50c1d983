-- tests/experiment/test_spec.lua -- sweep specs (lua/torch/experiment/spec.lua):
-- every problem is found before a trial starts and named by its path in the
-- spec; grids, random draws and repeats expand into the expected trials.
local experiment = torch.experiment
local here = debug.getinfo(1, "S").source:match("^@(.*)/[^/]*$") or "tests/experiment"
local script = here .. "/fake_train.lua"

local function spec(over)
  local s = {name = "t", script = script, base = {steps = 2}, axes = {lr = {0.1, 0.2}}, metric = "loss"}
  for k, v in pairs(over or {}) do s[k] = v end
  return s
end

local function trials(over) return experiment.trials(spec(over)) end

test("unknown keys, type errors and empty axes are errors naming the path in the spec", function()
  check_error(function() trials{axis = {}} end, "sweep spec: unknown key 'axis' (known: axes, base,")
  check_error(function() trials{axes = {lr = {}}} end, "sweep spec: axes.lr: empty list")
  check_error(function() trials{axes = {lr = {0.1, {}}}} end, "sweep spec: axes.lr[2]: expected a number, string or boolean, got a table")
  check_error(function() trials{axes = {lr = 0.1}} end, "sweep spec: axes.lr: expected a list of values, got 0.1")
  check_error(function() trials{base = {epochs = {1}}} end, "sweep spec: base.epochs: expected a number, string or boolean")
  check_error(function() trials{base = "x"} end, "sweep spec: base: expected a table of options")
  check_error(function() trials{jobs = 0} end, "sweep spec: jobs: expected an integer >= 1, got 0")
  check_error(function() trials{jobs = "2"} end, "sweep spec: jobs: expected an integer >= 1, got '2'")
  check_error(function() trials{repeats = 1.5} end, "sweep spec: repeats: expected an integer >= 1")
  check_error(function() trials{metric = 3} end, "sweep spec: metric: expected a name or {name=, mode=, use=}")
  check_error(function() trials{metric = {name = "loss", mode = "lower"}} end, "sweep spec: metric.mode: expected 'min' or 'max'")
  check_error(function() trials{metric = {name = "loss", goal = "min"}} end, "sweep spec: metric: unknown key 'goal'")
  check_error(function() trials{metric = false} end, "sweep spec: metric: expected a name")
  check_error(function() trials{search = "bayes"} end, "sweep spec: search: expected 'grid' or 'random'")
  check_error(function() trials{axes = {lr = {log_uniform = {1e-4, 1e-2}}}} end,
    "sweep spec: axes.lr: a range ({log_uniform = ...}) needs search = 'random'")
  check_error(function() trials{search = "random", samples = 3, axes = {lr = {log_uniform = {0, 1}}}} end,
    "sweep spec: axes.lr.log_uniform: low must be positive")
  check_error(function() trials{search = "random", axes = {lr = {0.1}}} end, "sweep spec: samples: missing")
  check_error(function() trials{samples = 3} end, "sweep spec: samples: only for search = 'random'")
  check_error(function() trials{script = "/nonexistent/train.lua"} end, "sweep spec: script: cannot read /nonexistent/train.lua")
  check_error(function() trials{name = "a b"} end, "sweep spec: name: expected a name of letters")
  check_error(function() trials{env = {X = {}}} end, "sweep spec: env.X: expected a string or number")
  check_error(function() trials{repeats = 2, axes = {seed = {1, 2}}} end, "sweep spec: axes.seed: conflicts with repeats")
  check_error(function() trials{plot = {}} end, "sweep spec: plot: empty list")
  local s = spec()
  s.metric = nil
  check_error(function() experiment.trials(s) end, "sweep spec: metric: missing")
end)

test("a spec file is checked the same way; its name defaults to the file's", function()
  local path = os.tmpname() .. "_myspec.lua"
  local f = assert(io.open(path, "w"))
  f:write(("return {script = %q, axes = {lr = {}}, metric = 'loss'}"):format(script))
  f:close()
  check_error(function() experiment.trials(path) end, "sweep spec: axes.lr: empty list")
  f = assert(io.open(path, "w"))
  f:write(("return {script = %q, axes = {lr = {0.1}}, metric = 'loss'}"):format(script))
  f:close()
  check_eq(experiment.load_spec(path).name, path:match("([^/]+)%.lua$"))
  f = assert(io.open(path, "w"))
  f:write("return 42")
  f:close()
  check_error(function() experiment.trials(path) end, "must return a table, got number")
  os.remove(path)
  check_error(function() experiment.trials(path) end, "sweep spec: cannot load")
end)

test("a grid is every combination, axes in name order; options become --key value arguments", function()
  local ts = trials{axes = {lr = {0.1, 0.01}, batch_size = {32, 64, 128}}}
  check_eq(#ts, 6)
  check_eq(ts[1].name, "001-batch_size=32-lr=0.1")
  check_eq(ts[2].name, "002-batch_size=32-lr=0.01")
  check_eq(ts[6].name, "006-batch_size=128-lr=0.01")
  check_eq(ts[6].options, {steps = 2, batch_size = 128, lr = 0.01})
  local S = require "torch.experiment.spec"
  check_eq(S.args{batch_size = 32, lr = 1e-4, resume = true, untied = false, model = "cnn"},
    {"--batch-size", "32", "--lr", "0.0001", "--model", "cnn", "--resume"})
end)

test("random search draws from ranges and lists, the same draws for the same seed", function()
  local over = {search = "random", samples = 20, seed = 7,
    axes = {lr = {log_uniform = {1e-4, 1e-2}}, width = {int = {2, 4}}, act = {"relu", "gelu"}, p = {uniform = {0, 0.5}}}}
  local a, b = trials(over), trials(over)
  check_eq(#a, 20)
  local widths, acts = {}, {}
  for i, t in ipairs(a) do
    check_eq(t.params, b[i].params)
    local p = t.params
    check(p.lr >= 1e-4 and p.lr <= 1e-2, "lr in range")
    check(math.type(p.width) == "integer" and p.width >= 2 and p.width <= 4, "width an integer in range")
    check(p.p >= 0 and p.p <= 0.5, "p in range")
    widths[p.width], acts[p.act] = true, true
  end
  check(widths[2] and widths[3] and widths[4], "all integer values drawn")
  check(acts.relu and acts.gelu, "both choices drawn")
  over.seed = 8
  local c = trials(over)
  check(c[1].params.lr ~= a[1].params.lr, "another seed draws other values")
end)

test("repeats run each configuration with seeds seed, seed+1, ...", function()
  local ts = trials{repeats = 3, seed = 10}
  check_eq(#ts, 6)
  check_eq(ts[1].options.seed, 10)
  check_eq(ts[3].options.seed, 12)
  check_eq(ts[4].name, "004-lr=0.2-seed=10")
end)

test("the metric's direction defaults to max for accuracies, min otherwise", function()
  check_eq(experiment.load_spec(spec{metric = "val_loss"}).metric, {name = "val_loss", mode = "min", use = "last"})
  check_eq(experiment.load_spec(spec{metric = "test_accuracy"}).metric.mode, "max")
  check_eq(experiment.load_spec(spec{metric = {name = "score", mode = "max", use = "best"}}).metric,
    {name = "score", mode = "max", use = "best"})
end)

test("options the script never mentions are reported as likely typos", function()
  local s = experiment.load_spec(spec{base = {stpes = 3}})
  check(#s.warnings == 1 and s.warnings[1]:find("base.stpes: .* does not mention %-%-stpes"), s.warnings[1])
end)
