-- torch.audio.functional._resampling -- torchaudio's resampling:
-- resample (the windowed-sinc polyphase filter, "sinc_interp_hann" or
-- "sinc_interp_kaiser", one engine op: CPU and CUDA, differentiable; or
-- "soxr_hq" through libsoxr), speed (torchaudio 2.x), and Resampler, the
-- streaming form: blocks of any sizes give exactly resample's samples.
local torch = require "torch"
local C = require "torch.audio._resample"

local M = {}

local KAISER_BETA = 14.769656459379492 -- torchaudio's default beta
local METHODS = {sinc_interp_hann = true, sinc_interp_kaiser = true, soxr_hq = true}
local OPTS = {lowpass_filter_width = true, rolloff = true, resampling_method = true, beta = true}

-- a positive integer frequency (torchaudio refuses fractional ones)
local function check_freq(fname, what, v)
  if type(v) ~= "number" or v <= 0 or v ~= v or v == math.huge then
    error(("%s: %s must be a positive number, got %s"):format(fname, what, tostring(v)), 4)
  end
  if math.floor(v) ~= v then
    error(("%s: %s must be an integer number of Hz, got %s (scale both rates to integers with the same ratio)")
      :format(fname, what, tostring(v)), 4)
  end
  return math.tointeger(v)
end

-- the options table of resample, defaults filled in and checked
local function options(fname, opts)
  opts = opts or {}
  if type(opts) ~= "table" then error(("%s: options must be a table, got %s"):format(fname, type(opts)), 4) end
  for k in pairs(opts) do
    if not OPTS[k] then error(("%s: unknown option '%s'"):format(fname, tostring(k)), 4) end
  end
  local o = {lowpass_filter_width = opts.lowpass_filter_width or 6, rolloff = opts.rolloff or 0.99,
             resampling_method = opts.resampling_method or "sinc_interp_hann", beta = opts.beta or KAISER_BETA}
  if not METHODS[o.resampling_method] then
    error(("%s: unknown resampling_method '%s' (sinc_interp_hann, sinc_interp_kaiser or soxr_hq)")
      :format(fname, tostring(o.resampling_method)), 4)
  end
  local w = o.lowpass_filter_width
  if math.type(w) ~= "integer" and not (type(w) == "number" and w == math.floor(w)) or w <= 0 then
    error(("%s: lowpass_filter_width must be a positive integer, got %s"):format(fname, tostring(w)), 4)
  end
  o.lowpass_filter_width = math.tointeger(w)
  if type(o.rolloff) ~= "number" or not (o.rolloff > 0) then
    error(("%s: rolloff must be a positive number, got %s"):format(fname, tostring(o.rolloff)), 4)
  end
  if type(o.beta) ~= "number" or not (o.beta >= 0) then
    error(("%s: beta must be a non-negative number, got %s"):format(fname, tostring(o.beta)), 4)
  end
  return o
end

local function check_waveform(fname, x)
  if not torch.is_tensor(x) then error(("%s: expected a waveform tensor, got %s"):format(fname, type(x)), 4) end
  if x:dim() < 1 then error(("%s: expected a waveform [..., time], got a 0-dim tensor"):format(fname), 4) end
  if not x:is_floating_point() then
    error(("%s: expected a floating waveform, got %s"):format(fname, tostring(x.dtype)), 4)
  end
end

-- the sinc filter over x: pad_left zeros before it, out_len samples kept.
-- The filter is designed in float64 arithmetic for a float64 waveform,
-- else in float32 (torchaudio's functional resample designs it in the
-- waveform's dtype; float16/bfloat16 are computed as float32), unless
-- o.design_f32 says (transforms.Resample).
local function sinc(x, orig, new, o, pad_left, out_len)
  local f32 = o.design_f32
  if f32 == nil then f32 = x.dtype ~= torch.float64 end
  return C.audio_resample(x, orig, new, o.lowpass_filter_width, o.resampling_method, pad_left, out_len, o.rolloff,
    o.beta, f32)
end

-- x [..., time] as [rows, time] contiguous on the CPU in float32/float64,
-- with what undoes it
local function soxr_rows(fname, x)
  if x.requires_grad and torch.is_grad_enabled() then
    error(fname .. ": resampling_method 'soxr_hq' is not differentiable (the waveform requires grad); "
      .. "use sinc_interp_hann or sinc_interp_kaiser, or detach it", 4)
  end
  local dt = x.dtype == torch.float64 and torch.float64 or torch.float32
  local lead = {}
  for d = 1, x:dim() - 1 do lead[d] = x.shape[d] end
  local n = 1
  for d = 1, #lead do n = n * lead[d] end
  local rows = x:reshape(n, x.shape[x:dim()]):to{device = "cpu", dtype = dt}:contiguous()
  return rows, lead
end

-- y [rows, n] back to lead..., n on the device and dtype of like
local function soxr_back(y, lead, like)
  local shape = {}
  for d = 1, #lead do shape[d] = lead[d] end
  shape[#lead + 1] = y.shape[2]
  return y:reshape(shape):to{device = like.device, dtype = like.dtype}
end

local function out_length(new, len, orig) return (new * len + orig - 1) // orig end

-- resample(waveform, orig_freq, new_freq[, opts]): torchaudio.functional.resample
function M.resample(waveform, orig_freq, new_freq, opts)
  local fname = "torch.audio.functional.resample"
  check_waveform(fname, waveform)
  local orig, new = check_freq(fname, "orig_freq", orig_freq), check_freq(fname, "new_freq", new_freq)
  return M._resample(fname, waveform, orig, new, options(fname, opts))
end

-- _resample(fname, waveform, orig, new, o): resample with checked rates
-- and options (o from _options, maybe with design_f32 set)
function M._resample(fname, waveform, orig, new, o)
  check_waveform(fname, waveform)
  if orig == new then return waveform end
  local width, ro, rn = C.width(orig, new, o.lowpass_filter_width, o.rolloff)
  local len = waveform.shape[waveform:dim()]
  if o.resampling_method == "soxr_hq" then
    local rows, lead = soxr_rows(fname, waveform)
    local y = (require "torch.audio._soxr").resample(rows, ro, rn, out_length(rn, len, ro))
    return soxr_back(y, lead, waveform)
  end
  return sinc(waveform, ro, rn, o, width, out_length(rn, len, ro))
end

-- speed(waveform, orig_freq, factor[, {lengths=}]) -> waveform, lengths:
-- torchaudio 2.x's speed: resample from int(factor * orig_freq) Hz to
-- orig_freq Hz (the rates reduced by their gcd); lengths (a tensor of
-- valid lengths, or false/nil) become ceil(lengths * target / source).
function M.speed(waveform, orig_freq, factor, opts)
  local fname = "torch.audio.functional.speed"
  check_waveform(fname, waveform)
  if type(factor) ~= "number" or not (factor > 0) then
    error(("%s: factor must be a positive number, got %s"):format(fname, tostring(factor)), 2)
  end
  local orig = check_freq(fname, "orig_freq", orig_freq)
  local lengths = opts and opts.lengths or nil
  if opts and type(opts) ~= "table" then error(fname .. ": options must be a table", 2) end
  local source = math.tointeger(math.floor(factor * orig))
  if source < 1 then error(("%s: factor %s makes a source rate below 1 Hz"):format(fname, tostring(factor)), 2) end
  local a, b = source, orig
  while b ~= 0 do a, b = b, a % b end
  local target = orig // a
  source = source // a
  local out_lengths = nil
  if lengths then
    if not torch.is_tensor(lengths) then error(fname .. ": lengths must be a tensor", 2) end
    out_lengths = torch.ceil((lengths * target) / source):to(lengths.dtype)
  end
  return M.resample(waveform, source, target), out_lengths
end

M._options, M._check_freq = options, check_freq

require("torch.audio.functional._resampler")(M, {sinc = sinc, options = options, check_freq = check_freq,
  check_waveform = check_waveform, soxr_rows = soxr_rows, soxr_back = soxr_back, out_length = out_length})

return M
