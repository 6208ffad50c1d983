-- torch.audio.transforms._resampling -- torchaudio's Resample, Speed and
-- SpeedPerturbation modules over torch.audio.functional's resample and
-- speed. Resample also streams: m:process(block), m:flush(), m:reset()
-- (torch.audio.functional.Resampler's, with the module's settings).
local torch = require "torch"
local nn = require "torch.nn"
local F = require "torch.audio.functional._resampling"

local M = {}

local Resample = nn.Module:extend("Resample")
Resample.__prefix = "torch.audio.transforms."

-- Resample([orig_freq=16000, new_freq=16000, {resampling_method=,
-- lowpass_filter_width=, rolloff=, beta=, dtype=}]); the options may also
-- carry orig_freq and new_freq. As torchaudio's module, the filter is
-- designed in float64 (dtype=torch.float32: in float32) and applied in
-- the waveform's dtype.
function Resample:__init(orig_freq, new_freq, opts)
  local fname = "torch.audio.transforms.Resample"
  if type(orig_freq) == "table" then opts, orig_freq, new_freq = orig_freq, orig_freq.orig_freq, orig_freq.new_freq end
  opts = opts or {}
  if type(opts) ~= "table" then error(fname .. ": options must be a table", 3) end
  self.orig_freq, self.new_freq = orig_freq or 16000, new_freq or 16000
  local o = {}
  for k, v in pairs(opts) do
    if k ~= "orig_freq" and k ~= "new_freq" and k ~= "dtype" then o[k] = v end
  end
  self.dtype = opts.dtype
  local f32 = opts.dtype == torch.float32
  self._orig = F._check_freq(fname, "orig_freq", self.orig_freq)
  self._new = F._check_freq(fname, "new_freq", self.new_freq)
  self.opts = F._options(fname, o)
  self.opts.design_f32 = f32
  self._stream = F.Resampler(self.orig_freq, self.new_freq, o, f32)
end

function Resample:forward(waveform)
  return F._resample("torch.audio.transforms.Resample", waveform, self._orig, self._new, self.opts)
end

-- m:process(block) / m:flush() / m:reset(): resampling as a stream (see
-- torch.audio.functional.Resampler)
function Resample:process(block) return self._stream:process(block) end
function Resample:flush() return self._stream:flush() end
function Resample:reset() self._stream:reset() end

function Resample:extra_repr()
  return ("orig_freq=%s, new_freq=%s, resampling_method=%s"):format(self.orig_freq, self.new_freq,
    self.opts.resampling_method or "sinc_interp_hann")
end
M.Resample = Resample

local Speed = nn.Module:extend("Speed")
Speed.__prefix = "torch.audio.transforms."

-- Speed(orig_freq, factor): forward(waveform[, lengths]) -> waveform, lengths
function Speed:__init(orig_freq, factor)
  if type(orig_freq) ~= "number" or type(factor) ~= "number" then
    error(("torch.audio.transforms.Speed: expected (orig_freq, factor) numbers, got %s, %s"):format(
      type(orig_freq), type(factor)), 3)
  end
  self.orig_freq, self.factor = orig_freq, factor
end

function Speed:forward(waveform, lengths)
  return F.speed(waveform, self.orig_freq, self.factor, {lengths = lengths})
end

function Speed:extra_repr() return ("orig_freq=%s, factor=%s"):format(self.orig_freq, self.factor) end
M.Speed = Speed

local SpeedPerturbation = nn.Module:extend("SpeedPerturbation")
SpeedPerturbation.__prefix = "torch.audio.transforms."

-- SpeedPerturbation(orig_freq, factors): forward picks one of factors
-- uniformly (torch.randint, so torch.manual_seed repeats it) and applies
-- Speed with it
function SpeedPerturbation:__init(orig_freq, factors)
  if type(factors) ~= "table" or #factors == 0 then
    error("torch.audio.transforms.SpeedPerturbation: factors must be a non-empty list of numbers", 3)
  end
  self.orig_freq = orig_freq
  self.speeders = {}
  for i, f in ipairs(factors) do self.speeders[i] = Speed(orig_freq, f) end
  self.factors = factors
end

function SpeedPerturbation:forward(waveform, lengths)
  local idx = torch.randint(1, #self.speeders + 1, {}):item()
  return self.speeders[idx](waveform, lengths)
end

function SpeedPerturbation:extra_repr()
  local parts = {}
  for i, f in ipairs(self.factors) do parts[i] = tostring(f) end
  return ("orig_freq=%s, factors={%s}"):format(self.orig_freq, table.concat(parts, ", "))
end
M.SpeedPerturbation = SpeedPerturbation

return M
