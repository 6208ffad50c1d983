-- torch.utils.tensorboard.writer -- SummaryWriter: PyTorch's
-- torch.utils.tensorboard.SummaryWriter writing TensorBoard event files
-- (event_file.lua) from the summaries of summary.lua.
local torch = require "torch"
local S = require "torch.utils.tensorboard.summary"
local EventFile = require "torch.utils.tensorboard.event_file"
local C = require "torch.utils.tensorboard._summary"

local SummaryWriter = {__name = "SummaryWriter"}
SummaryWriter.__index = SummaryWriter

local OPTS = "log_dir comment purge_step max_queue flush_secs filename_suffix"

-- The step argument as an integer (nil allowed); fn names the caller.
local function check_step(fn, step)
  if step == nil then return nil end
  if math.type(step) == "integer" then return step end
  if type(step) == "number" and step == math.floor(step) and step >= -2 ^ 63 and step < 2 ^ 63 then
    return math.tointeger(step)
  end
  if torch.is_tensor(step) and step:numel() == 1 then return check_step(fn, step:item()) end
  error(("%s: global_step must be an integer, got %s"):format(fn, tostring(step)), 3)
end

local function check_walltime(fn, wt)
  if wt ~= nil and type(wt) ~= "number" then
    error(("%s: walltime must be a number (seconds since the epoch), got %s"):format(fn, type(wt)), 3)
  end
  return wt
end

-- SummaryWriter([log_dir][, {comment=, max_queue=10, flush_secs=120,
-- filename_suffix=}]) or SummaryWriter{log_dir=, ...}. Without log_dir
-- the run goes to runs/<date>_<host><comment>, as in PyTorch.
local function new(_, log_dir, opts)
  if type(log_dir) == "table" and opts == nil then log_dir, opts = log_dir.log_dir, log_dir end
  opts = opts or {}
  if log_dir ~= nil and type(log_dir) ~= "string" then
    error(("SummaryWriter: log_dir must be a string (a directory path), got %s"):format(type(log_dir)), 2)
  end
  if type(opts) ~= "table" then error("SummaryWriter: options must be a table", 2) end
  torch._check_options("SummaryWriter", opts, OPTS)
  if not log_dir then
    log_dir = ("runs/%s_%s%s"):format(os.date("%b%d_%H-%M-%S"), C.hostname(), opts.comment or "")
  end
  local fopts = {max_queue = opts.max_queue or 10, flush_secs = opts.flush_secs or 120,
    filename_suffix = opts.filename_suffix or ""}
  if type(fopts.max_queue) ~= "number" or fopts.max_queue < 1 then
    error("SummaryWriter: max_queue must be a positive number", 2)
  end
  if type(fopts.flush_secs) ~= "number" then error("SummaryWriter: flush_secs must be a number", 2) end
  if type(fopts.filename_suffix) ~= "string" then error("SummaryWriter: filename_suffix must be a string", 2) end
  local self = setmetatable({log_dir = log_dir, opts = fopts, all_writers = {}}, SummaryWriter)
  self.file_writer = EventFile.new(log_dir, fopts, "SummaryWriter")
  return self
end
setmetatable(SummaryWriter, {__call = torch._public(new, "SummaryWriter")})

function SummaryWriter:get_logdir() return self.log_dir end

local function writer(self, fn)
  if not self.file_writer then error(fn .. ": the SummaryWriter is closed", 3) end
  return self.file_writer
end

-- add_scalar(tag, scalar_value[, global_step[, walltime]])
function SummaryWriter:add_scalar(tag, value, step, walltime)
  local fw = writer(self, "add_scalar")
  value = S.number("add_scalar", "scalar_value", value)
  step, walltime = check_step("add_scalar", step), check_walltime("add_scalar", walltime)
  fw:add(S.scalar(tag, value), step, walltime)
end

-- add_scalars(main_tag, {tag=value, ...}[, global_step[, walltime]]): each
-- tag goes to its own run, log_dir/<main_tag>_<tag>, under tag main_tag.
function SummaryWriter:add_scalars(main_tag, values, step, walltime)
  writer(self, "add_scalars")
  if type(main_tag) ~= "string" then error("add_scalars: main_tag must be a string", 2) end
  if type(values) ~= "table" then error("add_scalars: tag_scalar_dict must be a table of tag -> number", 2) end
  step, walltime = check_step("add_scalars", step), check_walltime("add_scalars", walltime)
  for _, tag in ipairs(S.sorted_keys(values)) do
    local v = S.number("add_scalars", "the value of '" .. tostring(tag) .. "'", values[tag])
    local dir = self.log_dir .. "/" .. main_tag:gsub("/", "_") .. "_" .. tostring(tag)
    local fw = self.all_writers[dir]
    if not fw then
      fw = EventFile.new(dir, self.opts, "add_scalars")
      self.all_writers[dir] = fw
    end
    fw:add(S.scalar(main_tag, v), step, walltime)
  end
end

-- add_histogram(tag, values[, global_step[, bins='tensorflow'[, walltime]]])
-- bins may also be given as {bins=...}.
function SummaryWriter:add_histogram(tag, values, step, bins, walltime)
  local fw = writer(self, "add_histogram")
  if type(bins) == "table" and (next(bins) == nil or bins.bins ~= nil or bins.walltime ~= nil) then
    torch._check_options("add_histogram", bins, "bins walltime")
    bins, walltime = bins.bins, bins.walltime or walltime -- an options table, not a list of edges
  elseif type(bins) == "table" and getmetatable(bins) == nil and #bins == 0 and next(bins) ~= nil then
    torch._check_options("add_histogram", bins, "bins walltime") -- a misspelt option
  end
  step, walltime = check_step("add_histogram", step), check_walltime("add_histogram", walltime)
  fw:add(S.histogram(tag, values, bins), step, walltime)
end

-- add_image(tag, img_tensor[, global_step[, walltime[, dataformats='CHW']]])
-- or add_image(tag, img, step, {dataformats=, walltime=})
function SummaryWriter:add_image(tag, img, step, walltime, dataformats)
  local fw = writer(self, "add_image")
  if type(walltime) == "table" then
    torch._check_options("add_image", walltime, "walltime dataformats")
    walltime, dataformats = walltime.walltime, walltime.dataformats
  end
  step, walltime = check_step("add_image", step), check_walltime("add_image", walltime)
  fw:add(S.image(tag, img, dataformats), step, walltime)
end

-- add_text(tag, text_string[, global_step[, walltime]])
function SummaryWriter:add_text(tag, text, step, walltime)
  local fw = writer(self, "add_text")
  step, walltime = check_step("add_text", step), check_walltime("add_text", walltime)
  fw:add(S.text(tag, text), step, walltime)
end

-- add_hparams(hparam_dict, metric_dict[, {hparam_domain_discrete=,
-- run_name=, global_step=}]): as PyTorch, a run log_dir/<run_name>
-- (default: the current time) gets the experiment, session start and end
-- summaries, and each metric as a scalar.
function SummaryWriter:add_hparams(hp, metrics, opts)
  writer(self, "add_hparams")
  opts = opts or {}
  if type(opts) ~= "table" then error("add_hparams: the third argument must be an options table", 2) end
  local discrete = opts.hparam_domain_discrete
  if discrete == nil and opts.run_name == nil and opts.global_step == nil and next(opts) then discrete = opts end
  local step = check_step("add_hparams", opts.global_step)
  local exp, ssi, sei = S.hparams(hp, metrics, discrete)
  local run = opts.run_name or ("%.6f"):format(C.walltime())
  if type(run) ~= "string" then error("add_hparams: run_name must be a string", 2) end
  local w = SummaryWriter(self.log_dir .. "/" .. run, self.opts)
  w.file_writer:add(exp, step)
  w.file_writer:add(ssi, step)
  w.file_writer:add(sei, step)
  for _, k in ipairs(S.sorted_keys(metrics)) do w:add_scalar(k, metrics[k], step) end
  w:close()
end

function SummaryWriter:flush()
  if self.file_writer then self.file_writer:flush() end
  for _, fw in pairs(self.all_writers) do fw:flush() end
end

function SummaryWriter:close()
  if not self.file_writer then return end
  self.file_writer:close()
  for _, fw in pairs(self.all_writers) do fw:close() end
  self.file_writer = nil
end

SummaryWriter.__close = SummaryWriter.close
SummaryWriter.__tostring = function(self) return ("SummaryWriter(%q)"):format(self.log_dir) end

-- The methods are public entry points: an error raised inside the library
-- names the method ("add_scalar: ...") at the caller's line.
for k, f in pairs(SummaryWriter) do
  if type(f) == "function" and k:sub(1, 1) ~= "_" then SummaryWriter[k] = torch._public(f, "SummaryWriter." .. k) end
end

return SummaryWriter
