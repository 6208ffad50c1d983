-- tests/lua/test_inline.lua -- small results of tensor arithmetic live inside
-- their Lua userdata (lua_bindings/tensor_ud.c, "inline" tensors). They must
-- behave exactly like ordinary tensors everywhere, and outlive nothing: views
-- and other references taken from them stay valid after they are collected.
-- References are closed-form (the operands are small integers).

local function seq(n, start) -- start, start+1, ... as float32
  return torch.arange(start or 1, (start or 1) + n):float()
end

test("small arithmetic results have the right values, dtype and shape", function()
  local a, b = seq(16), seq(16, 101)
  local c = a + b
  check_eq(c.dtype, torch.float32)
  check_shape(c, {16})
  for i = 1, 16 do check_eq(c[i]:item(), 2 * i + 100) end
  local d = (a * b - a) / b -- a chain of inline results
  for i = 1, 16 do check_close(d[i]:item(), (i * (i + 100) - i) / (i + 100), {rtol = 1e-6}) end
  local m = torch.ones(2, 3) + torch.ones(2, 3)
  check_shape(m, {2, 3})
  check_eq(m:sum():item(), 12)
  local f64 = torch.ones(4, {dtype = torch.float64}) * torch.ones(4, {dtype = torch.float64})
  check_eq(f64.dtype, torch.float64)
  check_eq(f64:totable(), {1, 1, 1, 1})
end)

test("a view of a small result outlives it", function()
  local v
  do
    local c = seq(16) + seq(16)
    v = c:view(4, 4)[{2, {2, 3}}]
  end
  for _ = 1, 3 do collectgarbage() end
  for _ = 1, 1000 do local _ = seq(16) + seq(16) end -- reuse the freed memory
  collectgarbage()
  check_eq(v:totable(), {12, 14})
end)

test("in-place changes of a small result are seen through it and its views", function()
  local c = seq(8) * seq(8)
  local v = c:narrow(1, 1, 2)
  c:add_(1)
  check_eq(v:totable(), {2, 5})
  c[3] = -1
  check_eq(c[3]:item(), -1)
  check_eq(c:_version() >= 2, true)
  local e = seq(4) - seq(4)
  e:fill_(7)
  check_eq(e:totable(), {7, 7, 7, 7})
end)

test("small results pass through every kind of op and keep their values", function()
  local c = seq(6) + seq(6) -- 2, 4, ..., 12
  check_eq(torch.cat({c, c}):numel(), 12)
  check_eq(torch.stack({c, c}):size(1), 2)
  check_eq(c:reshape(2, 3):t():contiguous():totable(), {{2, 8}, {4, 10}, {6, 12}})
  check_eq(c:max():item(), 12)
  check_eq(c:index_select(1, torch.tensor({1, 6})):totable(), {2, 12})
  check_eq(c[c:gt(6)]:totable(), {8, 10, 12})
  check_eq(tostring((seq(2) + seq(2)):cpu()), "tensor([2., 4.])")
  check(torch.is_tensor(c))
  check_eq(type(c), "userdata")
  check(getmetatable(seq(2) + seq(2)).__index ~= nil)
end)

test("a small result may be closed, and is then unusable", function()
  local x
  do
    local t <close> = seq(4) + seq(4)
    x = t
  end
  check_error(function() return x + 1 end, "closed")
end)

test("results larger than the inline limit are ordinary tensors", function()
  local a = seq(1000)
  local c = a + a
  check_eq(c[1000]:item(), 2000)
  local v = c:view(10, 100)
  c = nil
  collectgarbage()
  check_eq(v[10][100]:item(), 2000)
end)

test("many small results under collection keep their values", function()
  local keep = {}
  for i = 1, 20000 do
    local c = seq(4, i) + seq(4, i)
    if i % 1000 == 0 then keep[#keep + 1] = {i, c, c:view(2, 2)} end
  end
  collectgarbage()
  for _, k in ipairs(keep) do
    local i, c, v = k[1], k[2], k[3]
    check_eq(c:totable(), {2 * i, 2 * i + 2, 2 * i + 4, 2 * i + 6})
    check_eq(v[2][2]:item(), 2 * i + 6)
  end
end)

test("an inline operand saved by autograd survives its promotion and collection", function()
  local w = torch.ones(4, {requires_grad = true})
  local c = seq(4) + seq(4) -- inline
  local y = (c * w):sum()   -- MulBackward saves c
  check_eq(c:sum():item(), 20.0) -- an ordinary use promotes c
  c = nil
  collectgarbage()
  collectgarbage()
  y:backward()
  check_eq(w.grad:totable(), {2.0, 4.0, 6.0, 8.0})
end)
