-- torch.profiler.key_averages -- events grouped by name (and input shapes
-- on request) and printed as PyTorch's profiler table: Name, Self CPU %,
-- Self CPU, CPU total %, CPU total, CPU time avg, [CPU Mem, Self CPU Mem,
-- and CUDA Mem, Self CUDA Mem when CUDA memory moved], [Self CUDA, Self
-- CUDA %, CUDA total, CUDA time avg when the profile timed CUDA],
-- # of Calls, [Input Shapes]; times in microseconds.
local torch = require "torch"
local M = {}

local KeyAverages = {}
KeyAverages.__index = KeyAverages

-- group(records, by_shape, memory, shapes) -> a KeyAverages list of
-- {key, count, cpu_time_total, self_cpu_time_total, cpu_time,
-- cpu_memory_usage, self_cpu_memory_usage, cuda_memory_usage,
-- self_cuda_memory_usage, input_shapes} in order of
-- first appearance.
function M.group(records, by_shape, memory, shapes, cuda)
  local out, index = setmetatable({memory = memory, shapes = shapes and by_shape, cuda = cuda}, KeyAverages), {}
  for _, e in ipairs(records) do
    local k = by_shape and (e.name .. "\0" .. (e.input_shapes or "")) or e.name
    local a = index[k]
    if not a then
      a = {key = e.name, count = 0, cpu_time_total = 0, self_cpu_time_total = 0, cpu_memory_usage = 0,
        self_cpu_memory_usage = 0, cuda_memory_usage = 0, self_cuda_memory_usage = 0, cuda_time_total = 0,
        self_cuda_time_total = 0, input_shapes = by_shape and (e.input_shapes or "[]") or nil}
      index[k] = a
      out[#out + 1] = a
    end
    a.count = a.count + 1
    a.cpu_time_total = a.cpu_time_total + e.duration_us
    a.self_cpu_time_total = a.self_cpu_time_total + e.self_us
    a.cpu_memory_usage = a.cpu_memory_usage + e.cpu_memory_usage
    a.self_cpu_memory_usage = a.self_cpu_memory_usage + e.self_cpu_memory_usage
    a.cuda_memory_usage = a.cuda_memory_usage + e.cuda_memory_usage
    a.self_cuda_memory_usage = a.self_cuda_memory_usage + e.self_cuda_memory_usage
    if e.cuda_memory_usage ~= 0 then out.cuda_memory = true end
    a.cuda_time_total = a.cuda_time_total + (e.cuda_us or 0)
    a.self_cuda_time_total = a.self_cuda_time_total + (e.self_cuda_us or 0)
  end
  for _, a in ipairs(out) do a.cpu_time, a.cuda_time = a.cpu_time_total / a.count, a.cuda_time_total / a.count end
  return out
end

local function format_time(us)
  if math.abs(us) >= 1e6 then return ("%.3fs"):format(us / 1e6) end
  if math.abs(us) >= 1e3 then return ("%.3fms"):format(us / 1e3) end
  return ("%.3fus"):format(us)
end

local function format_share(us, total)
  if total == 0 then return "0.00%" end
  return ("%.2f%%"):format(us * 100 / total)
end

local function format_memory(b)
  local KB, MB, GB = 1024, 1024 * 1024, 1024 * 1024 * 1024
  if math.abs(b) >= GB then return ("%.2f Gb"):format(b / GB) end
  if math.abs(b) >= MB then return ("%.2f Mb"):format(b / MB) end
  if math.abs(b) >= KB then return ("%.2f Kb"):format(b / KB) end
  return ("%d b"):format(b)
end
M.format_time = format_time

local SORT_KEYS = {cpu_time_total = true, self_cpu_time_total = true, cpu_time = true, count = true,
  cpu_memory_usage = true, self_cpu_memory_usage = true, cuda_memory_usage = true, self_cuda_memory_usage = true,
  cuda_time_total = true, self_cuda_time_total = true, cuda_time = true}

-- Cuts s to width w - 3 with "..." when it does not fit (as PyTorch).
local function fit(s, w)
  if #s >= w - 3 then return s:sub(1, w - 3) .. "..." end
  return s
end

-- ka:table([{sort_by=, row_limit=100, max_name_column_width=55,
-- max_shapes_column_width=80}]) -> the table as a string.
function KeyAverages:table(opts)
  opts = opts or {}
  if type(opts) ~= "table" then error("table: options must be a table, e.g. {sort_by='cpu_time_total'}", 2) end
  torch._check_options("table", opts, "sort_by row_limit max_name_column_width max_shapes_column_width")
  local sort_by, limit = opts.sort_by, opts.row_limit or 100
  if sort_by ~= nil and not SORT_KEYS[sort_by] then
    local ks = {}
    for k in pairs(SORT_KEYS) do ks[#ks + 1] = k end
    table.sort(ks)
    error(("table: sort_by must be one of %s, got %s"):format(table.concat(ks, ", "), tostring(sort_by)), 2)
  end
  if type(limit) ~= "number" then error("table: row_limit must be a number", 2) end
  local rows = {}
  for i, a in ipairs(self) do rows[i] = a end
  if sort_by then
    table.sort(rows, function(a, b)
      if a[sort_by] ~= b[sort_by] then return a[sort_by] > b[sort_by] end
      return a.key < b.key
    end)
  end
  if limit >= 0 and #rows > limit then
    for i = #rows, limit + 1, -1 do rows[i] = nil end
  end
  local self_total, cuda_total = 0, 0
  for _, a in ipairs(self) do self_total, cuda_total = self_total + a.self_cpu_time_total, cuda_total + a.self_cuda_time_total end

  local name_w = 0
  for _, a in ipairs(self) do name_w = math.max(name_w, #a.key) end
  name_w = math.min(name_w + 4, opts.max_name_column_width or 55)
  local shapes_w = 0
  if self.shapes then
    for _, a in ipairs(self) do shapes_w = math.max(shapes_w, #a.input_shapes) end
    shapes_w = math.min(shapes_w + 4, opts.max_shapes_column_width or 80)
  end
  local headers, widths = {"Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg"},
    {name_w, 12, 12, 12, 12, 12}
  if self.cuda then
    for _, h in ipairs{"Self CUDA", "Self CUDA %", "CUDA total", "CUDA time avg"} do
      headers[#headers + 1], widths[#widths + 1] = h, 13
    end
  end
  if self.memory then
    headers[#headers + 1], widths[#widths + 1] = "CPU Mem", 12
    headers[#headers + 1], widths[#widths + 1] = "Self CPU Mem", 12
    if self.cuda_memory then
      headers[#headers + 1], widths[#widths + 1] = "CUDA Mem", 12
      headers[#headers + 1], widths[#widths + 1] = "Self CUDA Mem", 13
    end
  end
  headers[#headers + 1], widths[#widths + 1] = "# of Calls", 12
  if self.shapes then headers[#headers + 1], widths[#widths + 1] = "Input Shapes", shapes_w end

  local function line(cells)
    local parts = {}
    for i, c in ipairs(cells) do parts[i] = (" "):rep(math.max(widths[i] - #c, 0)) .. c .. "  " end
    return table.concat(parts)
  end
  local seps = {}
  for i, w in ipairs(widths) do seps[i] = ("-"):rep(w) end
  local sep = line(seps)
  local out = {sep, line(headers), sep}
  for _, a in ipairs(rows) do
    local cells = {fit(a.key, name_w), format_share(a.self_cpu_time_total, self_total), format_time(a.self_cpu_time_total),
      format_share(a.cpu_time_total, self_total), format_time(a.cpu_time_total), format_time(a.cpu_time)}
    if self.cuda then
      cells[#cells + 1] = format_time(a.self_cuda_time_total)
      cells[#cells + 1] = format_share(a.self_cuda_time_total, cuda_total)
      cells[#cells + 1] = format_time(a.cuda_time_total)
      cells[#cells + 1] = format_time(a.cuda_time)
    end
    if self.memory then
      cells[#cells + 1] = format_memory(a.cpu_memory_usage)
      cells[#cells + 1] = format_memory(a.self_cpu_memory_usage)
      if self.cuda_memory then
        cells[#cells + 1] = format_memory(a.cuda_memory_usage)
        cells[#cells + 1] = format_memory(a.self_cuda_memory_usage)
      end
    end
    cells[#cells + 1] = tostring(a.count)
    if self.shapes then cells[#cells + 1] = fit(a.input_shapes, shapes_w) end
    out[#out + 1] = line(cells)
  end
  out[#out + 1] = sep
  out[#out + 1] = "Self CPU time total: " .. format_time(self_total)
  if self.cuda then out[#out + 1] = "Self CUDA time total: " .. format_time(cuda_total) end
  return table.concat(out, "\n") .. "\n"
end

-- a public entry point: an error raised inside names it at the caller's line
KeyAverages.table = torch._public(KeyAverages.table, "table")
KeyAverages.__tostring = KeyAverages.table

return M
