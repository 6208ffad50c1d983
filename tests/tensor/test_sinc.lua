-- tests/tensor/test_sinc.lua -- torch.sinc(x) against PyTorch 1.13 (values
-- from torch.sinc on the inputs below, float64 and float32; its float64
-- gradcheck is in tests/graph/specs_elementwise.lua).
local nan = 0 / 0
local x = {0.0, 1e-20, 0.25, -0.5, 1.0, 1.5, 2.75, -3.2, 100.5, math.huge, nan}
local ref64 = {1.0, 1.0, 0.9003163161571061, 0.6366197723675814, 3.8981718325193755e-17, -0.2122065907891938,
               0.0818469378324643, -0.05846808023678991, 0.0031672625490924444, nan, nan}
local ref32 = {1.0, 1.0, 0.9003162980079651, 0.6366197466850281, -2.7827534054836178e-08, -0.21220658719539642,
               0.08184687793254852, -0.05846809968352318, 0.0031672625336796045, nan, nan}

-- y equals the reference elementwise within atol + rtol |want|, NaN included
local function check_ref(y, want, atol, rtol)
  local got = y:double():totable()
  for i, w in ipairs(want) do
    local g = got[i]
    if w ~= w then
      check(g ~= g, ("element %d: expected NaN, got %s"):format(i, g))
    else
      check(math.abs(g - w) <= atol + rtol * math.abs(w), ("element %d: expected %.17g, got %.17g"):format(i, w, g))
    end
  end
end

test("sinc matches PyTorch in float64 and float32 (1 at 0, NaN at inf)", function()
  local x64 = torch.tensor(x, {dtype = torch.float64})
  check_ref(torch.sinc(x64), ref64, 1e-16, 1e-15)
  check_ref(x64:float():sinc(), ref32, 1e-8, 2e-7)
end)

test("sinc of integers gives the default float; in place and strided forms agree", function()
  local y = torch.sinc(torch.tensor({0, 1, 2, -3}))
  check_eq(y.dtype, torch.float32)
  check_ref(y, {1.0, -2.7827534054836178e-08, 2.7827534054836178e-08, -2.530538223410872e-09}, 1e-8, 0)
  local s = torch.tensor({0.25, -0.5, 1.5, 2.75}, {dtype = torch.float64}):view(2, 2):t() -- non-contiguous
  check_ref(s:sinc():t():reshape(-1), {ref64[3], ref64[4], ref64[6], ref64[7]}, 1e-16, 1e-15)
  local z = torch.tensor(x, {dtype = torch.float64})
  z:sinc_()
  check_ref(z, ref64, 1e-16, 1e-15)
end)

test("sinc's gradient is PyTorch's, 0 at 0", function()
  local xg = torch.tensor({0.0, 0.25, -0.5, 1.3, 2.75}, {dtype = torch.float64}):requires_grad_()
  torch.sinc(xg):sum():backward()
  check_ref(xg.grad, {0.0, -0.7728381398822339, 1.2732395447351625, -0.2997649234201025, -0.2868922614614585}, 1e-15,
            1e-14)
end)

test("compiled sinc (generated code) matches eager", function()
  local f = torch.compile(function(a) return torch.sinc(a * 2) - a end)
  local a = torch.randn(64, {dtype = torch.float64})
  a[1] = 0
  for _ = 1, 2 do check_close(f(a), torch.sinc(a * 2) - a, {atol = 1e-12, rtol = 1e-12}) end
end)
