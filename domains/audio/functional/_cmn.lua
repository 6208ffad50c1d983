-- torch.audio.functional._cmn -- sliding_window_cmn: Kaldi's sliding-window
-- cepstral mean (and variance) normalization as torchaudio computes it.
-- torchaudio keeps a running sum that adds and drops one frame per step;
-- the frames it adds and drops are worked out here on the host (integers
-- only) and the sums come from cumulative sums over those frames, in
-- float64, so every frame is one tensor op wide rather than a step.
local torch = require "torch"
local U = require "torch.nn.util"
local CK = require "torch.audio.functional._checks"

local F = {}
local P = "torch.audio.functional."

-- plan(T, cmn_window, min_cmn_window, center) -> first_end, adds, removes,
-- n_add, n_rem, frames: the running sum of frame t is the sum of frames
-- [0, first_end) plus the first n_add[t] frames of adds minus the first
-- n_rem[t] of removes (0-based frame lists); frames[t] is the divisor
-- (the window's length). Follows torchaudio's window rules step by step.
local function plan(T, cmn_window, min_cmn_window, center)
  local adds, removes, n_add, n_rem, frames = {}, {}, {}, {}, {}
  local last_start, last_end, first_end = -1, -1, 0
  for t = 0, T - 1 do
    local ws, we
    if center then
      ws = t - cmn_window // 2
      we = ws + cmn_window
    else
      ws = t - cmn_window
      we = t + 1
    end
    if ws < 0 then
      we = we - ws
      ws = 0
    end
    if not center and we > t then we = math.max(t + 1, min_cmn_window) end
    if we > T then
      ws = math.max(0, ws - (we - T))
      we = T
    end
    if last_start == -1 then
      first_end = we - ws -- torchaudio sums frames [ws, we - ws); ws is 0 here
    else
      if ws > last_start then removes[#removes + 1] = last_start end
      if we > last_end then adds[#adds + 1] = last_end end
    end
    n_add[t + 1], n_rem[t + 1], frames[t + 1] = #adds, #removes, we - ws
    last_start, last_end = ws, we
  end
  return first_end, adds, removes, n_add, n_rem, frames
end

-- running(x [N, T, F] float64, first_end, list, counts, sign) -> [N, T, F]:
-- per frame t the sum of the first counts[t] frames of list (0 if none)
local function running(x, list, counts)
  local N, Fd = x:size(1), x:size(3)
  local zero = torch.zeros(N, 1, Fd, {dtype = x.dtype, device = x.device})
  if #list == 0 then return nil end
  local picked = x:index_select(2, torch.tensor(list, {dtype = torch.int64, device = x.device}) + 1)
  local csum = torch.cat({zero, picked:cumsum(2)}, 2)
  return csum:index_select(2, torch.tensor(counts, {dtype = torch.int64, device = x.device}) + 1)
end

-- sliding_window_cmn(specgram[, cmn_window=600, min_cmn_window=100,
-- center=false, norm_vars=false]) -> specgram [..., time, freq] less its
-- sliding-window mean (and divided by its standard deviation with norm_vars)
function F.sliding_window_cmn(specgram, ...)
  local fname = P .. "sliding_window_cmn"
  CK.float_tensor(fname, "specgram", specgram, 2, "[..., time, freq]")
  local o = U.args(fname, {"cmn_window", "min_cmn_window", "center", "norm_vars"},
    {cmn_window = 600, min_cmn_window = 100, center = false, norm_vars = false}, ...)
  U.size(fname, "cmn_window", o.cmn_window, 1)
  U.size(fname, "min_cmn_window", o.min_cmn_window, 0)
  local shape = specgram:size()
  local T, Fd = shape[#shape - 1], shape[#shape]
  if T == 0 then return specgram end
  local first_end, adds, removes, n_add, n_rem, frames = plan(T, o.cmn_window, o.min_cmn_window, o.center)
  local x = specgram:reshape(-1, T, Fd)
  local x64 = x:to(torch.float64)
  local opts = {dtype = torch.float64, device = x.device}
  local count = torch.tensor(frames, opts):reshape(1, T, 1)

  -- window sums of v [N, T, F] (float64) by the plan
  local function window_sum(v)
    local s = v:narrow(2, 1, first_end):sum(2, true)
    local a, r = running(v, adds, n_add), running(v, removes, n_rem)
    if a then s = s + a end
    if r then s = s - r end
    return s
  end

  local sum = window_sum(x64)
  local y = x64 - sum / count
  if o.norm_vars then
    local variance = window_sum(x64 * x64) / count - (sum * sum) / (count * count)
    y = torch.where(count:eq(1), torch.zeros_like(y), y * variance:pow(-0.5))
  end
  return y:to(specgram.dtype):reshape(shape)
end

return U.public_table(F, P)
