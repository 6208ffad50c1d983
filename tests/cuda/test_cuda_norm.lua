-- tests/cuda/test_cuda_norm.lua -- normalization, statistics, average pools
-- and grouped convolutions on CUDA (tensor/cuda/norm.c, pool.c, conv.c and
-- the compositions of reduce_stats.c) against the CPU's results on the same
-- random data: values, statistics, running statistics and the gradients
-- autograd gets. Odd sizes (1, 7, 1000, 70000) along the reduced dims.
-- Skips without a GPU.

if not torch.cuda.is_available() then
  io.write("note: no CUDA GPU/driver here; GPU normalization tests skipped\n")
  return
end

torch.set_default_device("cpu") -- inputs are made on the host, then moved

local function tol(dt)
  if dt == torch.float16 or dt == torch.bfloat16 then return {atol = 3e-2, rtol = 3e-2} end
  if dt == torch.float32 then return {atol = 2e-4, rtol = 2e-4} end
  return {atol = 1e-9, rtol = 1e-9}
end

local function same(g, c, dt, what)
  check(g.is_cuda, what .. " stays on cuda")
  check_eq(g.dtype, c.dtype, what .. " dtype")
  check_close(g:cpu():double(), c:double(), tol(dt or c.dtype))
end

local here = debug.getinfo(1, "S").source:match("^@(.*)/[^/]*$") or "tests/cuda"
package.path = here .. "/?.lua;" .. package.path
local compare = require("devcompare").new(check_eq, same)

local function rnd(dt, grad, ...)
  local t = torch.randn(...):to(dt)
  if grad then t:requires_grad_() end
  return t
end

test("batch_norm training and eval: outputs, saved and running statistics, gradients", function()
  torch.manual_seed(1)
  for _, shape in ipairs{{7, 3}, {1, 2, 1000}, {4, 5, 7, 9}, {2, 3, 1, 1, 5}, {70000, 2}} do
    local C = shape[2]
    for _, dt in ipairs{torch.float32, torch.float64, torch.float16, torch.bfloat16} do
      if not (dt ~= torch.float32 and shape[1] == 70000) then
        for _, training in ipairs{true, false} do
          local rmc, rvc = torch.randn(C):to(dt), torch.rand(C):to(dt) + 0.5
          local rmg, rvg = rmc:cuda(), rvc:cuda()
          local what = ("batch_norm %s %s training=%s"):format(table.concat(shape, "x"), tostring(dt), training)
          local x = rnd(dt, true, table.unpack(shape)) * 3 + 1
          x = x:detach():requires_grad_()
          local w, b = rnd(dt, true, C), rnd(dt, true, C)
          compare(function(xx, ww, bb)
            local dev = xx.is_cuda
            return torch.batch_norm(xx, ww, bb, dev and rmg or rmc, dev and rvg or rvc, training, 0.1, 1e-5)
          end, {x, w, b}, dt, what)
          same(rmg, rmc, dt, what .. " running_mean")
          same(rvg, rvc, dt, what .. " running_var")
        end
      end
    end
  end
  -- no affine parameters, no running statistics
  local x = torch.randn(6, 4, 3):requires_grad_()
  compare(function(xx) return torch.batch_norm(xx, nil, nil, nil, nil, true, 0.1, 1e-3) end, {x}, torch.float32,
          "batch_norm without parameters")
  -- the nn module on the GPU
  local nn = require "torch.nn"
  local m = nn.BatchNorm2d(3)
  local xc = torch.randn(4, 3, 5, 5)
  local yc = m:forward(xc)
  local mg = nn.BatchNorm2d(3):cuda()
  local yg = mg:forward(xc:cuda())
  same(yg, yc, torch.float32, "BatchNorm2d")
  same(mg.running_var, m.running_var, torch.float32, "BatchNorm2d running_var")
end)

test("layer_norm and group_norm: outputs, statistics, gradients, odd row lengths", function()
  torch.manual_seed(2)
  for _, c in ipairs{{{7, 1000}, {1000}}, {{3, 70000}, {70000}}, {{1, 1}, {1}}, {{5, 7, 3}, {7, 3}},
                     {{2, 3, 7}, {7}}} do
    for _, dt in ipairs{torch.float32, torch.float64, torch.float16, torch.bfloat16} do
      for _, affine in ipairs{true, false} do
        local x = rnd(dt, true, table.unpack(c[1]))
        local w = affine and rnd(dt, true, table.unpack(c[2])) or nil
        local b = affine and rnd(dt, true, table.unpack(c[2])) or nil
        local what = ("layer_norm %s %s affine=%s"):format(table.concat(c[1], "x"), tostring(dt), affine)
        if affine then
          compare(function(xx, ww, bb) return torch.layer_norm(xx, c[2], ww, bb, 1e-5) end, {x, w, b}, dt, what)
        else
          compare(function(xx) return torch.layer_norm(xx, c[2], nil, nil, 1e-5) end, {x}, dt, what)
        end
      end
    end
  end
  for _, c in ipairs{{{4, 6, 5, 5}, 3}, {{2, 4, 7}, 1}, {{2, 4, 7}, 4}, {{3, 6}, 2}, {{1, 8, 1000}, 2}} do
    for _, dt in ipairs{torch.float32, torch.float64, torch.float16} do
      local C = c[1][2]
      local x, w, b = rnd(dt, true, table.unpack(c[1])), rnd(dt, true, C), rnd(dt, true, C)
      compare(function(xx, ww, bb) return torch.group_norm(xx, c[2], ww, bb, 1e-5) end, {x, w, b}, dt,
              ("group_norm %s groups=%d %s"):format(table.concat(c[1], "x"), c[2], tostring(dt)))
    end
  end
  -- the backward ops called directly
  local x, g = torch.randn(4, 9), torch.randn(4, 9)
  local w = torch.randn(9)
  local _, m, r = torch.layer_norm(x, {9}, w, nil, 1e-5)
  local a = {torch._backward.layer_norm(g, x, {9}, m, r, w)}
  local _, mg, rg = torch.layer_norm(x:cuda(), {9}, w:cuda(), nil, 1e-5)
  local bgpu = {torch._backward.layer_norm(g:cuda(), x:cuda(), {9}, mg, rg, w:cuda())}
  for i = 1, 3 do same(bgpu[i], a[i], torch.float32, "_backward.layer_norm " .. i) end
end)

test("var, std, var_mean, std_mean over dims with corrections, and their gradients", function()
  torch.manual_seed(3)
  for _, shape in ipairs{{1}, {7}, {1000}, {70000}, {3, 7, 5}, {2, 70000}, {1000, 3}} do
    for _, dt in ipairs{torch.float32, torch.float64, torch.float16, torch.bfloat16} do
      local x = (torch.randn(table.unpack(shape)) * 2 + 5):to(dt)
      local what = ("%s %s"):format(table.concat(shape, "x"), tostring(dt))
      local grad = dt == torch.float32 or dt == torch.float64
      if grad then x:requires_grad_() end
      compare(function(t) return t:var() end, {x}, dt, "var " .. what)
      compare(function(t) return t:std(1) end, {x}, dt, "std dim 1 " .. what)
      compare(function(t) return t:var(-1, {correction = 0, keepdim = true}) end, {x}, dt, "var correction 0 " .. what)
      compare(function(t) return t:var_mean(1) end, {x}, dt, "var_mean " .. what)
      compare(function(t) return t:std_mean(-1, {keepdim = true}) end, {x}, dt, "std_mean " .. what)
      if #shape == 3 then compare(function(t) return t:std({1, 3}) end, {x}, dt, "std dims 1,3 " .. what) end
    end
  end
end)

test("norm and linalg.vector_norm for p = 0, 1, 2, inf, -inf, 3, 0.5 and their gradients", function()
  torch.manual_seed(4)
  for _, shape in ipairs{{7}, {1000}, {70000}, {3, 7, 5}, {2, 1}} do
    for _, dt in ipairs{torch.float32, torch.float64, torch.float16, torch.bfloat16} do
      local x = torch.randn(table.unpack(shape)):to(dt)
      x:view(-1):narrow(1, 1, 1):fill_(0)
      local grad = dt == torch.float32 or dt == torch.float64
      if grad then x:requires_grad_() end
      for _, p in ipairs{0, 1, 2, math.huge, -math.huge, 3, 0.5} do
        local what = ("%s %s p=%s"):format(table.concat(shape, "x"), tostring(dt), tostring(p))
        if p ~= 0.5 and p ~= -math.huge then compare(function(t) return t:norm(p) end, {x}, dt, "norm " .. what) end
        compare(function(t) return torch.linalg.vector_norm(t, p, -1) end, {x}, dt, "vector_norm " .. what)
      end
      if #shape == 3 then
        compare(function(t) return t:norm(2, {1, 3}, true) end, {x}, dt, "norm dims 1,3 keepdim")
        compare(function(t) return torch.linalg.vector_norm(t, 2, {2, 3}) end, {x}, dt, "vector_norm dims 2,3")
      end
    end
  end
end)

test("logsumexp, nansum, nanmean, aminmax, count_nonzero and where", function()
  torch.manual_seed(5)
  for _, shape in ipairs{{1}, {7}, {1000}, {70000}, {4, 7, 3}} do
    for _, dt in ipairs{torch.float32, torch.float64, torch.float16, torch.bfloat16} do
      local what = ("%s %s"):format(table.concat(shape, "x"), tostring(dt))
      local x = (torch.randn(table.unpack(shape)) * 4):to(dt)
      local grad = dt == torch.float32 or dt == torch.float64
      if grad then x:requires_grad_() end
      compare(function(t) return t:logsumexp(-1) end, {x}, dt, "logsumexp " .. what)
      compare(function(t) return t:logsumexp(1, true) end, {x}, dt, "logsumexp keepdim " .. what)
      local xn = x:detach():clone()
      xn:view(-1):narrow(1, 1, 1):fill_(0 / 0)
      compare(function(t) return t:nansum() end, {xn}, dt, "nansum " .. what)
      compare(function(t) return t:nanmean(-1) end, {xn}, dt, "nanmean " .. what)
      compare(function(t) return torch.aminmax(t) end, {x:detach()}, dt, "aminmax " .. what)
      compare(function(t) return torch.aminmax(t, {dim = 1}) end, {x:detach()}, dt, "aminmax dim " .. what)
      compare(function(t) return t:count_nonzero() end, {x:detach():round()}, dt, "count_nonzero " .. what)
      compare(function(t) return torch.where(t:gt(0), t, t * 2) end, {x}, dt, "where " .. what)
    end
  end
  -- a row of -inf stays -inf; inf propagates
  local x = torch.tensor{{-math.huge, -math.huge}, {1, math.huge}, {1, 2}}
  same(x:cuda():logsumexp(2), x:logsumexp(2), torch.float32, "logsumexp with infinities")
  -- where does not leak NaN or inf from the branch not taken
  local a, b = torch.tensor{1, 0 / 0, math.huge}, torch.tensor{5, 6, 7}
  local c = torch.tensor{true, false, false}
  check_eq(torch.where(c:cuda(), a:cuda(), b:cuda()):totable(), {1, 6, 7})
  check_eq(torch.where(c:cuda(), 1, 0):totable(), {1, 0, 0})
end)

test("avg_pool1d/2d/3d and adaptive_avg_pool1d/2d/3d: values and gradients", function()
  torch.manual_seed(6)
  local cases = {
    {torch.avg_pool2d, {2, 3, 9, 9}, {3, {stride = 2, padding = 1}}},
    {torch.avg_pool2d, {2, 3, 9, 9}, {3, {stride = 2, padding = 1, count_include_pad = false}}},
    {torch.avg_pool2d, {2, 3, 10, 11}, {3, {stride = 2, padding = 1, ceil_mode = true}}},
    {torch.avg_pool2d, {2, 3, 10, 11}, {3, {stride = 2, ceil_mode = true, count_include_pad = false}}},
    {torch.avg_pool2d, {2, 3, 8, 8}, {{2, 3}, {divisor_override = 5}}},
    {torch.avg_pool2d, {3, 7, 7}, {2}}, -- unbatched
    {torch.avg_pool1d, {2, 4, 1000}, {7, {stride = 3, padding = 2}}},
    {torch.avg_pool3d, {2, 2, 5, 6, 7}, {3, {stride = 2, padding = 1, ceil_mode = true}}},
    {torch.adaptive_avg_pool2d, {2, 3, 10, 7}, {{3, 4}}},
    {torch.adaptive_avg_pool2d, {2, 3, 9, 9}, {1}},
    {torch.adaptive_avg_pool1d, {2, 3, 1000}, {7}},
    {torch.adaptive_avg_pool3d, {1, 2, 5, 7, 9}, {{2, 3, 4}}},
  }
  for i, c in ipairs(cases) do
    for _, dt in ipairs{torch.float32, torch.float64, torch.float16} do
      local x = rnd(dt, true, table.unpack(c[2]))
      compare(function(t) return c[1](t, table.unpack(c[3])) end, {x}, dt, ("avg pool case %d %s"):format(i, tostring(dt)))
    end
  end
  local nn = require "torch.nn"
  local m = nn.AdaptiveAvgPool2d(1)
  local x = torch.randn(2, 4, 5, 5)
  same(m:forward(x:cuda()), m:forward(x), torch.float32, "nn.AdaptiveAvgPool2d")
end)

test("grouped and depthwise convolutions: forward and gradients equal the CPU's", function()
  torch.manual_seed(7)
  local cases = {
    {torch.conv2d, {2, 4, 9, 9}, {6, 2, 3, 3}, {padding = 1, groups = 2}},
    {torch.conv2d, {2, 6, 8, 8}, {6, 1, 3, 3}, {stride = 2, padding = 1, groups = 6}}, -- depthwise
    {torch.conv1d, {3, 6, 20}, {9, 2, 5}, {groups = 3}},
    {torch.conv3d, {1, 4, 5, 5, 5}, {4, 2, 3, 3, 3}, {padding = 1, groups = 2}},
    {torch.conv_transpose2d, {2, 4, 5, 5}, {4, 3, 3, 3}, {stride = 2, groups = 2}},
  }
  for i, c in ipairs(cases) do
    for _, dt in ipairs{torch.float32, torch.float64} do
      local x, w = rnd(dt, true, table.unpack(c[2])), rnd(dt, true, table.unpack(c[3]))
      local nb = c[1] == torch.conv_transpose2d and c[3][2] * c[4].groups or c[3][1]
      local b = rnd(dt, true, nb)
      compare(function(xx, ww, bb) return c[1](xx, ww, bb, c[4]) end, {x, w, b}, dt,
              ("grouped conv case %d %s"):format(i, tostring(dt)))
    end
  end
end)

test("leaky_relu, nan_to_num, equal and matrix norms on CUDA", function()
  torch.manual_seed(8)
  for _, dt in ipairs{torch.float32, torch.float64, torch.float16, torch.bfloat16} do
    local x = torch.randn(7, 1000):to(dt)
    if dt == torch.float32 or dt == torch.float64 then x:requires_grad_() end
    compare(function(t) return torch.leaky_relu(t, 0.2) end, {x}, dt, "leaky_relu " .. tostring(dt))
    local y = torch.tensor{1, 0 / 0, math.huge, -math.huge, -2}:to(dt)
    same(torch.nan_to_num(y:cuda()), torch.nan_to_num(y), dt, "nan_to_num " .. tostring(dt))
    same(torch.nan_to_num(y:cuda(), 5, 6, -7), torch.nan_to_num(y, 5, 6, -7), dt, "nan_to_num values " .. tostring(dt))
  end
  local a = torch.randn(3, 4)
  check(torch.equal(a:cuda(), a:cuda()), "equal: same values")
  local b = a:clone()
  b:view(-1):narrow(1, 5, 1):add_(1)
  check(not torch.equal(a:cuda(), b:cuda()), "equal: one value differs")
  check(not torch.equal(a:cuda(), a:cuda():view(4, 3)), "equal: shapes differ")
  local m = torch.randn(2, 3, 4):double()
  for _, ord in ipairs{1, -1, math.huge, -math.huge} do
    same(torch.linalg.matrix_norm(m:cuda(), ord), torch.linalg.matrix_norm(m, ord), torch.float64,
         "matrix_norm " .. tostring(ord))
  end
  same(torch.linalg.norm(m:cuda(), "fro", {2, 3}), torch.linalg.norm(m, "fro", {2, 3}), torch.float64, "linalg.norm fro")
  for _, ord in ipairs{"nuc", 2, -2} do -- from cuSOLVER's singular values
    same(torch.linalg.matrix_norm(m:cuda(), ord), torch.linalg.matrix_norm(m, ord), torch.float64,
         "matrix_norm " .. tostring(ord))
  end
end)

-- The gradcheck cases of these ops (tests/graph/specs_*.lua, float64): the
-- outputs, the gradients and, where the case asks for second order, the
-- gradients of the gradients (create_graph) equal the CPU's.
test("the gradcheck cases of these ops: values, gradients and second-order gradients equal the CPU's", function()
  local here = debug.getinfo(1, "S").source:match("^@(.*)/[^/]*$") or "tests/cuda"
  package.path = here .. "/../graph/?.lua;" .. package.path
  local specs = {}
  for _, fam in ipairs{"nn", "reduce", "linalg"} do
    for op, cases in pairs(require("specs_" .. fam)) do specs[op] = cases end
  end
  local ops = {"convolution", "conv_transpose", "conv_backward_input", "conv_backward_weight", "avg_pool",
               "avg_pool_backward", "adaptive_avg_pool", "adaptive_avg_pool_backward", "batch_norm", "layer_norm",
               "group_norm", "var", "std", "var_mean", "std_mean", "norm", "logsumexp", "nansum", "nanmean",
               "aminmax", "linalg_vector_norm", "linalg_matrix_norm"}
  local function as_list(r) return torch.is_tensor(r) and {r} or r end
  local ran = 0
  for _, op in ipairs(ops) do
    check(specs[op], "a spec for " .. op)
    for k, case in ipairs(specs[op]) do
      local what = ("%s #%d"):format(op, k)
      torch.manual_seed(1000 + k)
      local inputs = case.inputs()
      local gos, vs = {}, {}
      local function run(dev)
        local ins, diff = {}, {}
        for i, t in ipairs(inputs) do
          if torch.is_tensor(t) then
            ins[i] = t:detach():to(dev)
            if t.requires_grad then
              ins[i]:requires_grad_()
              diff[#diff + 1] = ins[i]
            end
          else
            ins[i] = t
          end
        end
        local outs = as_list(case.fn(table.unpack(ins, 1, #inputs)))
        local req, greq = {}, {}
        for p, y in ipairs(outs) do
          if y.requires_grad then
            gos[p] = gos[p] or torch.randn(table.unpack(y:size())):to(y.dtype)
            req[#req + 1], greq[#greq + 1] = y, gos[p]:to(dev)
          end
        end
        local gs = #req > 0 and torch.autograd.grad(req, diff, {grad_outputs = greq, create_graph = true,
                                                                allow_unused = true}) or {}
        local g2 = {}
        if case.second_order and #req > 0 then
          local s
          for i, g in pairs(gs) do
            if g.requires_grad then
              vs[i] = vs[i] or torch.randn(table.unpack(g:size())):to(g.dtype)
              local term = (g * vs[i]:to(dev)):sum()
              s = s and s + term or term
            end
          end
          if s then g2 = torch.autograd.grad({s}, diff, {allow_unused = true}) end
        end
        return outs, gs, g2, #diff
      end
      -- lists that may hold nil (allow_unused) compared up to n
      local function same_list(a, b, n, kind)
        for i = 1, n do
          if b[i] == nil then check(a[i] == nil, what .. " " .. kind .. " " .. i .. " is nil on the CPU only")
          else same(a[i], b[i], nil, what .. " " .. kind .. " " .. i) end
        end
      end
      local ok, oc, gc, g2c, n = pcall(run, "cpu")
      check(ok, what .. " on the CPU: " .. tostring(oc))
      local okg, og, gg, g2g = pcall(run, "cuda")
      if not okg and tostring(og):find("not implemented on CUDA yet", 1, true) then
        io.write(("note: %s: %s\n"):format(what, tostring(og):match("[^:]*: not implemented on CUDA yet")))
      else
        check(okg, what .. " on CUDA: " .. tostring(og))
        ran = ran + 1
        same_list(og, oc, #oc, "output")
        same_list(gg, gc, n, "gradient")
        same_list(g2g, g2c, n, "second-order gradient")
      end
    end
  end
  check(ran > 40, "only " .. ran .. " cases ran on CUDA")
end)
