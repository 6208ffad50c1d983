-- torch.profiler -- PyTorch's profiler API: profile{activities=,
-- record_shapes=, profile_memory=} as a <close> guard or around a function,
-- record_function ranges, key_averages():table{}, export_chrome_trace and a
-- time breakdown (compute / memory copies / idle). Events are recorded in C
-- (graph/profiler.c) through op wrappers installed only while a profile
-- runs (hooks.lua). docs/profiler.md.
local torch = require "torch"
local C = torch._profiler
local hooks = require "torch.profiler.hooks"
local events = require "torch.profiler.events"
local KA = require "torch.profiler.key_averages"

local profiler = {__help = "torch.profiler: profile{activities=, record_shapes=, profile_memory=} (a <close> guard "
  .. "or profile(opts, fn)), record_function(name), prof:key_averages():table{}, export_chrome_trace, breakdown "
  .. "(docs/profiler.md)"}

profiler.ProfilerActivity = {CPU = "cpu", CUDA = "cuda"}

local Profile = {__name = "torch.profiler.profile"}
Profile.__index = Profile

local OPTS = "activities record_shapes profile_memory with_stack schedule on_trace_ready with_flops with_modules"

local function check_opts(given)
  if given == nil then return {} end
  if type(given) ~= "table" then error("torch.profiler.profile: options must be a table", 3) end
  torch._check_options("torch.profiler.profile", given, OPTS)
  local opts = {}
  for k, v in pairs(given) do opts[k] = v end
  for _, a in ipairs(opts.activities or {"cpu"}) do
    local s = tostring(a):lower()
    if s == "cuda" then
      if not torch.cuda.is_available() then
        error("torch.profiler.profile: activity 'cuda' is not available (no CUDA GPU here); use {'cpu'}", 3)
      end
      opts.cuda = true
    elseif s ~= "cpu" then
      error(("torch.profiler.profile: unknown activity '%s' (use 'cpu' or 'cuda')"):format(tostring(a)), 3)
    end
  end
  return opts
end

-- Starts recording (profile() calls it).
function Profile:start()
  if self.running then return self end
  if C.active() then
    error("torch.profiler.profile: a profile is already running; stop it before starting another", 2)
  end
  self.cols, self._records = nil, nil
  self._hooks = hooks.install() -- before the recorder starts: installing calls no recorded op
  local ok, err = pcall(C.start, self.record_shapes, self.profile_memory, self.cuda)
  if not ok then
    hooks.remove(self._hooks)
    error(err, 2)
  end
  self.running = true
  return self
end

-- Stops recording; the profile's results become available.
function Profile:stop()
  if not self.running then return self end
  hooks.remove(self._hooks)
  self.cols = C.stop()
  self.running = false
  return self
end
Profile.__close = Profile.stop

local function finished(self, fn)
  if self.running then error(fn .. ": the profile is still running; call it after the profile block", 3) end
  if not self.cols then error(fn .. ": the profile never ran", 3) end
end

-- prof:events() -> the recorded events (see events.lua), in start order.
function Profile:events()
  finished(self, "events")
  self._records = self._records or events.records(self.cols)
  return self._records
end

-- prof:key_averages([{group_by_input_shape=false}])
function Profile:key_averages(opts)
  finished(self, "key_averages")
  if type(opts) == "table" then torch._check_options("key_averages", opts, "group_by_input_shape") end
  local by_shape = type(opts) == "table" and opts.group_by_input_shape or opts == true
  return KA.group(self:events(), by_shape, self.profile_memory, self.record_shapes, self.cuda)
end

local function json_string(s)
  return '"' .. s:gsub('[%c"\\]', function(c)
    return ({['"'] = '\\"', ["\\"] = "\\\\", ["\n"] = "\\n", ["\t"] = "\\t"})[c] or ("\\u%04x"):format(c:byte())
  end) .. '"'
end

local CAT = {op = "cpu_op", range = "user_annotation", autograd = "autograd", jit = "jit_graph"}

-- prof:export_chrome_trace(path): Chrome trace event JSON (complete "X"
-- events, microseconds), readable by Perfetto and chrome://tracing.
function Profile:export_chrome_trace(path)
  finished(self, "export_chrome_trace")
  if type(path) ~= "string" then error("export_chrome_trace: path must be a string", 2) end
  local f, err = io.open(path, "w")
  if not f then error(("export_chrome_trace: cannot write '%s': %s"):format(path, err), 2) end
  local pid = require("torch.utils.tensorboard._summary").getpid()
  local base = self.cols.start_wall * 1e6
  local parts = {}
  for i, e in ipairs(self:events()) do
    local args = {}
    if e.input_shapes then args[#args + 1] = '"Input Dims":' .. e.input_shapes end
    if self.profile_memory then args[#args + 1] = ('"Bytes":%d'):format(e.cpu_memory_usage) end
    parts[i] = ('{"ph":"X","cat":"%s","name":%s,"pid":%d,"tid":%d,"ts":%.3f,"dur":%.3f,"args":{%s}}'):format(
      CAT[e.kind], json_string(e.name), pid, pid, base + e.start_us, e.duration_us, table.concat(args, ","))
  end
  f:write('{"schemaVersion":1,"displayTimeUnit":"ms","traceEvents":[\n', table.concat(parts, ",\n"), "\n]}\n")
  f:close()
  return path
end

-- ops that only move or convert data
local COPY = {copy_ = true, contiguous = true, to = true, clone = true, cpu = true, cuda = true, float = true,
  double = true, half = true, bfloat16 = true, long = true, int = true, short = true, byte = true, bool = true,
  char = true}

local Breakdown = {}
Breakdown.__index = Breakdown
Breakdown.__tostring = function(b)
  return ("profiled %s: compute %.1f%%, memory copies %.1f%%, idle %.1f%%"):format(KA.format_time(b.total_us),
    b.compute_pct, b.memcpy_pct, b.idle_pct)
end

-- prof:breakdown([{verbose=true}]) -> {total_us, compute_us, memcpy_us,
-- idle_us and their *_pct}: the profiled wall time split, in the manner of
-- Holistic Trace Analysis, into time in ops (compute), in copy ops (memory
-- copies: copy_, contiguous, to, clone, dtype conversions) and outside
-- any op (idle: the interpreter, data loading, gaps). Printed unless
-- verbose=false.
function Profile:breakdown(opts)
  finished(self, "breakdown")
  local recs = self:events()
  local total = self.cols.duration / 1000
  local busy, copy = 0, 0
  local in_op = {} -- event index -> true when it or an ancestor is an op-like event
  for i, e in ipairs(recs) do
    local p = e.parent
    local nested = p and in_op[p]
    if e.kind ~= "range" then
      in_op[i] = true
      if not nested then busy = busy + e.duration_us end
      if COPY[e.name] then copy = copy + e.self_us end
    else
      in_op[i] = nested or false
    end
  end
  local b = setmetatable({total_us = total, compute_us = busy - copy, memcpy_us = copy, idle_us = total - busy},
    Breakdown)
  local function pct(x) return total > 0 and 100 * x / total or 0 end
  b.compute_pct, b.memcpy_pct, b.idle_pct = pct(b.compute_us), pct(b.memcpy_us), pct(b.idle_us)
  if not (type(opts) == "table" and opts.verbose == false) then print(tostring(b)) end
  return b
end

Profile.__tostring = function(self)
  return ("torch.profiler.profile(%s)"):format(self.running and "running" or (self.cols and
    (#self.cols.name .. " events") or "not started"))
end

-- profile([opts][, fn]): with fn, profiles fn(prof) and returns prof
-- (stopping also when fn raises); without, returns a running profile to
-- hold in a <close> variable (or to :stop()).
function profiler.profile(opts, fn)
  if type(opts) == "function" and fn == nil then opts, fn = nil, opts end
  opts = check_opts(opts)
  if fn ~= nil and type(fn) ~= "function" then error("torch.profiler.profile: the second argument must be a function", 2) end
  local prof = setmetatable({record_shapes = opts.record_shapes and true or false,
    profile_memory = opts.profile_memory and true or false, cuda = opts.cuda or false}, Profile)
  prof:start()
  if fn then
    local ok, err = pcall(fn, prof)
    prof:stop()
    if not ok then error(err, 0) end
  end
  return prof
end

local Range = {}
Range.__index = Range
Range.__close = function(r)
  if r.token then
    C.range_end(r.token)
    r.token = nil
  end
end
Range.exit = Range.__close

-- record_function(name[, fn]): a named range in the profile. Without fn,
-- a guard for a <close> variable; with fn, runs fn inside the range and
-- returns its results.
function profiler.record_function(name, fn)
  if type(name) ~= "string" then error("record_function: name must be a string, got " .. type(name), 2) end
  local r = setmetatable({name = name, token = C.range_begin(name)}, Range)
  if fn then
    local res = table.pack(pcall(fn))
    Range.__close(r)
    if not res[1] then error(res[2], 0) end
    return table.unpack(res, 2, res.n)
  end
  return r
end

-- The functions and the methods users call are public entry points: an
-- error raised inside the library names them at the caller's line.
for _, k in ipairs{"profile", "record_function"} do profiler[k] = torch._public(profiler[k], "torch.profiler." .. k) end
for k, f in pairs(Profile) do
  if type(f) == "function" and k:sub(1, 1) ~= "_" then Profile[k] = torch._public(f, "torch.profiler.profile." .. k) end
end

return profiler
