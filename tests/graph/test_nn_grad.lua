-- tests/graph/test_nn_grad.lua -- gradients through convolution, batch
-- norm, relu, max pooling and a linear layer (and a gradient penalty
-- through conv and avg_pool) against PyTorch's autograd on the same float32
-- weights (tests/ref/gen_nn_grad.py), plus the recorded graph's behaviour
-- for these ops: node names, errors, no_grad.
local R = ref("nn_grad")
local f32 = {dtype = torch.float32}
local function T(v) return torch.tensor(v, f32) end
local function leaves()
  local ps = {}
  for i, k in ipairs({"x", "cw", "cb", "gamma", "beta", "lw", "lb"}) do ps[i] = T(R[k]):requires_grad_() end
  return ps
end
local names = {"gx", "gcw", "gcb", "ggamma", "gbeta", "glw", "glb"}
local tol = {rtol = 1e-4, atol = 2e-6}

local function one_hot(labels, k)
  local o = torch.zeros(#labels, k)
  for i, l in ipairs(labels) do o[{i, l}] = 1 end
  return o
end

local function net(ps, rm, rv, training)
  local x, w, b, g, be, lw, lb = table.unpack(ps)
  local h = torch.conv2d(x, w, b, {padding = 1})
  h = torch.batch_norm(h, g, be, rm, rv, training, 0.1, 1e-5)
  h = torch.max_pool2d(torch.relu(h), 2)
  local logits = h:flatten(2):matmul(lw:t()) + lb
  return -(logits:log_softmax(2) * one_hot(R.labels, 5)):sum() / 4
end

test("conv -> batch_norm (training) -> relu -> max_pool -> linear: loss, gradients, running stats match PyTorch",
  function()
    local ps = leaves()
    local rm, rv = T(R.rm0), T(R.rv0)
    local loss = net(ps, rm, rv, true)
    check_close(loss:item(), R.loss, tol)
    loss:backward()
    for i, n in ipairs(names) do check_close(ps[i].grad, T(R[n]), tol) end
    check_close(rm, T(R.rm1), tol)
    check_close(rv, T(R.rv1), tol)
  end)

test("the same network with batch_norm in eval mode (running statistics) matches PyTorch", function()
  local ps = leaves()
  local rm, rv = T(R.rm0), T(R.rv0)
  local loss = net(ps, rm, rv, false)
  check_close(loss:item(), R.eval_loss, tol)
  loss:backward()
  for i, n in ipairs(names) do check_close(ps[i].grad, T(R["eval_" .. n]), tol) end
  check_close(rm, T(R.rm0), {rtol = 0, atol = 0})
end)

test("a gradient penalty through conv -> tanh -> avg_pool -> linear (create_graph) matches PyTorch", function()
  local x, w, b, _, _, lw, lb = table.unpack(leaves())
  local h = torch.avg_pool2d(torch.tanh(torch.conv2d(x, w, b, {padding = 1})), 2)
  local out = (h:flatten(2):matmul(lw:t()) + lb):pow(2):sum() / 4
  local gx = torch.autograd.grad(out, x, {create_graph = true})[1]
  check(gx.requires_grad, "the input gradient has a graph")
  local pen = gx:pow(2):sum()
  check_close(pen:item(), R.pen, tol)
  pen:backward()
  check_close(w.grad, T(R.pen_gcw), tol)
  check_close(b.grad, T(R.pen_gcb), tol)
  check_close(lw.grad, T(R.pen_glw), tol)
  check_close(x.grad, T(R.pen_gx), tol)
end)

test("nn ops record nodes named after the op; statistics and indices carry no gradient", function()
  local x = torch.randn(1, 2, 4, 4):requires_grad_()
  local w = torch.randn(2, 2, 3, 3):requires_grad_()
  check_eq(tostring(torch.conv2d(x, w).grad_fn), "<ConvolutionBackward0>")
  check_eq(tostring(torch.conv_transpose2d(x, w).grad_fn), "<ConvTransposeBackward0>")
  local y, ix = torch.max_pool2d_with_indices(x, 2)
  check_eq(tostring(y.grad_fn), "<MaxPoolBackward0>")
  check(not ix.requires_grad, "indices need no grad")
  check_eq(tostring(torch.avg_pool2d(x, 2).grad_fn), "<AvgPoolBackward0>")
  check_eq(tostring(torch.adaptive_avg_pool2d(x, 1).grad_fn), "<AdaptiveAvgPoolBackward0>")
  local b, m, inv = torch.batch_norm(x, nil, nil, nil, nil, true)
  check_eq(tostring(b.grad_fn), "<BatchNormBackward0>")
  check(not m.requires_grad and not inv.requires_grad, "saved statistics need no grad")
  local l, lm, lr = torch.layer_norm(x, 4)
  check_eq(tostring(l.grad_fn), "<LayerNormBackward0>")
  check(not lm.requires_grad and not lr.requires_grad, "layer norm statistics need no grad")
  check_eq(tostring((torch.group_norm(x, 2)).grad_fn), "<GroupNormBackward0>")
  torch.no_grad(function()
    check(not torch.conv2d(x, w).requires_grad, "no node under no_grad")
  end)
end)

test("create_graph through conv and max_pool records the backward ops themselves", function()
  local x = torch.randn({1, 2, 5, 5}, {dtype = torch.float64}):requires_grad_()
  local w = torch.randn({3, 2, 3, 3}, {dtype = torch.float64}):requires_grad_()
  local y = torch.max_pool2d(torch.conv2d(x, w, nil, {stride = 2}), 2, 1)
  local gx, gw = table.unpack(torch.autograd.grad(y:pow(2):sum(), {x, w}, {create_graph = true}))
  check_eq(tostring(gx.grad_fn), "<ConvBackwardInputBackward0>")
  check_eq(tostring(gw.grad_fn), "<ConvBackwardWeightBackward0>")
end)

test("a gradient penalty through conv -> batch_norm -> tanh -> layer_norm -> avg_pool -> linear matches PyTorch",
  function()
    local x, w, b, g, be, lw, lb = table.unpack(leaves())
    local h = torch.batch_norm(torch.conv2d(x, w, b, {padding = 1}), g, be, nil, nil, true)
    h = torch.avg_pool2d((torch.layer_norm(torch.tanh(h), 8)), 2)
    local out = (h:flatten(2):matmul(lw:t()) + lb):pow(2):sum() / 4
    local gx = torch.autograd.grad(out, x, {create_graph = true})[1]
    local pen = gx:pow(2):sum()
    check_close(pen:item(), R.pen2, tol)
    pen:backward()
    check_close(w.grad, T(R.pen2_gcw), tol)
    check_close(g.grad, T(R.pen2_ggamma), tol)
    check_close(be.grad, T(R.pen2_gbeta), tol)
    check_close(x.grad, T(R.pen2_gx), tol)
  end)

test("the normalization backward ops themselves have no derivative: differentiating one says so", function()
  local x = torch.randn({2, 4, 4}, {dtype = torch.float64})
  local g = torch.randn({2, 4, 4}, {dtype = torch.float64}):requires_grad_()
  local _, m, inv = torch.batch_norm(x, nil, nil, nil, nil, true)
  local gx = torch._backward.batch_norm(g, x, nil, m, inv, true)
  check_eq(tostring(gx.grad_fn), "<BatchNormBackwardBackward0>")
  local ok, err = pcall(torch.autograd.grad, gx:sum(), g)
  check(not ok and tostring(err):find("batch_norm_backward has no derivative"), tostring(err))
  local _, lm, lr = torch.layer_norm(x, 4)
  ok, err = pcall(torch.autograd.grad, (torch._backward.layer_norm(g, x, 4, lm, lr)):sum(), g)
  check(not ok and tostring(err):find("layer_norm_backward has no derivative"), tostring(err))
end)

test("double backward through batch_norm in eval mode works (its gradient is affine in the input)", function()
  local x = torch.randn({3, 2, 4}, {dtype = torch.float64}):requires_grad_()
  local w = torch.randn({2}, {dtype = torch.float64}):requires_grad_()
  local rm, rv = torch.randn(2, {dtype = torch.float64}), torch.rand(2, {dtype = torch.float64}) + 0.5
  local y = torch.batch_norm(x, w, nil, rm, rv, false)
  local gx = torch.autograd.grad(y:pow(2):sum(), x, {create_graph = true})[1]
  -- y = xhat w, gx = 2 y w invstd, so d/dw sum(gx) = sum over N and L of 4 w xhat invstd
  local inv = (rv + 1e-5):rsqrt()
  local xhat = (x:detach() - rm:view(2, 1)) * inv:view(2, 1)
  local want = (xhat * 4 * w:detach():view(2, 1) * inv:view(2, 1)):sum({1, 3})
  local gw = torch.autograd.grad(gx:sum(), w)[1]
  check_close(gw, want, {rtol = 1e-12, atol = 1e-12})
end)

test("out= is refused while recording, and bad input keeps the engine's messages", function()
  local x = torch.randn(1, 2, 5, 5):requires_grad_()
  local w = torch.randn(3, 2, 3, 3)
  local ok, err = pcall(torch.conv2d, x, w, nil, {out = torch.empty(1, 3, 3, 3)})
  check(not ok and tostring(err):find("conv2d: out= cannot be used"), tostring(err))
  ok, err = pcall(torch.conv2d, x, torch.randn(3, 4, 3, 3))
  check(not ok and tostring(err):find("conv2d: input 1x2x5x5 has 2 channels"), tostring(err))
  ok, err = pcall(torch.max_pool2d, x, 7)
  check(not ok and tostring(err):find("max_pool2d: input 1x2x5x5 gives output size"), tostring(err))
  ok, err = pcall(torch.batch_norm, x, torch.ones(3):requires_grad_(), nil, nil, nil, true)
  check(not ok and tostring(err):find("batch_norm: weight must have 2 elements"), tostring(err))
end)

test("a saved input modified in place is caught in backward", function()
  local x = torch.randn(1, 2, 4, 4):requires_grad_()
  local w = torch.randn(2, 2, 3, 3):requires_grad_()
  local y = torch.conv2d(x, w)
  torch.no_grad(function() w:mul_(2) end)
  local ok, err = pcall(function() y:sum():backward() end)
  check(not ok and tostring(err):find("modified by an in%-place operation"), tostring(err))
end)
