-- torch.audio.functional._dither -- dither: quantization to 16 bits with an
-- added dither signal, torchaudio's three density functions (TPDF: a
-- Bartlett window along time; RPDF and GPDF: offsets drawn from the
-- waveform's own samples at random positions, as torchaudio does) and its
-- first-order noise shaping (each sample plus the previous one's error).
local torch = require "torch"
local U = require "torch.nn.util"
local CK = require "torch.audio.functional._checks"

local F = {}
local P = "torch.audio.functional."

local UP = 2 ^ 15 - 2   -- torchaudio's scale up (16 bits, less 2)
local DOWN = 2 ^ 15     -- and down

-- sample_at(x [C, T], k) -> [1, 1]: k samples of x at random positions,
-- summed; channels drawn below C - 1 and times below T - 1 as torchaudio
-- draws them (0 where that range is empty)
local function sample_at(x, k)
  local C, T = x:size(1), x:size(2)
  local opts = {device = x.device}
  local c = C > 1 and torch.randint(0, C - 1, {k}, opts) or torch.zeros(k, {dtype = torch.int64, device = x.device})
  local t = T > 1 and torch.randint(0, T - 1, {k}, opts) or torch.zeros(k, {dtype = torch.int64, device = x.device})
  return x:reshape(-1):index_select(1, c * T + t + 1):sum():reshape(1, 1)
end

-- dither(waveform[, density_function="TPDF", noise_shaping=false]) ->
-- [..., time]: round(waveform (2^15 - 2) + dither) / 2^15, plus the
-- previous sample's quantization error with noise_shaping
function F.dither(waveform, ...)
  local fname = P .. "dither"
  CK.float_tensor(fname, "waveform", waveform, 1, "[..., time]")
  local o = U.args(fname, {"density_function", "noise_shaping"}, {density_function = "TPDF", noise_shaping = false},
    ...)
  U.choice(fname, "density_function", o.density_function, "TPDF RPDF GPDF")
  local shape = waveform:size()
  local T = shape[#shape]
  if T == 0 then return waveform end
  local x = waveform:reshape(-1, T)
  local scaled = x * UP
  local noise
  if o.density_function == "TPDF" then
    noise = torch.bartlett_window(T, {dtype = x.dtype, device = x.device}):unsqueeze(1)
  elseif o.density_function == "RPDF" then
    noise = sample_at(x, 1) - 0.5
  else
    noise = sample_at(x, 7) -- torchaudio's sum of seven samples
  end
  local y = torch.round(scaled + noise) / DOWN
  if o.noise_shaping then
    local err = y - x
    y = y + torch.cat({torch.zeros_like(err:narrow(2, 1, 1)), err:narrow(2, 1, T - 1)}, 2)
  end
  return y:reshape(shape)
end

return U.public_table(F, P)
