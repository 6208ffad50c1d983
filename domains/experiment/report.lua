-- torch.experiment.report -- the end of a sweep: the trials sorted by the
-- spec's metric as a table (printed, summary.md, summary.csv) and the
-- metric-vs-step curves of every trial (summary.png through torch.plot).
local torch = require "torch"
local S = require "torch.experiment.spec"

local M = {}

local function cell(v)
  if v == nil then return "" end
  if type(v) == "number" then
    if math.type(v) == "float" then
      if v ~= v then return "nan" end
      return ("%.6g"):format(v)
    end
    return tostring(v)
  end
  return tostring(v)
end

-- Trials sorted best first by the metric: finished trials with a value,
-- then those without (failed last), each group in trial order.
function M.sorted(ctx)
  local m = ctx.spec.metric
  local list = {}
  for _, t in ipairs(ctx.trials) do list[#list + 1] = t end
  local function group(t)
    if t.state == "done" and t.metric and t.metric == t.metric then return 1 end
    if t.state == "done" then return 2 end
    return 3
  end
  table.sort(list, function(a, b)
    local ga, gb = group(a), group(b)
    if ga ~= gb then return ga < gb end
    if ga == 1 and a.metric ~= b.metric then
      if m.mode == "min" then return a.metric < b.metric end
      return a.metric > b.metric
    end
    return a.index < b.index
  end)
  return list
end

-- The table's header and rows (lists of strings).
function M.table(ctx)
  local spec = ctx.spec
  local _, axis_keys = S.trials(spec)
  -- the other metrics: every numeric field of the trials' last rows
  local extra, seen = {}, {[spec.metric.name] = true, time = true}
  for _, t in ipairs(ctx.trials) do
    for _, row in ipairs(t.rows or {}) do
      for k, v in pairs(row) do
        if type(v) == "number" and not seen[k] then
          seen[k] = true
          extra[#extra + 1] = k
        end
      end
    end
  end
  table.sort(extra)
  local head = {"rank", "trial"}
  for _, k in ipairs(axis_keys) do head[#head + 1] = k end
  head[#head + 1] = "status"
  head[#head + 1] = spec.metric.name .. (spec.metric.use == "best" and " (best)" or "")
  for _, k in ipairs(extra) do head[#head + 1] = k end
  head[#head + 1] = "seconds"
  head[#head + 1] = "note"
  local rows = {}
  for rank, t in ipairs(M.sorted(ctx)) do
    local last = {}
    for _, row in ipairs(t.rows or {}) do for k, v in pairs(row) do last[k] = v end end
    local r = {tostring(rank), t.name}
    for _, k in ipairs(axis_keys) do r[#r + 1] = S.format_value(t.params[k]) end
    r[#r + 1] = t.state
    r[#r + 1] = cell(t.metric)
    for _, k in ipairs(extra) do r[#r + 1] = cell(last[k]) end
    r[#r + 1] = t.seconds and ("%.1f"):format(t.seconds) or ""
    r[#r + 1] = t.state == "failed" and (t.reason or "failed") or (t.state == "done" and not t.metric and
      ("no %s logged"):format(spec.metric.name) or "")
    rows[#rows + 1] = r
  end
  return head, rows
end

-- A Markdown table with padded columns (readable as plain text too).
function M.markdown(head, rows)
  local width = {}
  for i, h in ipairs(head) do width[i] = #h end
  for _, r in ipairs(rows) do
    for i, v in ipairs(r) do
      r[i] = v:gsub("|", "/"):gsub("\n", " ")
      width[i] = math.max(width[i], #r[i])
    end
  end
  local function line(cells)
    local parts = {}
    for i, v in ipairs(cells) do parts[i] = v .. string.rep(" ", width[i] - #v) end
    return "| " .. table.concat(parts, " | ") .. " |"
  end
  local out = {line(head)}
  local dashes = {}
  for i = 1, #head do dashes[i] = string.rep("-", width[i]) end
  out[2] = line(dashes)
  for _, r in ipairs(rows) do out[#out + 1] = line(r) end
  return table.concat(out, "\n") .. "\n"
end

local function csv_field(v)
  if v:find('[,"\n]') then return '"' .. v:gsub('"', '""') .. '"' end
  return v
end

function M.csv(head, rows)
  local out = {}
  for _, r in ipairs({head, table.unpack(rows)}) do
    local f = {}
    for i, v in ipairs(r) do f[i] = csv_field(v) end
    out[#out + 1] = table.concat(f, ",")
  end
  return table.concat(out, "\n") .. "\n"
end

local function write(path, text)
  local f, err = io.open(path, "wb")
  if not f then error("cannot write " .. path .. ": " .. tostring(err), 0) end
  f:write(text)
  f:close()
end

-- A trial's legend label: its axis values, "batch_size=32, lr=0.001".
function M.label(ctx, t)
  local _, keys = S.trials(ctx.spec)
  local parts = {}
  for _, k in ipairs(keys) do
    if t.params[k] ~= nil then parts[#parts + 1] = k .. "=" .. S.format_value(t.params[k]) end
  end
  return #parts > 0 and table.concat(parts, ", ") or t.name
end

-- Plots `metric` against the spec's x field (or the row number) for every
-- trial that logged it. Returns the path, or nil when no trial did.
function M.plot(ctx, metric, path)
  local series = {}
  for _, t in ipairs(ctx.trials) do
    local x, y = {}, {}
    for i, row in ipairs(t.rows or {}) do
      local v = row[metric]
      if type(v) == "number" then
        x[#x + 1] = type(row[ctx.spec.x]) == "number" and row[ctx.spec.x] or i
        y[#y + 1] = v
      end
    end
    if #y > 0 then series[#series + 1] = {name = M.label(ctx, t), x = x, y = y} end
  end
  if #series == 0 then return nil end
  local ok, err = pcall(torch.plot, {series = series, path = path, quiet = true, xlabel = ctx.spec.x,
    ylabel = metric, title = ("sweep %s: %s"):format(ctx.spec.name, metric)})
  if not ok then
    io.stderr:write("sweep: no plot of ", metric, ": ", tostring(err), "\n")
    return nil
  end
  return path
end

-- Prints the table and writes summary.md, summary.csv and the plots.
-- Returns the list of files written.
function M.write(ctx, out)
  out = out or io.stdout
  local head, rows = M.table(ctx)
  local md = M.markdown(head, rows)
  local spec = ctx.spec
  local files = {}
  write(ctx.dir .. "/summary.csv", M.csv(head, rows))
  local title = ("# sweep %s\n\nscript `%s`, %d trials, sorted by %s (%s is better, %s value)\n\n"):format(spec.name,
    spec.script, #ctx.trials, spec.metric.name, spec.metric.mode == "min" and "lower" or "higher", spec.metric.use)
  write(ctx.dir .. "/summary.md", title .. md)
  files[1], files[2] = ctx.dir .. "/summary.md", ctx.dir .. "/summary.csv"
  for i, m in ipairs(spec.plot) do
    local p = M.plot(ctx, m, ctx.dir .. (i == 1 and "/summary.png" or ("/summary_" .. m:gsub("[^%w_.-]", "_")
      .. ".png")))
    if p then files[#files + 1] = p end
  end
  out:write(md)
  out:write("wrote ", table.concat(files, ", "), "\n")
  return files
end

return M
