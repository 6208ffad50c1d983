-- tests/graph/test_shape_composites.lua -- the shape helpers of tensor/shape.c
-- that are views or compositions (movedim, squeeze of several dims,
-- unflatten, atleast_nd, broadcast_to, meshgrid, split/chunk/unbind) are
-- differentiable: float64 gradcheck against finite differences, and the
-- recorded results equal the plain ones.
local here = debug.getinfo(1, "S").source:match("^@(.*)/[^/]*$") or "tests/graph"
package.path = here .. "/?.lua;" .. package.path
local G = require "gradlib"
local R, NC = G.R, G.NC

local function gc(name, fn, inputs)
  test("gradcheck " .. name, function()
    torch.manual_seed(7)
    check(torch.autograd.gradcheck(fn, inputs()))
  end)
end

gc("movedim", function(x) return x:movedim(1, 3) end, function() return {R(2, 3, 4)} end)
gc("movedim with tables", function(x) return torch.moveaxis(x, {1, 2}, {3, 1}) end, function() return {NC(2, 3, 4)} end)
gc("squeeze of several dims", function(x) return x:squeeze({2, 4}) end, function() return {R(2, 1, 3, 1)} end)
gc("unflatten", function(x) return x:unflatten(2, {2, -1}) end, function() return {R(3, 4)} end)
gc("atleast_2d and atleast_3d", function(a, b)
  local p, q = torch.atleast_2d(a, b)
  return {p, torch.atleast_3d(q)}
end, function() return {R(3), R(2, 2)} end)
gc("broadcast_to", function(x) return torch.broadcast_to(x, {2, 3, 4}) end, function() return {R(3, 1)} end)
gc("broadcast_tensors", function(a, b) return {torch.broadcast_tensors(a, b)} end, function() return {R(3, 1), R(4)} end)
gc("meshgrid ij", function(a, b) return {torch.meshgrid(a, b)} end, function() return {R(3), R(2)} end)
gc("meshgrid xy", function(a, b, c) return {torch.meshgrid(a, b, c, {indexing = "xy"})} end,
   function() return {R(3), R(2), R(2)} end)
gc("split, chunk and unbind", function(x)
  local s, c, u = x:split({1, 2}, 2), x:chunk(2, 1), x:unbind(2)
  return {s[2], c[1], u[3] * 2}
end, function() return {R(4, 3)} end)

test("recorded composites give the engine's results", function()
  torch.manual_seed(3)
  local x = torch.randn(2, 3, 4, {dtype = torch.float64})
  local xg = x:clone():requires_grad_()
  local cases = {
    function(t) return t:rot90(1, {2, 3}) end,
    function(t) return t:rot90(3) end,
    function(t) return torch.hstack({t, t}) end,
    function(t) return torch.dstack({t[1], t[2]}) end,
    function(t) return torch.tile(t, {2, 1}) end,
    function(t) return t:movedim(3, 1) end,
    function(t) return t:unflatten(3, {2, 2}) end,
    function(t) return torch.atleast_3d(t[{1, 1}]) end,
    function(t) return (torch.meshgrid(t[{1, 1}], t[{2, 2}], {indexing = "xy"})) end,
  }
  for i, f in ipairs(cases) do
    local a, b = f(x), f(xg)
    check(b.requires_grad, "case " .. i .. " is recorded")
    check_eq(a.shape, b.shape, "case " .. i)
    check_close(b:detach(), a, {atol = 0, rtol = 0})
  end
end)
