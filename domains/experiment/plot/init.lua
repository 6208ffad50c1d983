-- torch.plot -- line charts saved as PNG: one line per series, a legend,
-- title, axis labels, nice ticks (linear or log y), missing points skipped.
-- This file checks the input and lays the picture out; the pixels are drawn
-- by the Cairo canvas of domains/experiment/plot/l_canvas.c (torch.plot._canvas).
--
--   torch.plot{series = {{name = "a", x = {...}, y = {...}}, {name = "b", y = tensor}},
--              title = "...", xlabel = "step", ylabel = "loss", logy = false,
--              width = 800, height = 500, path = "plot.png", quiet = false}
--   torch.plot(y[, opts])  -- one series: a list of numbers or a 1-D tensor
-- Returns the path (and, with layout = true, a table describing the layout:
-- plot area, ranges, ticks, legend box, to_pixel(x, y); see docs/plot.md).
local torch = require "torch"
local ticks = require "torch.plot.ticks"

local M = {__help = "torch.plot{series = {{name=, x=, y=}, ...}, title=, xlabel=, ylabel=, logy=, width=, height=, "
  .. "path='plot.png'} -- a line chart as PNG; returns the path (docs/plot.md)"}
M.ticks = ticks

-- Distinct line colors (r, g, b in 0..1), chosen to stay apart for common
-- color vision deficiencies as far as ten colors can; after ten, the
-- colors repeat with a dashed line.
local PALETTE = {
  {0.12, 0.38, 0.75}, {0.90, 0.45, 0.05}, {0.15, 0.60, 0.20}, {0.80, 0.12, 0.15}, {0.50, 0.30, 0.70},
  {0.50, 0.33, 0.25}, {0.85, 0.35, 0.65}, {0.45, 0.45, 0.45}, {0.70, 0.70, 0.10}, {0.10, 0.70, 0.75},
}
local DASHES = {false, {7, 4}, {2, 4}, {10, 4}}
M.PALETTE = PALETTE

local FONT = {title = 16, label = 13, tick = 11, legend = 12}
local MARKER_MAX = 30 -- series with at most this many points get a dot at each point

-- Raises "plot: <message>" (no position: the message says what is wrong).
local function fail(fmt, ...)
  error("plot: " .. fmt:format(...), 0)
end

-- The numbers of a list or 1-D tensor as a Lua list (holes and non-finite
-- values become NaN) and its length. what names it in errors.
local function numbers(v, what)
  if torch.is_tensor(v) then
    if v:dim() ~= 1 then fail("%s must be 1-D, got a tensor of %d dims", what, v:dim()) end
    local t = v:double():totable()
    return t, #t
  end
  if type(v) ~= "table" then fail("%s must be a list of numbers or a 1-D tensor, got a %s", what, type(v)) end
  local n = 0
  for k in pairs(v) do
    if math.type(k) ~= "integer" or k < 1 then fail("%s must be a list, but has the key %s", what, tostring(k)) end
    if k > n then n = k end
  end
  local out = {}
  for i = 1, n do
    local x = v[i]
    if x == nil then x = 0 / 0
    elseif type(x) ~= "number" then fail("%s[%d] is a %s, not a number", what, i, type(x)) end
    out[i] = x
  end
  return out, n
end

-- The series of the options as a list of {name, x, y, n} with x and y
-- Lua lists of equal length n >= 1.
local function collect_series(o)
  local raw = o.series
  if raw == nil then fail("no series given (series = {{name=, x=, y=}, ...})") end
  if type(raw) ~= "table" then fail("series must be a list, got a %s", type(raw)) end
  local list = {}
  if #raw == 0 and next(raw) ~= nil and not torch.is_tensor(raw) then -- {name = y, ...}
    local names = {}
    for k in pairs(raw) do names[#names + 1] = tostring(k) end
    table.sort(names)
    for _, k in ipairs(names) do list[#list + 1] = {name = k, y = raw[k]} end
  else
    for i = 1, #raw do
      local s = raw[i]
      if torch.is_tensor(s) or (type(s) == "table" and s.y == nil and #s > 0) then s = {y = s} end
      if type(s) ~= "table" then fail("series[%d] must be a table {name=, x=, y=}, got a %s", i, type(s)) end
      torch._check_options(("plot: series[%d]"):format(i), s, "name x y")
      list[i] = s
    end
  end
  if #list == 0 then fail("no series to draw (series is empty)") end
  local out = {}
  for i, s in ipairs(list) do
    local name = s.name ~= nil and tostring(s.name) or ("series " .. i)
    local what = ("series %d (%s)"):format(i, name)
    if s.y == nil then fail("%s has no y values", what) end
    local y, n = numbers(s.y, what .. ": y")
    if n == 0 then fail("%s is empty", what) end
    local x
    if s.x == nil then
      x = {}
      for k = 1, n do x[k] = k end
    else
      local nx
      x, nx = numbers(s.x, what .. ": x")
      if nx ~= n then fail("%s: x has %d values, y has %d", what, nx, n) end
    end
    out[i] = {name = name, x = x, y = y, n = n, named = s.name ~= nil}
  end
  return out
end

local function finite(v) return v == v and v ~= math.huge and v ~= -math.huge end

local function check_options(o)
  torch._check_options("plot", o, "series title xlabel ylabel logy width height path quiet markers legend layout name")
  for _, k in ipairs{"width", "height"} do
    local v = o[k]
    if v ~= nil and (math.type(v) ~= "integer" or v < 200 or v > 8000) then
      fail("%s must be an integer from 200 to 8000 pixels, got %s", k, tostring(v))
    end
  end
  for _, k in ipairs{"title", "xlabel", "ylabel", "path"} do
    if o[k] ~= nil and type(o[k]) ~= "string" then fail("%s must be a string, got a %s", k, type(o[k])) end
  end
  if o.path == "" then fail("path must not be empty") end
end

-- Data ranges over the points that will be drawn; counts skipped points.
local function data_ranges(series, logy)
  local xlo, xhi, ylo, yhi, skipped, drawn = math.huge, -math.huge, math.huge, -math.huge, 0, 0
  for _, s in ipairs(series) do
    s.ok = {}
    for i = 1, s.n do
      local x, y = s.x[i], s.y[i]
      local ok = finite(x) and finite(y) and (not logy or y > 0)
      s.ok[i] = ok
      if ok then
        drawn = drawn + 1
        if x < xlo then xlo = x end
        if x > xhi then xhi = x end
        if y < ylo then ylo = y end
        if y > yhi then yhi = y end
      else
        skipped = skipped + 1
      end
    end
  end
  if drawn == 0 then
    fail(logy and "nothing to draw: no point has a finite, positive y (logy needs y > 0)"
      or "nothing to draw: every point is missing (NaN or infinite)")
  end
  return xlo, xhi, ylo, yhi, skipped
end

-- Tick values and labels along one axis of `length` pixels, the densest
-- nice set whose labels keep a gap of `gap` pixels (size(label) measures a
-- label along the axis).
local function axis_ticks(lo, hi, log, length, size, gap, all_integers)
  if log then
    local n = math.max(2, math.floor(length / 28))
    while true do
      local v, labels = ticks.log(lo, hi, n)
      local need = 0
      for _, l in ipairs(labels) do need = need + size(l) + gap end
      if need <= length or n <= 2 then return v, labels end
      n = n - 1
    end
  end
  local step = ticks.step(lo, hi, math.max(1, math.floor(length / 40)))
  if all_integers and step < 1 then step = 1 end
  for _ = 1, 60 do
    local v, labels, widest = ticks.linear(lo, hi, step), {}, 0
    for i, t in ipairs(v) do
      labels[i] = ticks.format(t, step)
      widest = math.max(widest, size(labels[i]))
    end
    local spacing = step / (hi - lo) * length
    if spacing >= widest + gap or #v <= 2 then return v, labels end
    step = ticks.next_step(step)
  end
end

local function legend_size(c, series)
  c:font(FONT.legend)
  local w, h = 0, 0
  for _, s in ipairs(series) do
    local tw, th = c:measure(s.name)
    w, h = math.max(w, tw), th
  end
  local line_h = h + 4
  return w + 46, #series * line_h + 10, line_h
end

-- Lays out the picture for a legend "inside" (over the plot area) or
-- "outside" (right of it). Returns the layout table.
local function layout(c, o, series, ranges, legend_mode)
  local W, H = o.width, o.height
  local L = {W = W, H = H, logy = o.logy}
  c:font(FONT.tick)
  local _, tick_h = c:measure("0")
  local top = 12
  if o.title then
    c:font(FONT.title, true)
    local _, th = c:measure(o.title)
    top = top + th + 8
  end
  c:font(FONT.label)
  local _, label_h = c:measure("Ag")
  local bottom = 10 + tick_h + 8 + (o.xlabel and label_h + 6 or 0)
  local right = 20
  local lw, lh, line_h = 0, 0, 0
  if legend_mode then lw, lh, line_h = legend_size(c, series) end
  if legend_mode == "outside" then right = lw + 24 end
  -- y ticks first: their labels' width decides the left margin
  local ylo, yhi = ticks.range(ranges.ylo, ranges.yhi, o.logy)
  local plot_h = H - top - bottom
  c:font(FONT.tick)
  local yv, yl = axis_ticks(ylo, yhi, o.logy, plot_h, function() return tick_h end, 6, false)
  local widest = 0
  for _, l in ipairs(yl) do widest = math.max(widest, (c:measure(l))) end
  local left = 10 + (o.ylabel and label_h + 8 or 0) + widest + 8
  local plot_w = W - left - right
  if plot_w < 60 or plot_h < 40 then fail("%dx%d pixels is too small for this plot", W, H) end
  local xlo, xhi = ticks.range(ranges.xlo, ranges.xhi, false, 0.02)
  local xv, xl = axis_ticks(xlo, xhi, false, plot_w, function(s) return (c:measure(s)) end, 16,
    ranges.x_integers)
  L.area = {x = left, y = top, w = plot_w, h = plot_h}
  L.xrange, L.yrange = {xlo, xhi}, {ylo, yhi}
  L.xticks, L.xlabels, L.yticks, L.ylabels = xv, xl, yv, yl
  L.tick_h, L.label_h = tick_h, label_h
  local ly0, ly1 = math.log(ylo), math.log(yhi)
  function L.to_pixel(x, y)
    local px = left + (x - xlo) / (xhi - xlo) * plot_w
    local fy = o.logy and (math.log(y) - ly0) / (ly1 - ly0) or (y - ylo) / (yhi - ylo)
    return px, top + plot_h - fy * plot_h
  end
  if legend_mode == "outside" then
    L.legend = {x = W - lw - 12, y = top, w = lw, h = lh, line_h = line_h}
  elseif legend_mode == "inside" then
    L.legend = {w = lw, h = lh, line_h = line_h}
  end
  return L
end

-- How many sample points of the lines fall inside the rectangle r or
-- within 6 pixels of it (a dot or a thick line near the edge shows under it).
local function covered(L, series, r)
  local hits, m = 0, 6
  local function inside(px, py)
    return px >= r.x - m and px <= r.x + r.w + m and py >= r.y - m and py <= r.y + r.h + m
  end
  for _, s in ipairs(series) do
    local px0, py0
    for i = 1, s.n do
      if s.ok[i] then
        local px, py = L.to_pixel(s.x[i], s.y[i])
        if px0 then
          for k = 1, 8 do
            local t = k / 8
            if inside(px0 + t * (px - px0), py0 + t * (py - py0)) then hits = hits + 1 end
          end
        elseif inside(px, py) then
          hits = hits + 1
        end
        px0, py0 = px, py
      else
        px0 = nil
      end
    end
  end
  return hits
end

-- Puts an inside legend in the corner that covers the fewest line points
-- (top right, top left, bottom right, bottom left on ties). Returns the
-- number of points it covers.
local function place_legend(L, series)
  local a, g, m = L.legend, L.area, 10
  local best, best_hits
  for _, corner in ipairs{{1, 0}, {0, 0}, {1, 1}, {0, 1}} do
    local r = {x = g.x + m + corner[1] * (g.w - a.w - 2 * m), y = g.y + m + corner[2] * (g.h - a.h - 2 * m),
      w = a.w, h = a.h}
    local hits = covered(L, series, r)
    if not best or hits < best_hits then best, best_hits = r, hits end
  end
  a.x, a.y = best.x, best.y
  return best_hits
end

local function style(c, i)
  local col = PALETTE[(i - 1) % #PALETTE + 1]
  local dash = DASHES[((i - 1) // #PALETTE) % #DASHES + 1]
  c:color(col[1], col[2], col[3])
  if dash then c:dash(dash[1], dash[2]) else c:dash() end
end

local function draw(c, o, series, L)
  local g = L.area
  -- grid and ticks
  c:line_width(1)
  for _, t in ipairs(L.yticks) do
    local _, py = L.to_pixel(L.xrange[1], t)
    py = math.floor(py) + 0.5
    c:color(0.88, 0.88, 0.88)
    c:line(g.x, py, g.x + g.w, py)
    c:color(0, 0, 0)
    c:line(g.x - 5, py, g.x, py)
  end
  for _, t in ipairs(L.xticks) do
    local px = math.floor((L.to_pixel(t, L.logy and L.yrange[1] or 0))) + 0.5
    c:color(0.88, 0.88, 0.88)
    c:line(px, g.y, px, g.y + g.h)
    c:color(0, 0, 0)
    c:line(px, g.y + g.h, px, g.y + g.h + 5)
  end
  c:color(0, 0, 0)
  c:rect(g.x + 0.5, g.y + 0.5, g.w, g.h)
  c:font(FONT.tick)
  for i, t in ipairs(L.yticks) do
    local _, py = L.to_pixel(L.xrange[1], t)
    c:text(L.ylabels[i], g.x - 8, py, 1, 0.5)
  end
  for i, t in ipairs(L.xticks) do
    c:text(L.xlabels[i], (L.to_pixel(t, L.logy and L.yrange[1] or 0)), g.y + g.h + 8, 0.5, 0)
  end
  -- title and axis labels
  if o.title then
    c:font(FONT.title, true)
    c:text(o.title, g.x + g.w / 2, 10, 0.5, 0)
  end
  c:font(FONT.label)
  if o.xlabel then c:text(o.xlabel, g.x + g.w / 2, o.height - 8, 0.5, 1) end
  if o.ylabel then c:text(o.ylabel, 10, g.y + g.h / 2, 0.5, 0, 90) end
  -- the lines, clipped to the plot area
  c:clip(g.x + 1, g.y + 1, g.w - 1, g.h - 1)
  for i, s in ipairs(series) do
    local xs, ys, dots = {}, {}, {}
    for k = 1, s.n do
      if s.ok[k] then
        xs[k], ys[k] = L.to_pixel(s.x[k], s.y[k])
        local alone = not s.ok[k - 1] and not s.ok[k + 1]
        if alone or (o.markers ~= false and s.n <= MARKER_MAX) or o.markers == true then dots[#dots + 1] = k end
      else
        xs[k], ys[k] = 0 / 0, 0 / 0
      end
    end
    style(c, i)
    c:line_width(2)
    c:polyline(xs, ys)
    c:dash()
    for _, k in ipairs(dots) do c:circle(xs[k], ys[k], 3) end
    s.dotted = #dots > 0
  end
  c:unclip()
  -- legend
  local lg = L.legend
  if lg then
    c:color(1, 1, 1, 0.9)
    c:rect(lg.x, lg.y, lg.w, lg.h, true)
    c:color(0.6, 0.6, 0.6)
    c:line_width(1)
    c:rect(math.floor(lg.x) + 0.5, math.floor(lg.y) + 0.5, lg.w, lg.h)
    c:font(FONT.legend)
    for i, s in ipairs(series) do
      local cy = lg.y + 5 + (i - 0.5) * lg.line_h
      style(c, i)
      c:line_width(2)
      c:line(lg.x + 8, cy, lg.x + 34, cy)
      c:dash()
      if s.dotted then c:circle(lg.x + 21, cy, 3) end
      c:color(0, 0, 0)
      c:text(s.name, lg.x + 40, cy, 0, 0.5)
    end
  end
end

-- torch.plot(opts) / torch.plot(y[, opts]): see the header.
local function plot(a, b)
  local o
  if torch.is_tensor(a) or (type(a) == "table" and a.series == nil and #a > 0) then
    o = {}
    for k, v in pairs(b or {}) do o[k] = v end
    o.series = {{name = o.name, y = a}}
    o.name = nil
  elseif type(a) == "table" then
    o = a
  else
    fail("expected an options table {series = ...}, a list of numbers or a tensor, got a %s", type(a))
  end
  check_options(o)
  local series = collect_series(o)
  o = setmetatable({width = o.width or 800, height = o.height or 500, path = o.path or "plot.png"}, {__index = o})
  local xlo, xhi, ylo, yhi, skipped = data_ranges(series, o.logy)
  local x_integers = true
  for _, s in ipairs(series) do
    for k = 1, s.n do
      if s.ok[k] and math.floor(s.x[k]) ~= s.x[k] then x_integers = false end
    end
  end
  local ranges = {xlo = xlo, xhi = xhi, ylo = ylo, yhi = yhi, x_integers = x_integers}
  local c <close> = require("torch.plot._canvas").new(o.width, o.height)
  local L
  if o.legend ~= false and (#series > 1 or series[1].named) then
    -- inside, in the emptiest corner; to the right of the plot when it is
    -- too big for the corner, or covers lines and the plot stays wide
    L = layout(c, o, series, ranges, "inside")
    local lg, g = L.legend, L.area
    if lg.w > 0.45 * g.w or lg.h > 0.6 * g.h then
      L = layout(c, o, series, ranges, "outside")
    elseif place_legend(L, series) > 0 then
      local outside = layout(c, o, series, ranges, "outside")
      if outside.area.w >= 0.6 * o.width then L = outside end
    end
  else
    L = layout(c, o, series, ranges, nil)
  end
  draw(c, o, series, L)
  local ok, err = pcall(c.save, c, o.path)
  if not ok then error("plot: " .. tostring(err), 0) end
  L.skipped, L.path = skipped, o.path
  if not o.quiet then
    print(("plot: wrote %s (%dx%d, %d series%s)"):format(o.path, o.width, o.height, #series,
      skipped > 0 and (", %d missing point%s skipped"):format(skipped, skipped == 1 and "" or "s") or ""))
  end
  if o.layout then return o.path, L end
  return o.path
end

-- torch.plot(...) is a public entry point: errors raised inside the library
-- name it at the caller's line.
return setmetatable(M, {__call = torch._public(function(_, ...) return plot(...) end, "torch.plot")})
