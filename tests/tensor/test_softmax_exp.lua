-- tests/tensor/test_softmax_exp.lua -- float32 softmax uses a short
-- polynomial exp (tensor/cpu/softmax_kernels.c): its results stay within a
-- few ulp of a float64 reference over the whole normal range, and masked
-- (-inf) entries get exactly 0.

test("float32 softmax within 8 ulp of float64 over [-80, 0]", function()
  for _, lo in ipairs({-80, -20, -1}) do
    local x = torch.linspace(lo, 0, 50001):view(1, -1)
    local y = torch.softmax(x, 2):double()
    local ref = torch.softmax(x:double(), 2)
    local err = ((y - ref):abs() / ref):max():item()
    check(err < 8 * 5.96e-8, ("range [%d, 0]: relative error %.3g"):format(lo, err))
  end
end)

test("log_softmax float32 matches float64 closely", function()
  local x = torch.linspace(-30, 30, 4001):view(1, -1)
  check_close(torch.log_softmax(x, 2), torch.log_softmax(x:double(), 2), {atol = 2e-5, rtol = 1e-6})
end)

test("-inf entries get probability exactly 0, columns too", function()
  local m = torch.tensor({{0, -math.huge, 1}, {-math.huge, 2, 2}})
  local s = torch.softmax(m, 2)
  check_eq(s[{1, 2}]:item(), 0.0)
  check_eq(s[{2, 1}]:item(), 0.0)
  check_close(s[2], {0, 0.5, 0.5})
  local c = torch.softmax(m, 1)
  check_eq(c[{1, 2}]:item(), 0.0)
  check_close(c[{{}, 3}], {0.2689414213699951, 0.7310585786300049})
end)
