-- tests/repl/test_complete.lua -- the data Tab completion (repl/complete.c)
-- reads without running code: the tensor metatable's __properties and the
-- __package name of lazy packages. (Completion itself is tested through a
-- pty in test_repl.py.)

test("every property in __properties is served by a tensor", function()
  local x = torch.zeros(2, 3, {requires_grad = true})
  local props = getmetatable(x).__properties
  check(type(props) == "table", "no __properties")
  local n = 0
  for name in pairs(props) do
    n = n + 1
    local ok, err = pcall(function() return x[name] end)
    check(ok, name .. ": " .. tostring(err))
    check(getmetatable(x).__methods[name] == nil, name .. " is a method, not a property")
  end
  check(n >= 10, "only " .. n .. " properties")
  for _, name in ipairs{"shape", "dtype", "device", "grad", "grad_fn", "requires_grad", "T", "is_leaf", "ndim"} do
    check(props[name], name .. " missing")
  end
end)

test("lazy packages carry their name for completion", function()
  check_eq(rawget(getmetatable(torch), "__package"), "torch")
  check_eq(rawget(getmetatable(torch.utils), "__package"), "torch.utils")
end)
