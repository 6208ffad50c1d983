-- torch.experiment.spec -- sweep specifications: loading a spec file,
-- checking every field before any trial starts (errors name the path in
-- the spec: "sweep spec: axes.lr: empty list"), and expanding the axes into
-- the list of trials (grid, random samples with a seed, repeats).
local M = {}

local function fail(path, fmt, ...)
  error("sweep spec: " .. (path ~= "" and path .. ": " or "") .. fmt:format(...), 0)
end

-- The fields of a spec: kind, description (for messages and docs).
M.FIELDS = {
  name = "a name for the sweep (letters, digits, _ . -); default: the spec file's name",
  script = "path of the training script (relative to the current directory or to the spec file)",
  base = "options given to every trial: {epochs = 1, model = 'mlp'} -> --epochs 1 --model mlp",
  axes = "the options that vary: {lr = {0.01, 0.001}} (grid), or ranges {log_uniform = {1e-4, 1e-2}} (random)",
  search = "'grid' (every combination, the default) or 'random' (samples draws)",
  samples = "number of random draws (search = 'random')",
  seed = "seed of the random draws and first seed of the repeats (default 0)",
  repeats = "runs of each configuration with seeds seed, seed+1, ... passed as --seed (default 1)",
  metric = "the metric to sort by: 'val_loss' or {name = 'accuracy', mode = 'max', use = 'last'|'best'}",
  jobs = "trials run at the same time (default 1; moontorch sweep --jobs overrides)",
  threads = "threads per trial: OMP_NUM_THREADS and --threads when the script has it (default cores / jobs)",
  runs = "directory of the results (default 'runs'): runs/<name>/<trial>/",
  checkpoint = "pass --checkpoint <trial dir>/checkpoint.safetensors: 'auto' (if the script has the option), "
    .. "true or false",
  env = "extra environment variables of every trial: {NAME = 'value'}",
  timeout = "seconds after which a trial is stopped and counted as failed",
  plot = "metric name(s) to plot against the step: summary.png (first) and summary_<name>.png",
  x = "the logged field used as the x axis of the plots (default 'step')",
  stop_on_nan = "stop a trial whose metric (or a logged *loss*) becomes NaN or infinite (default true)",
}

local function keys_list(t)
  local ks = {}
  for k in pairs(t) do ks[#ks + 1] = k end
  table.sort(ks)
  return table.concat(ks, ", ")
end

local function is_scalar(v)
  local t = type(v)
  return t == "number" or t == "string" or t == "boolean"
end

local function describe(v)
  return type(v) == "string" and ("'" .. v .. "'") or (type(v) == "table" and "a table" or tostring(v))
end

local function check_option_name(path, k)
  if type(k) ~= "string" or not k:match("^[%a][%w_%-]*$") then
    fail(path, "option names must be strings of letters, digits, _ and -, got %s", describe(k))
  end
end

local function check_int(path, v, min)
  if math.type(v) ~= "integer" or v < min then
    fail(path, "expected an integer >= %d, got %s", min, describe(v))
  end
end

local function check_list(path, v, what)
  if type(v) ~= "table" then fail(path, "expected %s, got %s", what, describe(v)) end
  local n = #v
  for k in pairs(v) do
    if math.type(k) ~= "integer" or k < 1 or k > n then fail(path, "expected %s, but it has the key %s", what,
      describe(k)) end
  end
  return n
end

-- Checks an axis: a non-empty list of scalars, or (random search only) a
-- range {uniform = {a, b}}, {log_uniform = {a, b}} or {int = {a, b}}.
local function check_axis(path, v, random)
  if type(v) ~= "table" then fail(path, "expected a list of values, got %s", describe(v)) end
  local kind = next(v)
  if type(kind) == "string" then
    if kind ~= "uniform" and kind ~= "log_uniform" and kind ~= "int" then
      fail(path, "unknown range '%s' (uniform, log_uniform, int) -- or give a list of values", kind)
    end
    if next(v, kind) ~= nil then fail(path, "a range has one key (uniform, log_uniform or int)") end
    if not random then fail(path, "a range ({%s = ...}) needs search = 'random'; a grid takes a list of values", kind) end
    local r = v[kind]
    local n = check_list(path .. "." .. kind, r, "{low, high}")
    if n ~= 2 or type(r[1]) ~= "number" or type(r[2]) ~= "number" or r[1] > r[2] then
      fail(path .. "." .. kind, "expected {low, high} with low <= high")
    end
    if kind == "log_uniform" and r[1] <= 0 then fail(path .. ".log_uniform", "low must be positive") end
    if kind == "int" and (math.type(r[1]) ~= "integer" or math.type(r[2]) ~= "integer") then
      fail(path .. ".int", "expected integers")
    end
    return
  end
  local n = check_list(path, v, "a list of values")
  if n == 0 then fail(path, "empty list") end
  for i = 1, n do
    if not is_scalar(v[i]) then fail(("%s[%d]"):format(path, i), "expected a number, string or boolean, got %s",
      describe(v[i])) end
  end
end

local function check_metric(m)
  if type(m) == "string" then m = {name = m} end
  if type(m) ~= "table" then fail("metric", "expected a name or {name=, mode=, use=}, got %s", describe(m)) end
  for k in pairs(m) do
    if k ~= "name" and k ~= "mode" and k ~= "use" then fail("metric", "unknown key '%s' (name, mode, use)",
      tostring(k)) end
  end
  if type(m.name) ~= "string" or m.name == "" then fail("metric.name", "expected the name of a logged metric") end
  local mode = m.mode or (m.name:find("acc") and "max" or "min")
  if mode ~= "min" and mode ~= "max" then fail("metric.mode", "expected 'min' or 'max', got %s", describe(mode)) end
  local use = m.use or "last"
  if use ~= "last" and use ~= "best" then fail("metric.use", "expected 'last' or 'best', got %s", describe(use)) end
  return {name = m.name, mode = mode, use = use}
end

local function exists(path)
  local f = io.open(path, "rb")
  if f then f:close() end
  return f ~= nil
end

-- Reads the script's source to learn which options it mentions.
local function script_options(path)
  local f = io.open(path, "rb")
  local src = f and f:read("a") or ""
  if f then f:close() end
  local opts = {}
  for name in src:gmatch("%-%-(%a[%w%-]*)") do opts[name] = true end
  return opts
end

-- Checks a spec table (from a file: dir is the file's directory) and
-- returns a normalised copy with the defaults filled in. Raises "sweep
-- spec: <path>: <problem>" at the first problem.
function M.check(spec, dir)
  if type(spec) ~= "table" then fail("", "expected a table, got %s", describe(spec)) end
  for k in pairs(spec) do
    if M.FIELDS[k] == nil then fail("", "unknown key '%s' (known: %s)", tostring(k), keys_list(M.FIELDS)) end
  end
  local s = {}
  if spec.name == nil then fail("name", "missing (a name for the sweep's directory)") end
  if type(spec.name) ~= "string" or not spec.name:match("^[%w][%w_.%-]*$") then
    fail("name", "expected a name of letters, digits, _ . and -, got %s", describe(spec.name))
  end
  s.name = spec.name
  if type(spec.script) ~= "string" then
    fail("script", spec.script == nil and "missing (the path of the training script)" or "expected a path, got %s",
      describe(spec.script))
  end
  s.script = spec.script
  if not exists(s.script) and dir and not s.script:match("^/") and exists(dir .. "/" .. s.script) then
    s.script = dir .. "/" .. s.script
  end
  if not exists(s.script) then fail("script", "cannot read %s", spec.script) end
  s.base = {}
  if spec.base ~= nil then
    if type(spec.base) ~= "table" then fail("base", "expected a table of options, got %s", describe(spec.base)) end
    for k, v in pairs(spec.base) do
      check_option_name("base", k)
      if not is_scalar(v) then fail("base." .. k, "expected a number, string or boolean, got %s", describe(v)) end
      s.base[k] = v
    end
  end
  s.search = spec.search or "grid"
  if s.search ~= "grid" and s.search ~= "random" then
    fail("search", "expected 'grid' or 'random', got %s", describe(s.search))
  end
  local random = s.search == "random"
  s.axes = {}
  if spec.axes ~= nil then
    if type(spec.axes) ~= "table" then fail("axes", "expected a table {option = {values...}}, got %s",
      describe(spec.axes)) end
    for k, v in pairs(spec.axes) do
      check_option_name("axes", k)
      check_axis("axes." .. k, v, random)
      s.axes[k] = v
    end
  end
  if random then
    if spec.samples == nil then fail("samples", "missing: search = 'random' needs the number of draws") end
    check_int("samples", spec.samples, 1)
    s.samples = spec.samples
  elseif spec.samples ~= nil then
    fail("samples", "only for search = 'random'")
  end
  s.seed = spec.seed or 0
  check_int("seed", s.seed, math.mininteger)
  s.repeats = spec.repeats or 1
  check_int("repeats", s.repeats, 1)
  if s.repeats > 1 and s.axes.seed then fail("axes.seed", "conflicts with repeats (which set --seed)") end
  if spec.metric == nil then fail("metric", "missing (the logged metric to sort the trials by, e.g. 'val_loss')") end
  s.metric = check_metric(spec.metric)
  s.jobs = spec.jobs or 1
  check_int("jobs", s.jobs, 1)
  if spec.threads ~= nil then check_int("threads", spec.threads, 1) end
  s.threads = spec.threads
  s.runs = spec.runs or "runs"
  if type(s.runs) ~= "string" or s.runs == "" then fail("runs", "expected a directory, got %s", describe(s.runs)) end
  s.checkpoint = spec.checkpoint
  if s.checkpoint == nil then s.checkpoint = "auto" end
  if s.checkpoint ~= "auto" and type(s.checkpoint) ~= "boolean" then
    fail("checkpoint", "expected 'auto', true or false, got %s", describe(s.checkpoint))
  end
  s.env = {}
  if spec.env ~= nil then
    if type(spec.env) ~= "table" then fail("env", "expected a table {NAME = 'value'}, got %s", describe(spec.env)) end
    for k, v in pairs(spec.env) do
      if type(k) ~= "string" or not k:match("^[%a_][%w_]*$") then fail("env", "bad variable name %s", describe(k)) end
      if type(v) ~= "string" and type(v) ~= "number" then
        fail("env." .. k, "expected a string or number, got %s", describe(v))
      end
      s.env[k] = tostring(v)
    end
  end
  if spec.timeout ~= nil and (type(spec.timeout) ~= "number" or spec.timeout <= 0) then
    fail("timeout", "expected a positive number of seconds, got %s", describe(spec.timeout))
  end
  s.timeout = spec.timeout
  local plot = spec.plot or {s.metric.name}
  if type(plot) == "string" then plot = {plot} end
  local n = check_list("plot", plot, "a metric name or a list of them")
  if n == 0 then fail("plot", "empty list") end
  for i = 1, n do
    if type(plot[i]) ~= "string" then fail(("plot[%d]"):format(i), "expected a metric name, got %s",
      describe(plot[i])) end
  end
  s.plot = plot
  s.x = spec.x or "step"
  if type(s.x) ~= "string" then fail("x", "expected the name of a logged field, got %s", describe(s.x)) end
  s.stop_on_nan = spec.stop_on_nan
  if s.stop_on_nan == nil then s.stop_on_nan = true end
  if type(s.stop_on_nan) ~= "boolean" then fail("stop_on_nan", "expected true or false") end
  -- options the script does not mention are most likely typos
  s.script_options = script_options(s.script)
  s.warnings = {}
  local function mentioned(path, k)
    local flag = k:gsub("_", "-")
    if not s.script_options[flag] then
      s.warnings[#s.warnings + 1] = ("sweep spec: %s: %s does not mention --%s"):format(path, s.script, flag)
    end
  end
  for k in pairs(s.base) do mentioned("base." .. k, k) end
  for k in pairs(s.axes) do mentioned("axes." .. k, k) end
  return s
end

-- Loads a spec: a table, or the path of a Lua file returning one (run
-- with only the safe standard libraries). Returns the checked spec.
function M.load(spec_or_path)
  if type(spec_or_path) == "table" then return M.check(spec_or_path, nil) end
  if type(spec_or_path) ~= "string" then fail("", "expected a table or the path of a spec file, got %s",
    describe(spec_or_path)) end
  local path = spec_or_path
  local env = {math = math, string = string, table = table, ipairs = ipairs, pairs = pairs, tostring = tostring,
    tonumber = tonumber, os = {getenv = os.getenv}}
  local chunk, err = loadfile(path, "t", env)
  if not chunk then error("sweep spec: cannot load " .. tostring(err), 0) end
  local ok, spec = pcall(chunk)
  if not ok then error("sweep spec: error in " .. path .. ": " .. tostring(spec), 0) end
  if type(spec) ~= "table" then error("sweep spec: " .. path .. " must return a table, got " .. type(spec), 0) end
  if spec.name == nil then
    spec.name = path:match("([^/]+)$"):gsub("%.lua$", "")
  end
  return M.check(spec, path:match("^(.*)/[^/]*$") or ".")
end

------------------------------------------------------------------------
-- trials
------------------------------------------------------------------------

-- A small random generator of its own (64-bit LCG, output mixed like
-- splitmix64), so that draws depend only on the spec's seed.
local function rng(seed)
  local state = seed * 0x9E3779B97F4A7C15 + 0x632BE59BD9B4E019
  return function()
    state = state * 6364136223846793005 + 1442695040888963407
    local z = state
    z = (z ~ (z >> 30)) * -4658895280553007687
    z = (z ~ (z >> 27)) * -7723592293110705685
    z = z ~ (z >> 31)
    return (z >> 11) / 9007199254740992.0 -- [0, 1)
  end
end

-- 4 significant digits: enough for a hyperparameter, short in names.
local function round4(v) return tonumber(("%.4g"):format(v)) + 0.0 end

-- A value from an axis with the random draw u in [0, 1).
local function draw(axis, u)
  if axis.uniform then return round4(axis.uniform[1] + u * (axis.uniform[2] - axis.uniform[1])) end
  if axis.log_uniform then
    local a, b = math.log(axis.log_uniform[1]), math.log(axis.log_uniform[2])
    return round4(math.exp(a + u * (b - a)))
  end
  if axis.int then return axis.int[1] + math.floor(u * (axis.int[2] - axis.int[1] + 1)) end
  return axis[1 + math.floor(u * #axis)]
end

-- How a value appears in a trial's name and on the command line.
function M.format_value(v)
  if math.type(v) == "float" then
    local s = ("%.6g"):format(v)
    if tonumber(s) ~= v then s = ("%.15g"):format(v) end
    if tonumber(s) ~= v then s = ("%.17g"):format(v) end
    return s
  end
  return tostring(v)
end

local function trial_name(index, width, params, keys)
  local parts = {("%0" .. width .. "d"):format(index)}
  for _, k in ipairs(keys) do
    local v = params[k]
    if v ~= nil then parts[#parts + 1] = k .. "=" .. M.format_value(v):gsub("[^%w.+%-]", "_") end
  end
  return table.concat(parts, "-")
end

-- The trials of a checked spec, in order: {index, name, params (the axis
-- values and the seed of a repeat), options (base + params)}.
function M.trials(s)
  local keys = {}
  for k in pairs(s.axes) do keys[#keys + 1] = k end
  table.sort(keys)
  local points = {}
  if s.search == "grid" then
    points[1] = {}
    for _, k in ipairs(keys) do
      local grown = {}
      for _, p in ipairs(points) do
        for _, v in ipairs(s.axes[k]) do
          local q = {}
          for a, b in pairs(p) do q[a] = b end
          q[k] = v
          grown[#grown + 1] = q
        end
      end
      points = grown
    end
  else
    local u = rng(s.seed)
    for i = 1, s.samples do
      local p = {}
      for _, k in ipairs(keys) do p[k] = draw(s.axes[k], u()) end
      points[i] = p
    end
  end
  local name_keys = {table.unpack(keys)}
  if s.repeats > 1 then
    local with_seeds = {}
    local seed0 = s.base.seed or s.seed
    for _, p in ipairs(points) do
      for r = 1, s.repeats do
        local q = {}
        for a, b in pairs(p) do q[a] = b end
        q.seed = seed0 + r - 1
        with_seeds[#with_seeds + 1] = q
      end
    end
    points = with_seeds
    name_keys[#name_keys + 1] = "seed"
  end
  local width = math.max(3, #tostring(#points))
  local trials = {}
  for i, p in ipairs(points) do
    local options = {}
    for k, v in pairs(s.base) do options[k] = v end
    for k, v in pairs(p) do options[k] = v end
    trials[i] = {index = i, name = trial_name(i, width, p, name_keys), params = p, options = options}
  end
  return trials, name_keys
end

-- The command-line arguments of a trial's options, sorted by name:
-- {lr = 0.01, resume = true} -> {"--lr", "0.01", "--resume"}; false is left out.
function M.args(options)
  local keys, out = {}, {}
  for k in pairs(options) do keys[#keys + 1] = k end
  table.sort(keys)
  for _, k in ipairs(keys) do
    local v, flag = options[k], "--" .. k:gsub("_", "-")
    if v == true then out[#out + 1] = flag
    elseif v ~= false then
      out[#out + 1] = flag
      out[#out + 1] = M.format_value(v)
    end
  end
  return out
end

return M
