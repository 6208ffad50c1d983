-- tests/graph/test_inplace_grad.lua -- gradients through in-place writes:
-- assignment into slices of non-leaf tensors and of fresh zeros (the
-- CopySlices path), x[mask] = v, x[idx] = v, in-place ops on views; the
-- errors for in-place changes of leaves and of tensors saved for backward.
-- Reference gradients: tests/ref/gen_inplace_grad.py (PyTorch 1.13), whose
-- cases mirror these line by line.
local R = ref("inplace_grad")
local f64 = {dtype = torch.float64}

local function I(t) return torch.tensor(t) end
local function B(t) return torch.tensor(t, {dtype = torch.bool}) end
local function leaf(t) return t:detach():requires_grad_() end
local function x34() return leaf(((torch.arange(12, f64) - 5.5) / 4):reshape(3, 4)) end
local function loss(y) return (y * y * torch.arange(1, 13, f64):reshape(3, 4)):sum() end

-- compares the .grad of each named leaf with the reference
local function check_grads(name, leaves)
  for k, t in pairs(leaves) do
    check(t.grad, ("%s: %s has no gradient"):format(name, k))
    check_close(t.grad, R[name][k], {atol = 1e-12, rtol = 1e-12})
  end
end

test("assignment into a slice of a non-leaf tensor", function()
  local x, v = x34(), leaf(torch.tensor({0.5, -1.5}, f64))
  local y = x * 2
  y[{2, {1, 2}}] = v
  check(y.grad_fn ~= nil and tostring(y.grad_fn):find("CopySlices"), "y's history goes through CopySlices")
  loss(y):backward()
  check_grads("slice_nonleaf", {x = x, v = v})
end)

test("assignment into fresh zeros gives gradients to the assigned values (CopySlices)", function()
  local a, b = leaf(torch.tensor({1, 2, 3}, f64)), leaf(torch.tensor({0.25, -0.5, 0.75, 1}, f64))
  local z = torch.zeros(3, 4, f64)
  z[{{}, 2}] = a
  z[3] = b * 3
  z[{1, 4}] = 7
  check(z.requires_grad, "z requires grad after taking a value that does")
  loss(z):backward()
  check_grads("zeros_copyslices", {a = a, b = b})
end)

test("index-tensor assignment into a view of fresh zeros", function()
  local v = leaf(torch.tensor({2, -3}, f64))
  local z = torch.zeros(3, 4, f64)
  z[2][I{1, 3}] = v
  loss(z):backward()
  check_grads("zeros_view_index", {v = v})
end)

test("x[mask] = v and x[mask] = number on a non-leaf tensor", function()
  local x, v = x34(), leaf(torch.arange(6, f64) / 3)
  local y = x * 1
  y[x:gt(0)] = v
  y[x:lt(-1)] = 0
  loss(y):backward()
  check_grads("mask_nonleaf", {x = x, v = v})
end)

test("x[idx] = v and index_put_ with accumulate on a non-leaf tensor", function()
  local x, v, u = x34(), leaf(torch.arange(8, f64):reshape(2, 4) / 5), leaf(torch.tensor({1.5, -2}, f64))
  local y = x * 1
  y[I{3, 1}] = v
  y:index_put_({I{2, 2}, I{1, 4}}, u, true)
  loss(y):backward()
  check_grads("index_tensor_nonleaf", {x = x, v = v, u = u})
end)

test("in-place ops on views of a non-leaf tensor (narrow(...):mul_(2), add_)", function()
  local x = x34()
  local y = x * 1
  y:narrow(2, 2, 2):mul_(2)
  y[1]:add_(y[3])
  loss(y):backward()
  check_grads("narrow_mul_", {x = x})
end)

test("masked_fill_ and index_fill_ on views of a non-leaf tensor", function()
  local x = x34()
  local y = x * 1
  y[2]:masked_fill_(B{true, false, true, false}, 0)
  y[{{}, 4}]:index_fill_(1, I{1}, 5)
  loss(y):backward()
  check_grads("view_masked_fill_", {x = x})
end)

test("scatter_ on a view of a non-leaf tensor", function()
  local x, s = x34(), leaf(torch.arange(4, f64):reshape(2, 2) - 1)
  local y = x * 1
  y[{{2, 3}}]:scatter_(2, I{{2, 4}, {1, 3}}, s)
  loss(y):backward()
  check_grads("view_scatter_", {x = x, s = s})
end)

test("assignment into a copy of a saved tensor leaves the saved one intact", function()
  local x = x34()
  local y = x:exp()
  local z = y * 1
  z[{{}, {2, 3}}] = 0
  loss(z):backward()
  check_grads("exp_then_slice", {x = x})
end)

test("in-place changes of a leaf that requires grad are refused", function()
  local x = x34()
  local needle = "leaf tensor that requires grad cannot be modified in place"
  check_error(function() x:add_(1) end, needle)
  check_error(function() x[1] = 0 end, needle)
  check_error(function() x[{{}, 2}] = torch.zeros(3, f64) end, needle)
  check_error(function() x[x:gt(0)] = 1 end, needle)
  check_error(function() x[I{1}] = 1 end, needle)
  check_error(function() x:index_fill_(1, I{1}, 0) end, needle)
  check_error(function() x:masked_fill_(x:gt(0), 0) end, needle)
  check_error(function() x:scatter_(2, I{{1}}, 0) end, needle)
  check_error(function() x:tril_() end, needle)
  check_close(x, ((torch.arange(12, f64) - 5.5) / 4):reshape(3, 4)) -- untouched
  torch.no_grad(function() x[1] = 0 end) -- allowed outside grad mode
  check(x[{1, 1}]:item() == 0)
end)

test("modifying a tensor saved for backward raises the version error", function()
  local x = x34()
  local y = x:exp()
  y:add_(1)
  check_error(function() y:sum():backward() end, "modified by an in-place operation")
  y = x:exp()
  y:add_(1)
  local ok, msg = pcall(function() y:sum():backward() end)
  check(not ok and msg:find("ExpBackward0", 1, true) and msg:find("is at version 1; expected version 0", 1, true),
        "the message names the node and the versions: " .. tostring(msg))
  -- the index ops bump the version too
  y = x:exp()
  y[{1, {1, 2}}] = 0
  check_error(function() y:sum():backward() end, "ExpBackward0")
  y = x:exp()
  y:masked_fill_(x:gt(0), 0)
  check_error(function() y:sum():backward() end, "ExpBackward0")
  y = x:exp()
  y:index_add_(1, I{1}, torch.ones(1, 4, f64))
  check_error(function() y:sum():backward() end, "ExpBackward0")
end)

test("modifying a saved index tensor raises the version error naming the op", function()
  local x = x34()
  local idx = I{1, 3}
  local y = x:index_select(1, idx)
  idx:add_(0)
  local ok, msg = pcall(function() y:sum():backward() end)
  check(not ok and msg:find("IndexSelectBackward0", 1, true) and msg:find("expected version 0", 1, true),
        tostring(msg))
end)

test("the functional forms do not touch their input", function()
  local x = x34()
  local before = x:detach():clone()
  local y = x:index_fill(1, I{1}, 0):masked_fill(x:gt(0), 1):scatter(2, I{{1}, {2}, {3}}, 2)
  check_close(x, before)
  check(tostring(y.grad_fn):find("ScatterBackward1"), tostring(y.grad_fn))
  y:sum():backward()
  check_close(x.grad, {{0, 0, 0, 0}, {1, 0, 0, 0}, {0, 0, 0, 0}}) -- row 1 filled, x > 0 masked, scattered
end)

test("out= is refused when an input requires grad", function()
  local x = x34()
  local needle = "out= cannot be used when an input requires grad"
  check_error(function() torch.cat({x, x}, 1, {out = torch.zeros(6, 4, f64)}) end, needle)
  check_error(function() torch.index_select(x, 1, I{1}, {out = torch.zeros(1, 4, f64)}) end, needle)
  check_error(function() torch.scatter(x, 1, I{{1}}, 0, {out = torch.zeros(3, 4, f64)}) end, needle)
  check_error(function() torch.flip(x, 1, {out = torch.zeros(3, 4, f64)}) end, needle)
  local o = torch.zeros(6, 4, f64)
  torch.no_grad(function() torch.cat({x, x}, 1, {out = o}) end)
  check_close(o[{{4, 6}}], x:detach())
end)

test("scatter with reduce='multiply' is not differentiable", function()
  local x = x34()
  check_error(function() x:scatter(2, I{{1}}, 2, {reduce = "multiply"}) end, "not differentiable")
  local y = torch.no_grad(function() return x:scatter(2, I{{1}}, 2, {reduce = "multiply"}) end)
  check(not y.requires_grad)
end)
