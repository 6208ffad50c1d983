-- torch.audio.functional._stft_real -- the short-time transform under the
-- spectral ops, on real tensors: frames cut by unfold (a view), windowed,
-- and the onesided spectrum from the engine's r2c transform as a real view
-- [..., frames, n_fft // 2 + 1, 2]. Power spectrograms never build complex
-- tensors this way; every step is a recorded op (differentiable, any
-- device). Also the shared option checks of the spectral family.
local torch = require "torch"
local NF = require "torch.nn.functional"

local S = {}

-- window_for(fname, window, win_length, n_fft, like) -> the window of
-- n_fft points: win_length points (a tensor, or Hann by default) centered
-- with zeros, in like's dtype and device
function S.window_for(fname, window, win_length, n_fft, like)
  if window == nil then
    window = torch.hann_window(win_length, {dtype = like.dtype, device = like.device})
  elseif not torch.is_tensor(window) or window:dim() ~= 1 or window:size(1) ~= win_length then
    error(("%s: window must be a 1-D tensor of win_length = %d points, got %s"):format(fname, win_length,
      torch.is_tensor(window) and "shape " .. table.concat(window:size(), "x") or type(window)), 4)
  else
    if window.dtype ~= like.dtype or window.device ~= like.device then window = window:to(like.device, like.dtype) end
  end
  if win_length < n_fft then
    local left = (n_fft - win_length) // 2
    window = NF.pad(window, {left, n_fft - win_length - left})
  end
  return window
end

-- check_sizes(fname, n_fft, hop_length, win_length): positive integers, win_length <= n_fft
function S.check_sizes(fname, n_fft, hop_length, win_length)
  for _, kv in ipairs{{"n_fft", n_fft}, {"hop_length", hop_length}, {"win_length", win_length}} do
    if math.type(kv[2]) ~= "integer" or kv[2] < 1 then
      error(("%s: %s must be a positive integer, got %s"):format(fname, kv[1], tostring(kv[2])), 4)
    end
  end
  if win_length > n_fft then
    error(("%s: win_length (%d) must not exceed n_fft (%d)"):format(fname, win_length, n_fft), 4)
  end
end

-- norms(fname, normalized) -> frame_length_norm, window_norm (torchaudio's
-- reading of normalized: true / "window" divides by the window's L2 norm,
-- "frame_length" by sqrt(n_fft))
function S.norms(fname, normalized)
  if normalized == nil or normalized == false then return false, false end
  if normalized == true or normalized == "window" then return false, true end
  if normalized == "frame_length" then return true, false end
  error(('%s: normalized must be true, false, "window" or "frame_length", got %s'):format(fname,
    tostring(normalized)), 4)
end

local PAD_MODES = {reflect = true, constant = true, replicate = true, circular = true}

function S.check_pad_mode(fname, pad_mode)
  if not PAD_MODES[pad_mode] then
    error(('%s: pad_mode must be "reflect", "constant", "replicate" or "circular", got %s'):format(fname,
      tostring(pad_mode)), 4)
  end
end

-- center_pad(fname, x [B, T], n_fft, pad_mode) -> x padded by n_fft // 2 on both sides
function S.center_pad(fname, x, n_fft, pad_mode)
  S.check_pad_mode(fname, pad_mode)
  local p = n_fft // 2
  if pad_mode == "reflect" and p >= x:size(-1) then
    error(("%s: reflect padding of %d needs a signal longer than that, got %d samples"):format(fname, p,
      x:size(-1)), 4)
  end
  if pad_mode == "reflect" then -- three slices and one cat (F.pad's reflect is slower)
    local n = x:size(-1)
    return torch.cat({x:narrow(-1, 2, p):flip(-1), x, x:narrow(-1, n - p, p):flip(-1)}, -1)
  end
  return NF.pad(x:unsqueeze(2), {p, p}, pad_mode):squeeze(2)
end

-- frames_spectrum(x [B, T'], window [n_fft], hop) -> the onesided spectra
-- of the frames as a real view [B, frames, n_fft // 2 + 1, 2]
function S.frames_spectrum(fname, x, window, n_fft, hop)
  if x:size(-1) < n_fft then
    error(("%s: the signal (%d samples after padding) is shorter than n_fft = %d"):format(fname, x:size(-1),
      n_fft), 4)
  end
  local frames <close> = x:unfold(-1, n_fft, hop) * window -- freed at once (no GC wait)
  return S.rfft_view(frames)
end

-- rfft_view(x [..., n]) -> the onesided spectrum of the last dim as a real
-- view [..., n // 2 + 1, 2] (the engine's r2c, unnormalized)
function S.rfft_view(x)
  return torch._fft.fft_r2c(x, 1 << (x:dim() - 1), 0)
end

local C -- torch.audio._spectral, the C fast path (loaded on first use)

-- fast_power(x [B, T'], window, hop, power[, reflect_pad]) -> [B, frames,
-- freq] through the engine's one-pass power spectrogram (reflect_pad:
-- samples of reflect padding it reads in place on both sides; CPU or
-- CUDA), or nil where the recorded ops must run (not float32 / float64,
-- autograd recording, torch.compile tracing)
function S.fast_power(x, window, hop, power, reflect_pad)
  if x.dtype ~= torch.float32 and x.dtype ~= torch.float64 then return nil end
  if x.device ~= window.device then return nil end
  if (torch.is_grad_enabled() and (x.requires_grad or window.requires_grad)) or torch.compiler.is_compiling() then
    return nil
  end
  C = C or require "torch.audio._spectral"
  return C.stft_power(x:contiguous(), window:contiguous(), hop, power, reflect_pad or 0)
end

-- power_of(spec_view [..., 2], power) -> |z|^power (power 1: |z|)
function S.power_of(v, power)
  local sq <close> = v * v
  local p2 = sq:sum(-1)
  if power == 2 then return p2 end
  if power == 1 then return p2:sqrt() end
  return p2:pow(power / 2)
end

-- full_from_half(v [B, F, K, 2], n_fft) -> the two-sided spectrum [B, F,
-- n_fft, 2] (the missing bins are conjugates of the mirrored ones)
function S.full_from_half(v, n_fft)
  local k = v:size(-2)
  local rest = n_fft - k
  if rest <= 0 then return v end
  local mirror = v:narrow(-2, 2, rest):flip(-2)
  mirror = torch.stack({mirror:select(-1, 1), -mirror:select(-1, 2)}, -1)
  return torch.cat({v, mirror}, -2)
end

-- overlap_add(frames [B, F, n], hop, L) -> [B, L]: the frames summed at
-- their offsets f * hop (torch.istft's: in-place adds of strided views)
local function overlap_add(frames, hop, L)
  return require("torch.fft._stft")._overlap_add(frames, frames:size(3), hop, L)
end

-- istft_view(fname, v [B, F, K, 2], n_fft, hop, window [n_fft], length?,
-- center) -> [B, time]: the least-squares signal of onesided spectra (each
-- frame's irfft times the window, overlap-added, divided by the window's
-- squared overlap-add), trimmed as torch.istft trims
function S.istft_view(fname, v, n_fft, hop, window, length, center)
  local nf = v:size(2)
  local frames = torch._fft.fft_c2r(v:contiguous(), 1 << 2, n_fft, 2) * window
  local L = n_fft + hop * (nf - 1)
  local y = overlap_add(frames, hop, L)
  local env = overlap_add((window * window):view(1, 1, n_fft):expand(1, nf, n_fft), hop, L):view(L)
  local start = center and n_fft // 2 or 0
  local stop = length and start + length or (center and L - n_fft // 2 or L)
  local keep = math.max(0, math.min(stop, L) - start)
  y, env = y:narrow(2, start + 1, keep), env:narrow(1, start + 1, keep)
  if keep > 0 and env:abs():min():item() < 1e-11 then
    error(("%s: the window's squared overlap-add vanishes somewhere (NOLA fails for this window and hop %d)")
      :format(fname, hop), 4)
  end
  y = y / env
  if stop > L then y = NF.pad(y, {0, stop - L}) end
  return y
end

-- magnitude(v [..., 2]) -> |z| [...]; phase(v) -> atan2(im, re)
function S.magnitude(v) return torch.hypot(v:select(-1, 1), v:select(-1, 2)) end
function S.phase(v) return torch.atan2(v:select(-1, 2), v:select(-1, 1)) end
-- polar(mag, phase) -> the real view [..., 2] of mag * exp(i phase)
function S.polar(mag, phase) return torch.stack({mag * phase:cos(), mag * phase:sin()}, -1) end

return S
