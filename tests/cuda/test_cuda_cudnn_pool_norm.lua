-- tests/cuda/test_cuda_cudnn_pool_norm.lua -- 2-D pooling and batch norm
-- on cuDNN (tensor/cuda/cudnn_ops.c) and on our kernels, each route forced
-- in turn (torch._cudnn{route=}), against the CPU's results on the same
-- data: max pools (values; indices and gradients through our kernels),
-- average pools and their gradients, batch norm outputs, saved and running
-- statistics and gradients, in float32, float16 and bfloat16, odd sizes
-- (7x9), padding, ceil_mode, count_include_pad, 1-D and unbatched inputs;
-- the native path when cuDNN is switched off. Skips without a GPU; the
-- cuDNN cases skip (with a note) where cuDNN is not installed.

if not torch.cuda.is_available() then
  io.write("note: no CUDA GPU/driver here; cuDNN pooling/batch-norm tests skipped\n")
  return
end

torch.set_default_device("cpu") -- inputs are made on the host, then moved
local cudnn = torch.backends.cudnn
local have = cudnn.is_available()
if not have then
  io.write("note: cuDNN not found (" .. cudnn.stats().load_error .. "); only the native route runs\n")
end
local ROUTES = have and {"cudnn", "native"} or {"native"}

local DTYPES = {torch.float32, torch.float16, torch.bfloat16}

local function tol(dt)
  if dt == torch.float16 or dt == torch.bfloat16 then return {atol = 3e-2, rtol = 3e-2, equal_nan = true} end
  return {atol = 2e-4, rtol = 2e-4, equal_nan = true}
end

local function same(g, c, dt, what)
  check(g.is_cuda, what .. " stays on cuda")
  check_eq(g.dtype, c.dtype, what .. " dtype")
  check_shape(g, c:size())
  check_close(g:cpu():double(), c:double(), tol(dt))
end

local here = debug.getinfo(1, "S").source:match("^@(.*)/[^/]*$") or "tests/cuda"
package.path = here .. "/?.lua;" .. package.path
local compare = require("devcompare").new(check_eq, same)

local function with_route(route, fn)
  torch._cudnn{route = route}
  local ok, err = pcall(fn)
  torch._cudnn{route = "auto"}
  if not ok then error(err, 0) end
end

-- {x shape, kernel, opts, what}
local POOLS = {
  {{2, 3, 7, 9}, 3, {stride = 2, padding = 1}, "7x9 3x3/2 pad 1"},
  {{1, 4, 8, 8}, 2, {stride = 2}, "8x8 2x2"},
  {{2, 3, 7, 9}, {3, 2}, {stride = {1, 2}, padding = {1, 0}}, "7x9 3x2 stride 1x2 pad 1x0"},
  {{2, 3, 7, 9}, 2, {stride = 2, ceil_mode = true}, "7x9 2x2/2 ceil_mode (grows: native)"},
  {{2, 3, 8, 8}, 2, {stride = 2, ceil_mode = true}, "8x8 2x2/2 ceil_mode (same size)"},
  {{3, 7, 9}, 3, {stride = 2, padding = 1}, "unbatched 7x9"},
  {{2, 5, 3, 3}, 3, {padding = 1}, "3x3 window over a 3x3 plane"},
}

test("max_pool2d/1d values on both routes equal the CPU's; indices and gradients too", function()
  torch.manual_seed(1)
  for _, route in ipairs(ROUTES) do
    with_route(route, function()
      for _, c in ipairs(POOLS) do
        for _, dt in ipairs(DTYPES) do
          local what = ("%s max_pool2d %s %s"):format(route, c[4], tostring(dt))
          local x = torch.randn(table.unpack(c[1])):to(dt)
          x:view(-1):narrow(1, 5, 1):fill_(0 / 0) -- a NaN wins its windows
          compare(function(t) return torch.max_pool2d(t, c[2], c[3]) end, {x}, dt, what .. " values")
          local o = {return_indices = true}
          for k, v in pairs(c[3]) do o[k] = v end
          compare(function(t) return torch.max_pool2d(t, c[2], o) end, {x}, dt, what .. " with indices")
          local xg = torch.randn(table.unpack(c[1])):to(dt):requires_grad_()
          compare(function(t) return torch.max_pool2d(t, c[2], c[3]) end, {xg}, dt, what .. " gradient")
        end
      end
      for _, dt in ipairs(DTYPES) do
        local x = torch.randn(2, 3, 11):to(dt)
        compare(function(t) return torch.max_pool1d(t, 3, {stride = 2, padding = 1}) end, {x}, dt,
                route .. " max_pool1d " .. tostring(dt))
      end
    end)
  end
end)

test("avg_pool2d/1d and their gradients on both routes equal the CPU's (count_include_pad, ceil_mode)", function()
  torch.manual_seed(2)
  for _, route in ipairs(ROUTES) do
    with_route(route, function()
      for _, c in ipairs(POOLS) do
        for _, dt in ipairs(DTYPES) do
          for _, inc in ipairs{true, false} do
            local o = {count_include_pad = inc}
            for k, v in pairs(c[3]) do o[k] = v end
            local what = ("%s avg_pool2d %s include_pad=%s %s"):format(route, c[4], inc, tostring(dt))
            local x = torch.randn(table.unpack(c[1])):to(dt):requires_grad_()
            compare(function(t) return torch.avg_pool2d(t, c[2], o) end, {x}, dt, what)
          end
        end
      end
      for _, dt in ipairs(DTYPES) do
        local x = torch.randn(2, 3, 11):to(dt):requires_grad_()
        compare(function(t) return torch.avg_pool1d(t, 3, {stride = 2, padding = 1}) end, {x}, dt,
                route .. " avg_pool1d " .. tostring(dt))
        compare(function(t) return torch.avg_pool2d(t:view(2, 3, 1, 11), {1, 3}, {divisor_override = 2}) end,
                {x}, dt, route .. " avg_pool2d divisor_override (native) " .. tostring(dt))
      end
    end)
  end
end)

test("batch_norm on both routes: outputs, saved and running statistics, gradients", function()
  torch.manual_seed(3)
  for _, route in ipairs(ROUTES) do
    with_route(route, function()
      for _, shape in ipairs{{4, 5, 7, 9}, {7, 3}, {2, 3, 11}, {2, 3, 1, 1, 5}, {16, 8, 3, 3}} do
        local C = shape[2]
        for _, dt in ipairs(DTYPES) do
          for _, training in ipairs{true, false} do
            for _, momentum in ipairs{0.1, 0.3} do
              local rmc, rvc = torch.randn(C):to(dt), torch.rand(C):to(dt) + 0.5
              local rmg, rvg = rmc:cuda(), rvc:cuda()
              local what = ("%s batch_norm %s %s training=%s momentum=%s"):format(route, table.concat(shape, "x"),
                tostring(dt), training, momentum)
              local x = (torch.randn(table.unpack(shape)) * 3 + 1):to(dt):requires_grad_()
              local w, b = torch.randn(C):to(dt):requires_grad_(), torch.randn(C):to(dt):requires_grad_()
              compare(function(xx, ww, bb)
                local dev = xx.is_cuda
                return torch.batch_norm(xx, ww, bb, dev and rmg or rmc, dev and rvg or rvc, training, momentum, 1e-5)
              end, {x, w, b}, dt, what)
              same(rmg, rmc, dt, what .. " running_mean")
              same(rvg, rvc, dt, what .. " running_var (unbiased)")
              -- inference without autograd: cuDNN's inference call on the cudnn route
              local xe = x:detach()
              compare(function(xx)
                local dev = xx.is_cuda and "cuda" or "cpu"
                return torch.batch_norm(xx, w:detach():to(dev), b:detach():to(dev), xx.is_cuda and rmg or rmc,
                                        xx.is_cuda and rvg or rvc, training, momentum, 1e-5)
              end, {xe}, dt, what .. " no grad")
            end
          end
        end
      end
      -- no affine parameters, no running statistics; float32 running stats of a float16 input
      local x = torch.randn(6, 4, 3, 5):requires_grad_()
      compare(function(xx) return torch.batch_norm(xx, nil, nil, nil, nil, true, 0.1, 1e-3) end, {x}, torch.float32,
              route .. " batch_norm without parameters")
      local rmc, rvc = torch.zeros(4), torch.ones(4)
      local rmg, rvg = rmc:cuda(), rvc:cuda()
      local xh = torch.randn(6, 4, 3, 5):half()
      compare(function(xx)
        local dev = xx.is_cuda
        return torch.batch_norm(xx, nil, nil, dev and rmg or rmc, dev and rvg or rvc, true, 0.1, 1e-5)
      end, {xh}, torch.float16, route .. " batch_norm float16 input, float32 running statistics")
      same(rvg, rvc, torch.float32, route .. " float32 running_var of a float16 input")
      -- the backward op called directly
      local xd, g, wd = torch.randn(4, 3, 5, 5), torch.randn(4, 3, 5, 5), torch.randn(3)
      local _, m, r = torch.batch_norm(xd, wd, nil, nil, nil, true, 0.1, 1e-5)
      local a = {torch._backward.batch_norm(g, xd, wd, m, r, true)}
      local _, mg, rg = torch.batch_norm(xd:cuda(), wd:cuda(), nil, nil, nil, true, 0.1, 1e-5)
      local bg = {torch._backward.batch_norm(g:cuda(), xd:cuda(), wd:cuda(), mg, rg, true)}
      for i = 1, 3 do same(bg[i], a[i], torch.float32, route .. " _backward.batch_norm " .. i) end
    end)
  end
end)

test("the routes: cuDNN runs where it takes the problem, our kernels otherwise or when switched off", function()
  if not have then return end
  local x = torch.randn(2, 3, 8, 8, {device = "cuda"})
  local function counts()
    local s = cudnn.stats()
    return s.pools, s.norms
  end
  with_route("cudnn", function()
    local p0, n0 = counts()
    torch.max_pool2d(x, 2)
    torch.avg_pool2d(x, 3, {stride = 2, padding = 1})
    torch.batch_norm(x, nil, nil, nil, nil, true, 0.1, 1e-5)
    local p1, n1 = counts()
    check_eq(p1 - p0, 2, "two pools on cuDNN (" .. cudnn.stats().last_ops_declined .. ")")
    check_eq(n1 - n0, 1, "one batch norm on cuDNN (" .. cudnn.stats().last_ops_declined .. ")")
    torch.max_pool2d(x, 2, {return_indices = true}) -- indices: our kernel
    torch.max_pool3d(x:view(2, 3, 2, 4, 8), {1, 2, 2}) -- 3-D: our kernel
    torch.avg_pool2d(x, 2, {divisor_override = 3})  -- divisor_override: our kernel
    torch.batch_norm(x:double(), nil, nil, nil, nil, true, 0.1, 1e-5) -- float64: our kernel
    local p2, n2 = counts()
    check_eq(p2, p1, "pools cuDNN does not take stay native")
    check_eq(n2, n1, "float64 batch norm stays native")
  end)
  with_route("native", function()
    local p0, n0 = counts()
    torch.max_pool2d(x, 2)
    torch.batch_norm(x, nil, nil, nil, nil, true, 0.1, 1e-5)
    local p1, n1 = counts()
    check_eq(p1, p0, "route native: no cuDNN pool")
    check_eq(n1, n0, "route native: no cuDNN batch norm")
  end)
  with_route("cudnn", function()
    cudnn.enabled = false
    local ok, err = pcall(function()
      local p0, n0 = counts()
      local y = torch.max_pool2d(x, 2)
      local z = torch.batch_norm(x, nil, nil, nil, nil, true, 0.1, 1e-5)
      local p1, n1 = counts()
      check_eq(p1, p0, "cuDNN off: no cuDNN pool")
      check_eq(n1, n0, "cuDNN off: no cuDNN batch norm")
      same(y, torch.max_pool2d(x:cpu(), 2), torch.float32, "cuDNN off: max_pool2d")
      same(z, torch.batch_norm(x:cpu(), nil, nil, nil, nil, true, 0.1, 1e-5), torch.float32, "cuDNN off: batch_norm")
    end)
    cudnn.enabled = true
    if not ok then error(err, 0) end
  end)
  -- which dtype of each op cuDNN ran (the others fell back to our kernels)
  with_route("cudnn", function()
    local ran = {}
    for _, dt in ipairs(DTYPES) do
      local xd = x:to(dt)
      local xr = xd:clone():requires_grad_()
      local function did(f)
        local p0, n0 = counts()
        f()
        local p1, n1 = counts()
        return (p1 + n1 > p0 + n0) and "cudnn" or "native"
      end
      ran[#ran + 1] = ("%s: max_pool %s, avg_pool %s, batch_norm train %s, eval %s"):format(tostring(dt),
        did(function() torch.max_pool2d(xd, 2) end), did(function() torch.avg_pool2d(xd, 2) end),
        did(function() torch.batch_norm(xd, nil, nil, nil, nil, true, 0.1, 1e-5) end),
        did(function() torch.batch_norm(xd, nil, nil, torch.zeros(3, {device = "cuda"}),
                                        torch.ones(3, {device = "cuda"}), false, 0.1, 1e-5) end))
      local y = torch.avg_pool2d(xr, 2)
      local g = torch.ones(table.unpack(y:size())):to(dt):cuda()
      ran[#ran] = ran[#ran] .. ", avg_pool backward " .. did(function() y:backward(g) end)
      local z = torch.batch_norm(xr, nil, nil, nil, nil, true, 0.1, 1e-5)
      ran[#ran] = ran[#ran] .. ", batch_norm backward " .. did(function() z:backward(torch.ones_like(z)) end)
      if dt == torch.float32 then check(not ran[#ran]:find("native"), "float32 runs on cuDNN: " .. ran[#ran]) end
    end
    io.write("note: " .. table.concat(ran, "\nnote: ") .. "\n")
  end)
  check_eq(cudnn.stats().route, "auto", "the route is back to auto")
  check_error(function() torch._cudnn{route = "fast"} end, "route must be")
  local s = cudnn.stats()
  io.write(("note: cuDNN pools %d, norms %d, declined %d%s\n"):format(s.pools, s.norms, s.ops_declined,
    s.last_ops_declined ~= "" and (" (last: " .. s.last_ops_declined .. ")") or ""))
end)
