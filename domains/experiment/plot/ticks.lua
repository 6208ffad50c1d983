-- torch.plot.ticks -- axis ranges and tick positions for torch.plot: "nice"
-- steps of 1, 2 or 5 times a power of ten on linear axes, decades (with 2
-- and 5, or every digit, when the range is short) on log axes, and labels
-- with just the digits the step needs. Pure arithmetic: no drawing here.
local M = {}

local log10, floor, ceil, abs = math.log10 or function(x) return math.log(x, 10) end, math.floor, math.ceil, math.abs

-- Rounds away the binary noise of k * step (0.30000000000000004 -> 0.3).
local function clean(v)
  return tonumber(("%.12g"):format(v))
end

-- The range [lo, hi] padded by `pad` (a fraction of its span) on each side;
-- a range of one value is widened around it. With log, the padding is taken
-- in log space and lo, hi must be positive.
function M.range(lo, hi, log, pad)
  pad = pad or 0.05
  if log then
    local a, b = M.range(log10(lo), log10(hi), false, pad)
    return 10 ^ a, 10 ^ b
  end
  if hi - lo <= abs(hi) * 1e-12 then
    local d = lo == 0 and 1 or abs(lo) * 0.1
    return lo - d, hi + d
  end
  local d = (hi - lo) * pad
  return lo - d, hi + d
end

-- The smallest nice step (1, 2 or 5 x 10^k) that cuts [lo, hi] into at
-- most n intervals.
function M.step(lo, hi, n)
  local raw = (hi - lo) / math.max(n, 1)
  if raw <= 0 then return 1 end
  local mag = 10 ^ floor(log10(raw))
  for _, m in ipairs{1, 2, 5, 10} do
    if m * mag >= raw * (1 - 1e-9) then return clean(m * mag) end
  end
  return clean(10 * mag)
end

-- The nice step after `step` (1 -> 2 -> 5 -> 10 ...).
function M.next_step(step)
  local mag = 10 ^ floor(log10(step) + 1e-9)
  local m = step / mag
  if m < 1.5 then return clean(2 * mag) end
  if m < 3.5 then return clean(5 * mag) end
  return clean(10 * mag)
end

-- The multiples of step inside [lo, hi].
function M.linear(lo, hi, step)
  local out = {}
  for k = ceil(lo / step - 1e-9), floor(hi / step + 1e-9) do
    local v = clean(k * step)
    if v == 0 then v = 0.0 end -- no "-0"
    out[#out + 1] = v
  end
  return out
end

-- Ticks for a log axis over [lo, hi] (positive), at most about n of them,
-- coarsest first: every k-th decade, decades, 1-2-5, then every digit. The
-- first candidate with at least 3 ticks in range and at most n wins; a range
-- inside one decade falls back to linear ticks. Returns the values and
-- their labels.
function M.log(lo, hi, n)
  local e0, e1 = floor(log10(lo)), ceil(log10(hi))
  local function collect(mantissas, every)
    local out = {}
    for e = e0, e1 do
      if every == 1 or e % every == 0 then
        for _, m in ipairs(mantissas) do
          local v = clean(m * 10 ^ e)
          if v >= lo * (1 - 1e-9) and v <= hi * (1 + 1e-9) then out[#out + 1] = v end
        end
      end
    end
    return out
  end
  local function labelled(t)
    local labels = {}
    for i, v in ipairs(t) do labels[i] = M.format_log(v) end
    return t, labels
  end
  local decades = e1 - e0
  if decades > n then return labelled(collect({1}, ceil(decades / math.max(n - 1, 1)))) end
  local coarser
  for _, ms in ipairs{{1}, {1, 2, 5}, {1, 2, 3, 4, 5, 6, 7, 8, 9}} do
    local t = collect(ms, 1)
    if #t > n then break end
    coarser = t
    if #t >= 3 then return labelled(t) end
  end
  if coarser and #coarser >= 2 then return labelled(coarser) end
  local step = M.step(lo, hi, math.max(n - 1, 2))
  local t, labels = M.linear(lo, hi, step), {}
  for i, v in ipairs(t) do labels[i] = M.format(v, step) end
  return t, labels
end

local function trim_exp(s)
  -- "1.5e-05" -> "1.5e-5", "2e+06" -> "2e6"
  return (s:gsub("e%+?(%-?)0*(%d)", "e%1%2"))
end

-- The label of tick value v on an axis whose ticks are `step` apart: as
-- many decimals as the step needs, scientific notation for very large or
-- very small numbers.
function M.format(v, step)
  if v == 0 then return "0" end
  local big = math.max(abs(v), step)
  if big >= 1e6 or big < 1e-4 then
    local digits = math.max(0, floor(log10(abs(v)) + 1e-9) - floor(log10(step) + 1e-9))
    local s = ("%." .. math.min(digits, 6) .. "e"):format(v)
    s = s:gsub("%.?0+e", "e")
    return trim_exp(s)
  end
  local decimals = math.max(0, -floor(log10(step) + 1e-9))
  return ("%." .. decimals .. "f"):format(v)
end

-- The label of a log-axis tick (each value labels itself: 0.001, 200, 1e-7).
function M.format_log(v)
  local e = floor(log10(v) + 1e-9)
  if e >= -4 and e <= 5 then return ("%." .. math.max(0, -e) .. "f"):format(v) end
  return trim_exp(("%.0e"):format(v))
end

return M
