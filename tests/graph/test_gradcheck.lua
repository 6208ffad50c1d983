-- tests/graph/test_gradcheck.lua -- walks the engine's op registry: every op
-- marked differentiable must either have a derivative checked here against
-- finite differences (float64 gradcheck, including broadcasting and
-- non-contiguous inputs), or be explicitly marked as having none in
-- graph/derivatives.c. Cases live in specs_<family>.lua next to this file:
--   return { opname = { {fn = function(a, b) ... end, inputs = function() return {a, b} end,
--                         second_order = true, atol =, rtol =}, ... }, ... }
-- Second-order gradients (gradgradcheck) run where second_order is set.
local here = debug.getinfo(1, "S").source:match("^@(.*)/[^/]*$") or "tests/graph"
package.path = here .. "/?.lua;" .. package.path
local specs = {}
for _, family in ipairs({"elementwise", "views", "reduce", "movement", "index", "linalg", "nn", "attention", "vision",
                         "fft", "audio"}) do
  local ok, t = pcall(require, "specs_" .. family)
  if ok then
    for op, cases in pairs(t) do
      assert(not specs[op], "two spec files cover " .. op)
      specs[op] = cases
    end
  elseif not tostring(t):find("not found") then
    error(t)
  end
end

local diff_ops = {}
for _, op in ipairs(torch._ops()) do
  if op.differentiable then diff_ops[#diff_ops + 1] = op.name end
end

test("the registry has differentiable ops and every one is accounted for", function()
  check(#diff_ops > 100, "only " .. #diff_ops .. " differentiable ops")
  local missing, unchecked = {}, {}
  for _, name in ipairs(diff_ops) do
    local st = torch._derivative_status(name)
    if st < 0 then missing[#missing + 1] = name end
    if st == 1 and not specs[name] then unchecked[#unchecked + 1] = name end
  end
  check(#missing == 0, "differentiable ops without a derivative: " .. table.concat(missing, ", "))
  check(#unchecked == 0, "derivatives without a gradcheck case: " .. table.concat(unchecked, ", "))
end)

test("every registry op is found by its name (the sorted lookup); other names are not", function()
  local n = 0
  for _, op in ipairs(torch._ops()) do
    check(pcall(torch._derivative_status, op.name), "op not found by name: " .. op.name)
    n = n + 1
  end
  check(n > 150, "only " .. n .. " ops")
  for _, name in ipairs {"", "a", "zzzz", "sum_", "Sum", "softmax2"} do
    check(not pcall(torch._derivative_status, name), "found an op named '" .. name .. "'")
  end
end)

for _, name in ipairs(diff_ops) do
  for k, case in ipairs(specs[name] or {}) do
    test(("gradcheck %s #%d"):format(name, k), function()
      torch.manual_seed(1000 + k)
      local inputs = case.inputs()
      check(torch.autograd.gradcheck(case.fn, inputs, {atol = case.atol, rtol = case.rtol, eps = case.eps}))
      if case.second_order then
        torch.manual_seed(2000 + k)
        check(torch.autograd.gradgradcheck(case.fn, inputs, {atol = case.atol, rtol = case.rtol, eps = case.eps}))
      end
    end)
  end
end
