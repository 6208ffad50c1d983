-- torch.audio.functional._convolve -- convolve (direct, through the
-- engine's grouped conv1d), fftconvolve (through torch.fft when it is
-- built) and add_noise at a given SNR. Leading dims broadcast as in
-- torchaudio: each pair of sizes equal, or one of them 1.
local torch = require "torch"
local U = require "torch.nn.util"
local NF = require "torch.nn.functional"

local F = {}
local P = "torch.audio.functional."

local function shape_str(t) return "[" .. table.concat(t.shape, ", ") .. "]" end

local MODES = {full = true, valid = true, same = true}

local function check_mode(fname, mode)
  if not MODES[mode] then
    error(("%s: unknown mode %s (one of full, valid, same)"):format(fname, tostring(mode)), 3)
  end
end

-- x and y: tensors of one rank whose leading dims broadcast
local function check_operands(fname, x, y)
  if not torch.is_tensor(x) or not torch.is_tensor(y) then error(fname .. ": x and y must be tensors", 3) end
  if x:dim() ~= y:dim() then
    error(("%s: the operands must have the same number of dimensions, got %s and %s"):format(fname, shape_str(x),
      shape_str(y)), 3)
  end
  if x:dim() < 1 then error(fname .. ": the operands need a last (signal) dimension", 3) end
  for i = 1, x:dim() - 1 do
    local a, b = x:size(i), y:size(i)
    if a ~= b and a ~= 1 and b ~= 1 then
      error(("%s: leading dimensions of x %s and y %s are not broadcastable"):format(fname, shape_str(x),
        shape_str(y)), 3)
    end
  end
end

-- The part of a full convolution r (length nx + ny - 1) that mode keeps.
local function apply_mode(r, nx, ny, mode)
  if mode == "full" then return r end
  local len = mode == "valid" and math.max(nx, ny) - math.min(nx, ny) + 1 or nx
  local start = (r:size(-1) - len) // 2
  return r:narrow(-1, start + 1, len)
end

-- convolve(x, y[, mode="full"]): the convolution of the last dims
function F.convolve(x, y, ...)
  local fname = P .. "convolve"
  local o = U.args(fname, {"mode"}, {mode = "full"}, ...)
  check_operands(fname, x, y)
  check_mode(fname, o.mode)
  local nx, ny = x:size(-1), y:size(-1)
  if nx < ny then x, y = y, x end
  local lead = {}
  for i = 1, x:dim() - 1 do lead[i] = math.max(x:size(i), y:size(i)) end
  local xs, ys = {table.unpack(lead)}, {table.unpack(lead)}
  xs[#xs + 1], ys[#ys + 1] = x:size(-1), y:size(-1)
  local n = 1
  for _, s in ipairs(lead) do n = n * s end
  local x2 = x:expand(xs):reshape(1, n, x:size(-1))
  local w = y:expand(ys):reshape(n, 1, y:size(-1)):flip(-1)
  local r = NF.conv1d(x2, w, {groups = n, padding = y:size(-1) - 1})
  lead[#lead + 1] = r:size(-1)
  return apply_mode(r:reshape(lead), nx, ny, o.mode)
end

-- fftconvolve(x, y[, mode="full"]): convolve's result through real FFTs
-- of length nx + ny - 1 (needs torch.fft)
function F.fftconvolve(x, y, ...)
  local fname = P .. "fftconvolve"
  local o = U.args(fname, {"mode"}, {mode = "full"}, ...)
  check_operands(fname, x, y)
  check_mode(fname, o.mode)
  local fft = torch.fft
  if not fft or not fft.rfft then error(fname .. ": needs torch.fft, which this build does not have", 2) end
  local n = x:size(-1) + y:size(-1) - 1
  local r = fft.irfft(fft.rfft(x, {n = n}) * fft.rfft(y, {n = n}), {n = n})
  return apply_mode(r, x:size(-1), y:size(-1), o.mode)
end

-- add_noise(waveform, noise, snr[, lengths=false]): waveform + noise
-- scaled so that the signal-to-noise ratio is snr dB (energies over the
-- first lengths samples of each item when lengths is given)
function F.add_noise(waveform, noise, snr, ...)
  local fname = P .. "add_noise"
  local o = U.args(fname, {"lengths"}, nil, ...)
  for _, v in ipairs({{"waveform", waveform}, {"noise", noise}, {"snr", snr}}) do
    if not torch.is_tensor(v[2]) then error(("%s: %s must be a tensor, got %s"):format(fname, v[1], type(v[2])), 2) end
  end
  local lengths = o.lengths or nil
  if not (waveform:dim() == noise:dim() and waveform:dim() - 1 == snr:dim() and (not lengths or lengths:dim() == snr:dim())) then
    error(("%s: leading dimensions don't match: waveform %s, noise %s, snr %s%s"):format(fname, shape_str(waveform),
      shape_str(noise), shape_str(snr), lengths and ", lengths " .. shape_str(lengths) or ""), 2)
  end
  local L = waveform:size(-1)
  if L ~= noise:size(-1) then
    error(("%s: the lengths of waveform and noise differ (%d and %d)"):format(fname, L, noise:size(-1)), 2)
  end
  local mw, mn = waveform, noise
  if lengths then
    local mask = torch.arange(0, L, {device = waveform.device}):lt(lengths:unsqueeze(-1))
    mw, mn = waveform * mask, noise * mask
  end
  local es = (mw * mw):sum(-1)
  local en = (mn * mn):sum(-1)
  local snr0 = (torch.log10(es) - torch.log10(en)) * 10
  local scale = (10 ^ ((snr0 - snr) / 20)):unsqueeze(-1)
  return waveform + scale * noise
end

return U.public_table(F, P)
