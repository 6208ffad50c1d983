-- torch.utils.tensorboard.text_writer -- CSVWriter and JSONLWriter: the
-- calls of SummaryWriter written as plain text lines that any tool reads.
-- Every line is written whole by one write(2) (the files are unbuffered
-- and lines wait in a queue), so a killed process leaves readable files
-- ending at a line boundary. flush_secs = 0 (the default) writes at once.
local torch = require "torch"
local S = require "torch.utils.tensorboard.summary"
local C = require "torch.utils.tensorboard._summary"

local M = {}

---------------------------------------------------------------- line files

local Lines = {}
Lines.__index = Lines

-- Opens path for appending; header is written when the file is empty.
local function open_lines(fn, path, flush_secs, header)
  local f, err = io.open(path, "ab")
  if not f then error(("%s: cannot write '%s': %s"):format(fn, path, err), 4) end
  f:setvbuf("no")
  local self = setmetatable({f = f, path = path, pending = {}, flush_secs = flush_secs, last = C.walltime()}, Lines)
  if header and f:seek("end") == 0 then self:add(header) end
  return self
end

function Lines:add(line)
  self.pending[#self.pending + 1] = line .. "\n"
  if self.flush_secs <= 0 or C.walltime() - self.last >= self.flush_secs then self:flush() end
end

function Lines:flush()
  if #self.pending == 0 or not self.f then return end
  local ok, err = self.f:write(table.concat(self.pending))
  self.pending = {}
  self.last = C.walltime()
  if not ok then error(("cannot write '%s': %s"):format(self.path, err), 3) end
end

function Lines:close()
  if not self.f then return end
  self:flush()
  self.f:close()
  self.f = nil
end

Lines.__gc = function(self) pcall(Lines.close, self) end

---------------------------------------------------------------- formatting

local function num(x)
  if math.type(x) == "integer" then return tostring(x) end
  if x ~= x then return "NaN" end
  if x == math.huge then return "Infinity" end
  if x == -math.huge then return "-Infinity" end
  local s = ("%.15g"):format(x)
  if tonumber(s) ~= x then s = ("%.17g"):format(x) end
  return s
end

local function csv_field(s)
  s = tostring(s)
  if s:find('[,"\r\n]') then s = '"' .. s:gsub('"', '""') .. '"' end
  return s
end

local function json_string(s)
  return '"' .. s:gsub('[%c"\\]', function(c)
    local named = {['"'] = '\\"', ["\\"] = "\\\\", ["\n"] = "\\n", ["\r"] = "\\r", ["\t"] = "\\t"}
    return named[c] or ("\\u%04x"):format(c:byte())
  end) .. '"'
end

-- JSON of a Lua value: numbers, strings, booleans, lists and string-keyed
-- tables (keys sorted).
local function json(v)
  local t = type(v)
  if t == "number" then return num(v) end
  if t == "string" then return json_string(v) end
  if t == "boolean" then return tostring(v) end
  if t == "table" then
    if #v > 0 or next(v) == nil then
      local parts = {}
      for i = 1, #v do parts[i] = json(v[i]) end
      return "[" .. table.concat(parts, ",") .. "]"
    end
    local parts = {}
    for _, k in ipairs(S.sorted_keys(v)) do parts[#parts + 1] = json_string(tostring(k)) .. ":" .. json(v[k]) end
    return "{" .. table.concat(parts, ",") .. "}"
  end
  if torch.is_tensor(v) and v:numel() == 1 then return num(v:item()) end
  return "null"
end
M.json = json

---------------------------------------------------------------- shared base

local Base = {}
Base.__index = Base

local function check_step(fn, step)
  if step == nil then return 0 end
  if type(step) == "number" and step == math.floor(step) then return math.tointeger(step) end
  error(("%s: global_step must be an integer, got %s"):format(fn, tostring(step)), 3)
end

local function check_tag(fn, tag)
  if type(tag) ~= "string" then error(("%s: tag must be a string, got %s"):format(fn, type(tag)), 3) end
end

local function make(cls, name, dir, opts)
  if type(dir) == "table" and opts == nil then dir, opts = dir.log_dir, dir end
  opts = opts or {}
  torch._check_options(name, opts, "log_dir flush_secs")
  if type(dir) ~= "string" then error(("%s: log_dir must be a string (a directory path), got %s"):format(name,
    type(dir)), 3) end
  local ok, err = C.makedirs(dir)
  if not ok then error(("%s: cannot create log directory '%s': %s"):format(name, dir, err), 3) end
  local flush_secs = opts.flush_secs or 0
  if type(flush_secs) ~= "number" then error(name .. ": flush_secs must be a number", 3) end
  local self = setmetatable({log_dir = dir, name = name, flush_secs = flush_secs, files = {}}, cls)
  self:open()
  return self
end

function Base:get_logdir() return self.log_dir end

function Base:file(key, fname, header)
  local f = self.files[key]
  if not f then
    if self.closed then error(self.name .. ": the writer is closed", 3) end
    f = open_lines(self.name, self.log_dir .. "/" .. fname, self.flush_secs, header)
    self.files[key] = f
  end
  return f
end

function Base:add_scalar(tag, value, step, walltime)
  check_tag("add_scalar", tag)
  value = S.number("add_scalar", "scalar_value", value)
  self:scalar_line(tag, value, check_step("add_scalar", step), walltime or C.walltime())
end

-- add_scalars(main_tag, {tag=value}, step): tags main_tag/tag.
function Base:add_scalars(main_tag, values, step, walltime)
  check_tag("add_scalars", main_tag)
  if type(values) ~= "table" then error("add_scalars: tag_scalar_dict must be a table of tag -> number", 2) end
  step, walltime = check_step("add_scalars", step), walltime or C.walltime()
  for _, k in ipairs(S.sorted_keys(values)) do
    self:scalar_line(main_tag .. "/" .. tostring(k), S.number("add_scalars", "the value of '" .. tostring(k) .. "'",
      values[k]), step, walltime)
  end
end

-- add_image writes log_dir/images/<tag>_<step>.png (tag's '/' as '_').
function Base:write_png(tag, img, step, dataformats)
  check_tag("add_image", tag)
  local png = C.png(S.image_hwc(img, dataformats))
  local ok, err = C.makedirs(self.log_dir .. "/images")
  if not ok then error("add_image: " .. err, 3) end
  local rel = ("images/%s_%d.png"):format(tag:gsub("[/\\%c ]", "_"), step)
  local f, msg = io.open(self.log_dir .. "/" .. rel, "wb")
  if not f then error("add_image: " .. msg, 3) end
  f:write(png)
  f:close()
  return rel
end

function Base:flush()
  for _, f in pairs(self.files) do f:flush() end
end

function Base:close()
  for _, f in pairs(self.files) do f:close() end
  self.closed = true
end
Base.__close = Base.close

---------------------------------------------------------------- CSVWriter

-- CSVWriter(log_dir[, {flush_secs=0}]): scalars.csv (step,tag,value,walltime),
-- text.csv (step,tag,text,walltime), hparams.csv (run,name,value),
-- images/*.png. Histograms become scalars <tag>/min, /max, /mean, /std.
local CSVWriter = setmetatable({__name = "CSVWriter"}, {__index = Base,
  __call = torch._public(function(cls, dir, opts) return make(cls, "CSVWriter", dir, opts) end, "CSVWriter")})
CSVWriter.__index = CSVWriter
CSVWriter.__close = Base.close

function CSVWriter:open() self:file("scalars", "scalars.csv", "step,tag,value,walltime") end

function CSVWriter:scalar_line(tag, value, step, wt)
  self:file("scalars", "scalars.csv", "step,tag,value,walltime"):add(
    ("%d,%s,%s,%s"):format(step, csv_field(tag), num(value), ("%.6f"):format(wt)))
end

function CSVWriter:add_text(tag, text, step, walltime)
  check_tag("add_text", tag)
  if type(text) ~= "string" then error("add_text: text_string must be a string, got " .. type(text), 2) end
  self:file("text", "text.csv", "step,tag,text,walltime"):add(("%d,%s,%s,%.6f"):format(check_step("add_text", step),
    csv_field(tag), csv_field(text), walltime or C.walltime()))
end

function CSVWriter:add_histogram(tag, values, step, bins, walltime)
  check_tag("add_histogram", tag)
  if type(bins) == "table" and (bins.bins ~= nil or next(bins) == nil) then bins = bins.bins end
  local h = S.histogram_stats(values, bins)
  step, walltime = check_step("add_histogram", step), walltime or C.walltime()
  local mean = h.sum / h.num
  local var = math.max(h.sum_squares / h.num - mean * mean, 0)
  for _, kv in ipairs{{"min", h.min}, {"max", h.max}, {"mean", mean}, {"std", math.sqrt(var)}} do
    self:scalar_line(tag .. "/" .. kv[1], kv[2], step, walltime)
  end
end

function CSVWriter:add_image(tag, img, step, walltime, dataformats)
  if type(walltime) == "table" then
    dataformats = torch._check_options("add_image", walltime, "walltime dataformats").dataformats
  end
  self:write_png(tag, img, check_step("add_image", step), dataformats)
end

function CSVWriter:add_hparams(hp, metrics, opts)
  opts = torch._check_options("add_hparams", opts or {}, "run_name global_step hparam_domain_discrete")
  S.hparams(hp, metrics) -- the same checks as SummaryWriter
  local run = opts.run_name or ("%.6f"):format(C.walltime())
  local f = self:file("hparams", "hparams.csv", "run,name,value")
  for _, k in ipairs(S.sorted_keys(hp)) do
    local v = hp[k]
    if torch.is_tensor(v) then v = v:item() end
    f:add(("%s,%s,%s"):format(csv_field(run), csv_field(k), csv_field(type(v) == "number" and num(v) or tostring(v))))
  end
  local step = check_step("add_hparams", opts.global_step)
  for _, k in ipairs(S.sorted_keys(metrics)) do
    self:scalar_line(run .. "/" .. k, S.number("add_hparams", "metric '" .. k .. "'", metrics[k]), step, C.walltime())
  end
end

M.CSVWriter = CSVWriter

---------------------------------------------------------------- JSONLWriter

-- JSONLWriter(log_dir[, {flush_secs=0}]): metrics.jsonl, one JSON object a
-- line: {"step","tag","value","walltime"} for scalars, "text" for text,
-- "histogram" (min, max, num, sum, sum_squares, bucket_limit, bucket),
-- "image" (a path under images/), "hparams" with "metrics".
local JSONLWriter = setmetatable({__name = "JSONLWriter"}, {__index = Base,
  __call = torch._public(function(cls, dir, opts) return make(cls, "JSONLWriter", dir, opts) end, "JSONLWriter")})
JSONLWriter.__index = JSONLWriter
JSONLWriter.__close = Base.close

function JSONLWriter:open() self:file("jsonl", "metrics.jsonl") end

function JSONLWriter:record(r) self:file("jsonl", "metrics.jsonl"):add(json(r)) end

function JSONLWriter:scalar_line(tag, value, step, wt)
  self:record{step = step, tag = tag, value = value, walltime = wt}
end

function JSONLWriter:add_text(tag, text, step, walltime)
  check_tag("add_text", tag)
  if type(text) ~= "string" then error("add_text: text_string must be a string, got " .. type(text), 2) end
  self:record{step = check_step("add_text", step), tag = tag, text = text, walltime = walltime or C.walltime()}
end

function JSONLWriter:add_histogram(tag, values, step, bins, walltime)
  check_tag("add_histogram", tag)
  if type(bins) == "table" and (bins.bins ~= nil or next(bins) == nil) then bins = bins.bins end
  local h = S.histogram_stats(values, bins)
  self:record{step = check_step("add_histogram", step), tag = tag, walltime = walltime or C.walltime(),
    histogram = {min = h.min, max = h.max, num = h.num, sum = h.sum, sum_squares = h.sum_squares,
      bucket_limit = h.bucket_limit, bucket = h.bucket}}
end

function JSONLWriter:add_image(tag, img, step, walltime, dataformats)
  if type(walltime) == "table" then
    torch._check_options("add_image", walltime, "walltime dataformats")
    walltime, dataformats = walltime.walltime, walltime.dataformats
  end
  step = check_step("add_image", step)
  local rel = self:write_png(tag, img, step, dataformats)
  self:record{step = step, tag = tag, image = rel, walltime = walltime or C.walltime()}
end

function JSONLWriter:add_hparams(hp, metrics, opts)
  opts = torch._check_options("add_hparams", opts or {}, "run_name global_step hparam_domain_discrete")
  S.hparams(hp, metrics)
  local vals = {}
  for k, v in pairs(hp) do vals[k] = torch.is_tensor(v) and v:item() or v end
  self:record{hparams = vals, metrics = metrics, run = opts.run_name, walltime = C.walltime()}
end

M.JSONLWriter = JSONLWriter

-- The methods users call are public entry points: an error raised inside
-- the library names the method at the caller's line.
for _, cls in ipairs{Base, CSVWriter, JSONLWriter} do
  for _, k in ipairs{"add_scalar", "add_scalars", "add_text", "add_histogram", "add_image", "add_hparams", "flush",
                     "close", "get_logdir"} do
    local f = rawget(cls, k)
    if f then
      cls[k] = torch._public(f, function(self)
        local mt = type(self) == "table" and getmetatable(self)
        return (mt and mt.__name or "writer") .. "." .. k
      end)
    end
  end
end

return M
