-- tests/tensor/test_logit.lua -- torch.logit(x[, eps]) against PyTorch 1.13
-- (values from torch.logit on the inputs below, float64 and float32; its
-- float64 gradcheck is in tests/graph/specs_elementwise.lua).
local inf, nan = math.huge, 0 / 0
local x = {0.0, 0.05, 0.2, 0.5, 0.73, 0.95, 1.0, -0.5, 1.5, nan}
local ref = {
  none64 = {-inf, -2.9444389791664403, -1.3862943611198906, 0.0, 0.9946225751440619, 2.9444389791664394, inf, nan, nan,
            nan},
  eps64 = {-2.197224577336219, -2.197224577336219, -1.3862943611198906, 0.0, 0.9946225751440619, 2.1972245773362196,
           2.1972245773362196, -2.197224577336219, 2.1972245773362196, nan},
  none32 = {-inf, -2.944438934326172, -1.3862943649291992, 0.0, 0.9946226477622986, 2.9444386959075928, inf, nan, nan,
            nan},
  eps32 = {-2.1972246170043945, -2.1972246170043945, -1.3862943649291992, 0.0, 0.9946226477622986, 2.1972243785858154,
           2.1972243785858154, -2.1972246170043945, 2.1972243785858154, nan},
}

-- y equals the reference elementwise, infinities and NaN included
local function check_ref(y, want, rtol)
  local got = y:double():totable()
  for i, w in ipairs(want) do
    local g = got[i]
    if w ~= w then
      check(g ~= g, ("element %d: expected NaN, got %s"):format(i, g))
    elseif w == inf or w == -inf then
      check(g == w, ("element %d: expected %s, got %s"):format(i, w, g))
    else
      check(math.abs(g - w) <= rtol * math.abs(w) + 1e-12, ("element %d: expected %.17g, got %.17g"):format(i, w, g))
    end
  end
end

test("logit matches PyTorch in float64 and float32, with and without eps", function()
  local x64 = torch.tensor(x, {dtype = torch.float64})
  check_ref(torch.logit(x64), ref.none64, 1e-15)
  check_ref(torch.logit(x64, 0.1), ref.eps64, 1e-15)
  check_ref(x64:float():logit(), ref.none32, 2e-7)
  check_ref(x64:float():logit{eps = 0.1}, ref.eps32, 2e-7)
end)

test("logit of integers gives the default float; in place and strided forms agree", function()
  local y = torch.logit(torch.tensor({0, 1, 2}))
  check_eq(y.dtype, torch.float32)
  check_ref(y, {-inf, inf, nan}, 0)
  local s = torch.tensor(x, {dtype = torch.float64}):view(2, 5):t() -- non-contiguous
  check_ref(s:logit(0.1):t():reshape(-1), ref.eps64, 1e-15)
  local z = torch.tensor(x, {dtype = torch.float64})
  z:logit_(0.1)
  check_ref(z, ref.eps64, 1e-15)
end)

test("logit's gradient is PyTorch's: 0 where eps clamped the input", function()
  local xg = torch.tensor({0.05, 0.2, 0.5, 0.73, 0.95}, {dtype = torch.float64}):requires_grad_()
  torch.logit(xg, 0.1):sum():backward()
  check_ref(xg.grad, {0.0, 6.249999999999999, 4.0, 5.073566717402334, 0.0}, 1e-14)
  xg.grad = nil
  torch.logit(xg):sum():backward()
  check_ref(xg.grad, {21.05263157894737, 6.249999999999999, 4.0, 5.073566717402334, 21.05263157894735}, 1e-14)
end)

test("compiled logit (generated code) matches eager", function()
  local f = torch.compile(function(a) return torch.logit(a * 0.5 + 0.25, 0.2) + 1 end)
  local a = torch.rand(64, {dtype = torch.float64}) * 1.6 - 0.3
  for _ = 1, 2 do check_close(f(a), torch.logit(a * 0.5 + 0.25, 0.2) + 1, {atol = 1e-12, rtol = 1e-12}) end
end)
