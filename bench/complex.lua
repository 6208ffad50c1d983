-- bench/complex.lua -- complex64 elementwise ops and reductions on a
-- spectrogram-sized tensor (8 x 201 x 1000: a batch of STFTs of 10 s of
-- 16 kHz audio, n_fft 400, hop 160): mul, abs, angle, exp, division by a
-- real tensor, polar, sum over time, and abs with its gradient.
-- Peer: bench/peers/complex.py (PyTorch 1.13, the same ops).
package.path = "bench/?.lua;" .. package.path
local torch = require "torch"
local B = require "common"
local only = arg and arg[1]
local function want(name) return not only or only == name end

torch.manual_seed(0)
local shape = {8, 201, 1000}
local z = torch.complex(torch.randn(table.unpack(shape)), torch.randn(table.unpack(shape)))
local w = torch.complex(torch.randn(table.unpack(shape)), torch.randn(table.unpack(shape)))
local r = torch.rand(table.unpack(shape)):add(0.5)
local n = z:numel()
local function row(name, fn, reps)
  if not want(name) then return end
  local t = torch.no_grad(function() return B.time(fn, reps or 5) end)
  B.report(name, t, n / t / 1e9, "Gelem/s")
end
row("complex_mul", function() local _ = z * w end)
row("complex_abs", function() local _ = z:abs() end)
row("complex_angle", function() local _ = z:angle() end)
row("complex_exp", function() local _ = z:exp() end)
row("complex_div_real", function() local _ = z / r end)
row("complex_polar", function() local _ = torch.polar(r, r) end)
row("complex_sum_time", function() local _ = z:sum(3) end)
if want("complex_abs_fwdbwd") then
  local zg = z:clone():requires_grad_()
  local t = B.time(function()
    local _ = torch.autograd.grad({zg:abs():sum()}, {zg})
  end, 3)
  B.report("complex_abs_fwdbwd", t, n / t / 1e9, "Gelem/s")
end
