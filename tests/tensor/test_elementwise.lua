-- tests/tensor/test_elementwise.lua -- elementwise ops and type promotion
-- against values computed by PyTorch (tests/ref/elementwise.lua).
test("add broadcasts a row over a matrix", function()
  local a = torch.tensor({{1, 2, 3}, {4, 5, 6}})
  local b = torch.tensor({10, 20, 30})
  check_close(a + b, {{11, 22, 33}, {14, 25, 36}})
  check_eq((a + b).dtype, torch.int64)
end)

test("int tensor plus Lua float gives the default float dtype", function()
  local a = torch.tensor({1, 2}, {dtype = torch.int32})
  check_eq((a + 2.5).dtype, torch.float32)
  check_eq((a + 2).dtype, torch.int32)
  check_close(a / 2, {0.5, 1.0})
end)

test("shape mismatch names the op and shapes", function()
  check_error(function() return torch.ones(2, 3) + torch.ones(4) end, "add: shapes 2x3 and 4 cannot be broadcast")
end)
