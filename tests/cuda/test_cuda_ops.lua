-- tests/cuda/test_cuda_ops.lua -- reductions, softmax, gather/scatter and
-- matmul on CUDA (tensor/cuda/reduce.c, index.c, blas.c) against the CPU on
-- the same random data, then autograd and optimizer steps of an MLP on
-- CUDA against the same steps on the CPU. Skips without a GPU.

if not torch.cuda.is_available() then
  io.write("note: no CUDA GPU/driver here; GPU op tests skipped\n")
  return
end

local function tol(dt)
  if dt == torch.float16 or dt == torch.bfloat16 then return {atol = 2e-2, rtol = 2e-2} end
  if dt == torch.float32 then return {atol = 1e-4, rtol = 1e-4} end
  return {atol = 1e-9, rtol = 1e-9}
end

-- x of shape on the CPU in dtype dt (random; small integers for integer dtypes)
local function rand(shape, dt)
  dt = dt or torch.float32
  if dt == torch.bool then return torch.rand(table.unpack(shape)):gt(0.5) end
  if not torch.empty(0, {dtype = dt}):is_floating_point() then
    return torch.randint(-4, 5, shape):to(dt)
  end
  return torch.randn(table.unpack(shape)):to(dt)
end

local function same(g, c, dt, what)
  check(g.is_cuda, what .. " stays on cuda")
  check_eq(g.dtype, c.dtype, what)
  check_close(g:cpu():double(), c:double(), tol(dt))
end

local floats = {torch.float32, torch.float64, torch.float16, torch.bfloat16}

test("sum, mean, prod, amax, amin over dims, with keepdim, for every dtype, contiguous and strided", function()
  torch.manual_seed(1)
  local shapes = {{7}, {5, 6}, {3, 4, 5}, {2, 3, 4, 5}, {1, 300, 2}, {70000}, {3, 70000}}
  local dimsets = {nil, {1}, {-1}, {1, 2}, {2}}
  local dts = {torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int32, torch.int64, torch.uint8,
               torch.int8, torch.bool}
  for _, shape in ipairs(shapes) do
    for _, dt in ipairs(dts) do
      local x = rand(shape, dt)
      if dt == torch.int64 and #shape == 1 and shape[1] > 1000 then x = x:clamp(-1, 1) end
      for _, view in ipairs{"contig", "strided"} do
        local xc = x
        if view == "strided" and #shape >= 2 then xc = x:transpose(1, #shape) end
        local xg = xc:cuda()
        for _, dims in ipairs(dimsets) do
          if dims == nil or #dims <= xc:dim() then
            for _, kd in ipairs{false, true} do
              local what = ("%s %s %s dims=%s keepdim=%s"):format(tostring(dt), table.concat(shape, "x"), view,
                                                                 dims and table.concat(dims, ",") or "all", kd)
              if dims == nil then
                same(xg:sum(), xc:sum(), dt, "sum " .. what)
                if dt ~= torch.bool then
                  same(xg:amax(), xc:amax(), dt, "amax " .. what)
                  same(xg:amin(), xc:amin(), dt, "amin " .. what)
                end
                check_eq(xg:argmax():item(), xc:argmax():item(), "argmax " .. what)
                check_eq(xg:any():item(), xc:any():item(), "any " .. what)
                check_eq(xg:all():item(), xc:all():item(), "all " .. what)
              else
                same(xg:sum(dims, kd), xc:sum(dims, kd), dt, "sum " .. what)
                if dt ~= torch.bool then
                  same(xg:amax(dims, kd), xc:amax(dims, kd), dt, "amax " .. what)
                  same(xg:amin(dims, kd), xc:amin(dims, kd), dt, "amin " .. what)
                end
                check_close(xg:any(dims, kd):cpu(), xc:any(dims, kd), {}, "any " .. what)
              end
              if xc:is_floating_point() then
                if dims == nil then same(xg:mean(), xc:mean(), dt, "mean " .. what)
                else same(xg:mean(dims, kd), xc:mean(dims, kd), dt, "mean " .. what) end
              end
              if xc:numel() < 100 and dims ~= nil then
                same(xg:prod(dims[1], kd), xc:prod(dims[1], kd), dt, "prod " .. what)
              end
            end
          end
        end
      end
    end
  end
end)

test("max/min with a dim give values and first indices; argmax/argmin; NaN wins", function()
  torch.manual_seed(2)
  for _, dt in ipairs{torch.float32, torch.float64, torch.float16, torch.int32, torch.int64} do
    local x = rand({6, 9, 4}, dt)
    for _, d in ipairs{1, 2, 3, -1} do
      for _, kd in ipairs{false, true} do
        local gv, gi = x:cuda():max(d, kd)
        local cv, ci = x:max(d, kd)
        same(gv, cv, dt, "max values")
        check_close(gi:cpu(), ci, {}, "max indices dim " .. d)
        gv, gi = x:cuda():min(d, kd)
        cv, ci = x:min(d, kd)
        same(gv, cv, dt, "min values")
        check_close(gi:cpu(), ci, {}, "min indices")
        check_close(x:cuda():argmax(d, kd):cpu(), x:argmax(d, kd), {}, "argmax")
        check_close(x:cuda():argmin(d, kd):cpu(), x:argmin(d, kd), {}, "argmin")
      end
    end
    check_eq(x:cuda():max():item(), x:max():item())
    check_eq(x:cuda():min():item(), x:min():item())
  end
  local n = torch.tensor({1, 0 / 0, 3, 0 / 0, 2})
  check(n:cuda():max():item() ~= n:cuda():max():item(), "max propagates NaN")
  check_eq(n:cuda():argmax():item(), n:argmax():item())
  local t = torch.tensor({{1, 5, 5}, {7, 7, 2}})
  check_close(t:cuda():argmax(2):cpu(), t:argmax(2), {}, "ties give the first index")
  check_error(function() return torch.zeros(0, {device = "cuda"}):amax() end, "empty")
end)

test("reductions over outer dims (column sums of tall matrices): partial chunks, ties, NaN", function()
  torch.manual_seed(4)
  for _, shape in ipairs{{3000, 70}, {16384, 40}, {70, 200}, {5, 700, 33}} do
    for _, dt in ipairs{torch.float32, torch.bfloat16, torch.int64} do
      local x = dt == torch.int64 and torch.randint(-3, 4, shape) or torch.randn(table.unpack(shape)):to(dt)
      local xg = x:cuda()
      local what = table.concat(shape, "x") .. " " .. tostring(dt)
      same(xg:sum(1), x:sum(1), dt, "sum " .. what)
      if dt ~= torch.int64 then same(xg:mean(1), x:mean(1), dt, "mean " .. what) end
      same(xg:amax(1), x:amax(1), dt, "amax " .. what)
      check_close(xg:argmax(1):cpu(), x:argmax(1), {}, "argmax (first of ties) " .. what)
      check_close(xg:argmin(1):cpu(), x:argmin(1), {}, "argmin " .. what)
      if #shape == 3 then same(xg:sum({1, 3}), x:sum({1, 3}), dt, "sum over dims 1 and 3 " .. what) end
    end
  end
  local x = torch.randn(5000, 9)
  x[{4321, 3}] = 0 / 0
  local m = x:cuda():amax(1):cpu()
  local a, b = m[3]:item(), m[2]:item()
  check(a ~= a and b == b, "NaN wins the column max")
  check_eq(x:cuda():argmax(1)[3]:item(), 4321)
end)

test("many short rows: a thread per output (2..16 elements) and a warp per output (17..4096), strided, ties, NaN", function()
  torch.manual_seed(5)
  for _, shape in ipairs{{8, 1001, 201, 2}, {3000, 7}, {2048, 16}, {1500, 17}, {1024, 201}, {1100, 4096}} do
    for _, dt in ipairs{torch.float32, torch.float16, torch.int64} do
      local x = dt == torch.int64 and torch.randint(-3, 4, shape) or torch.randn(table.unpack(shape)):to(dt)
      local xg = x:cuda()
      local what = table.concat(shape, "x") .. " " .. tostring(dt)
      same(xg:sum(-1), x:sum(-1), dt, "sum " .. what)
      if dt ~= torch.int64 then same(xg:mean(-1), x:mean(-1), dt, "mean " .. what) end
      same(xg:amin(-1), x:amin(-1), dt, "amin " .. what)
      check_close(xg:argmax(-1):cpu(), x:argmax(-1), {}, "argmax (first of ties) " .. what)
      -- the same rows through a transposed view (rows not contiguous)
      local t, tg = x:transpose(1, -1), xg:transpose(1, -1)
      same(tg:sum(1), t:sum(1), dt, "sum over a strided dim " .. what)
    end
  end
  local x = torch.randn(4000, 5)
  x[{1234, 4}] = 0 / 0
  local m = x:cuda():amax(-1):cpu()
  local a, b = m[1234]:item(), m[1233]:item()
  check(a ~= a and b == b, "NaN wins its own row's max only")
  x = torch.randn(2000, 300)
  x[{777, 299}] = 0 / 0
  check_eq(x:cuda():argmax(-1)[777]:item(), 299, "argmax of a row with a NaN is the NaN's index (warp path)")
end)

test("softmax and log_softmax along every dim, float dtypes, strided input", function()
  torch.manual_seed(3)
  for _, dt in ipairs(floats) do
    for _, shape in ipairs{{5}, {4, 7}, {3, 5, 6}, {2, 1000}} do
      local x = (torch.randn(table.unpack(shape)) * 3):to(dt)
      for d = 1, #shape do
        same(x:cuda():softmax(d), x:softmax(d), dt, "softmax")
        same(x:cuda():log_softmax(d), x:log_softmax(d), dt, "log_softmax")
      end
      if #shape >= 2 then
        local xt = x:transpose(1, 2)
        same(xt:cuda():log_softmax(1), xt:log_softmax(1), dt, "strided log_softmax")
      end
    end
  end
  local big = torch.tensor({1000.5, 0, -1000}):cuda()
  check_close(big:softmax(1):cpu(), {1, 0, 0})
end)

test("gather and scatter_add along a dim against the CPU; a bad index is an error", function()
  torch.manual_seed(4)
  for _, dt in ipairs{torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int64, torch.int16, torch.int8,
                      torch.uint8, torch.bool} do
    local x = rand({5, 6}, dt)
    for d = 1, 2 do
      local idx = torch.randint(1, x:size(d) + 1, {4, 3})
      same(x:cuda():gather(d, idx:cuda()), x:gather(d, idx), dt, "gather")
      local src = rand({4, 3}, dt)
      local zc = torch.zeros(5, 6, {dtype = dt}):scatter_add(d, idx, src)
      local zg = torch.zeros(5, 6, {dtype = dt, device = "cuda"}):scatter_add(d, idx:cuda(), src:cuda())
      same(zg, zc, dt, "scatter_add")
      -- plain scatter with repeated indices keeps an unspecified one of the writes: use distinct ones
      local uidx = d == 1 and torch.arange(1, 5):reshape(4, 1):expand(4, 3) or torch.arange(1, 4):reshape(1, 3):expand(4, 3)
      same(torch.zeros(5, 6, {dtype = dt, device = "cuda"}):scatter(d, uidx:cuda(), src:cuda()),
           torch.zeros(5, 6, {dtype = dt}):scatter(d, uidx, src), dt, "scatter")
    end
  end
  local x = torch.randn(3, 4):cuda()
  check_error(function() return x:gather(2, torch.tensor({{5}, {1}, {1}}):cuda()) end, "out of bounds")
  check_error(function() return x:gather(2, torch.tensor({{0}, {1}, {1}}):cuda()) end, "out of bounds")
end)

test("matmul, mm, bmm, mv, dot, addmm on CUDA equal the CPU, transposed and broadcast operands", function()
  torch.manual_seed(5)
  for _, dt in ipairs(floats) do
    local t = tol(dt)
    if dt == torch.float32 then t = {atol = 1e-3, rtol = 1e-3} end
    local function mm(a, b, what)
      local c = a:double():matmul(b:double())
      local g = a:cuda():matmul(b:cuda())
      check(g.is_cuda and g.dtype == a.dtype, what)
      check_close(g:cpu():double(), c, t)
    end
    local a, b = rand({33, 17}, dt), rand({17, 9}, dt)
    mm(a, b, "2-D")
    mm(rand({17, 33}, dt):t(), b, "a transposed")
    mm(a, rand({9, 17}, dt):t(), "b transposed")
    mm(rand({4, 33, 17}, dt), rand({4, 17, 9}, dt), "batched")
    mm(rand({4, 33, 17}, dt), b, "batch broadcast b")
    mm(a, rand({3, 17, 9}, dt), "batch broadcast a")
    mm(rand({2, 3, 5, 7}, dt), rand({2, 1, 7, 4}, dt), "two batch dims")
    mm(rand({5, 7, 2, 3}, dt):permute(3, 4, 1, 2), rand({7, 4, 2, 3}, dt):permute(3, 4, 1, 2), "permuted batch dims")
    mm(rand({17}, dt), b, "vector @ matrix")
    mm(a, rand({17}, dt), "matrix @ vector")
    mm(rand({17}, dt), rand({17}, dt), "dot")
    local x, y = rand({6, 5}, dt), rand({5, 3}, dt)
    check_close(torch.mm(x:cuda(), y:cuda()):cpu():double(), x:double():mm(y:double()), t)
    check_close(torch.bmm(rand({2, 3, 4}, dt):cuda(), rand({2, 4, 5}, dt):cuda()):cpu():size(), {2, 3, 5})
    local v = rand({5}, dt)
    check_close(torch.mv(x:cuda(), v:cuda()):cpu():double(), torch.mv(x:double(), v:double()), t)
    check_close(torch.dot(v:cuda(), v:cuda()):cpu():double(), torch.dot(v:double(), v:double()), t)
    local bias = rand({3}, dt)
    check_close(torch.addmm(bias:cuda(), x:cuda(), y:cuda(), {beta = 0.5, alpha = 2}):cpu():double(),
                torch.addmm(bias:double(), x:double(), y:double(), {beta = 0.5, alpha = 2}), t)
  end
  check_error(function() return torch.randn(2, 3):cuda():matmul(torch.randn(4, 5):cuda()) end,
              "matmul: shapes 2x3 and 4x5 cannot be multiplied (3 ~= 4) (both on cuda:0)")
  check_error(function() return torch.randn(2, 3):cuda():matmul(torch.randn(3, 5)) end, "cuda:0 and cpu")
  check_error(function() return torch.ones(2, 2, {dtype = torch.bool, device = "cuda"}):matmul(
                torch.ones(2, 2, {dtype = torch.bool, device = "cuda"})) end, "bool tensors are not supported")
end)

test("integer products on CUDA equal the CPU's, wrapping alike (cuBLAS has none: gemm_int.cu)", function()
  torch.manual_seed(15)
  for _, dt in ipairs{torch.int64, torch.int32, torch.int16, torch.int8, torch.uint8} do
    local function mm(a, b, what)
      local g = a:cuda():matmul(b:cuda())
      check(g.is_cuda and g.dtype == dt, what)
      check_eq(g:cpu():totable(), a:matmul(b):totable(), dt.name .. " " .. what)
    end
    local function ri(...) return torch.randint(-40, 40, {...}):to(dt) end
    mm(ri(33, 17), ri(17, 9), "2-D")
    mm(ri(17, 33):t(), ri(9, 17):t(), "both transposed")
    mm(ri(4, 33, 17), ri(4, 17, 9), "batched")
    mm(ri(2, 3, 5, 7), ri(2, 1, 7, 4), "two batch dims, broadcast")
    mm(ri(40), ri(40, 3), "vector @ matrix")
    mm(ri(1, 100), ri(100, 1), "long k")
    local x, y, bias = ri(6, 5), ri(5, 3), ri(3)
    check_eq(torch.addmm(bias:cuda(), x:cuda(), y:cuda(), {beta = 2, alpha = 3}):cpu():totable(),
             torch.addmm(bias, x, y, {beta = 2, alpha = 3}):totable(), dt.name .. " addmm")
  end
  -- integers go to a plain kernel (cuda/intmm.c; tests/cuda/test_cuda_linalg.lua covers it)
  local i2 = torch.ones(2, 2, {dtype = torch.int32, device = "cuda"}):matmul(
    torch.ones(2, 2, {dtype = torch.int32, device = "cuda"}))
  check_eq(i2.dtype, torch.int32)
  check_eq(i2:cpu():totable(), {{2, 2}, {2, 2}})
end)

test("TF32 only when asked: float32 matmul is full precision by default", function()
  torch.manual_seed(6)
  local a, b = torch.randn(256, 256), torch.randn(256, 256)
  local ref = a:double():matmul(b:double())
  local err = ((a:cuda():matmul(b:cuda()):cpu():double() - ref):norm() / ref:norm()):item()
  check(err < 1e-5, "full float32 error " .. err)
  torch.set_float32_matmul_precision("high")
  local err2 = ((a:cuda():matmul(b:cuda()):cpu():double() - ref):norm() / ref:norm()):item()
  torch.set_float32_matmul_precision("highest")
  check(err2 < 1e-2, "tf32 error " .. err2)
end)

-- an MLP and its data, built on the CPU with a seed
local function mlp(act)
  torch.manual_seed(10)
  local nn = torch.nn
  return nn.Sequential(nn.Linear(20, 64), act == "gelu" and nn.GELU() or nn.ReLU(), nn.Linear(64, 64), nn.ReLU(),
                       nn.Linear(64, 5))
end

test("an MLP's gradients on CUDA equal the CPU's (cross entropy and MSE, ReLU and GELU)", function()
  for _, case in ipairs{{"relu", "ce"}, {"gelu", "mse"}} do
    local mc, mg = mlp(case[1]), mlp(case[1]):cuda()
    for _, p in ipairs(mg:parameters()) do check(p.is_cuda, "parameters moved") end
    torch.manual_seed(11)
    local x = torch.randn(32, 20)
    local y = case[2] == "ce" and torch.randint(1, 6, {32}) or torch.randn(32, 5)
    local F = torch.nn.functional
    local lossf = case[2] == "ce" and F.cross_entropy or F.mse_loss
    local lc, lg = lossf(mc(x), y), lossf(mg(x:cuda()), y:cuda())
    check(lg.is_cuda)
    check_close(lg:cpu(), lc, {atol = 1e-5, rtol = 1e-5})
    lc:backward()
    lg:backward()
    local pc, pg = mc:parameters(), mg:parameters()
    for i = 1, #pc do
      check(pg[i].grad.is_cuda, "grad stays on cuda")
      check_close(pg[i].grad:cpu(), pc[i].grad, {atol = 1e-5, rtol = 1e-4})
    end
  end
end)

test("SGD (momentum) and Adam steps on CUDA parameters match the CPU", function()
  for _, opt in ipairs{"sgd", "adam"} do
    local mc, mg = mlp("relu"), mlp("relu"):cuda()
    local function make(m)
      if opt == "sgd" then return torch.optim.SGD(m:parameters(), {lr = 0.05, momentum = 0.9}) end
      return torch.optim.Adam(m:parameters(), {lr = 1e-3})
    end
    local oc, og = make(mc), make(mg)
    torch.manual_seed(12)
    local x, y = torch.randn(64, 20), torch.randint(1, 6, {64})
    local xg, yg = x:cuda(), y:cuda()
    local F = torch.nn.functional
    for _ = 1, 5 do
      oc:zero_grad()
      og:zero_grad()
      F.cross_entropy(mc(x), y):backward()
      F.cross_entropy(mg(xg), yg):backward()
      oc:step()
      og:step()
    end
    local pc, pg = mc:parameters(), mg:parameters()
    for i = 1, #pc do
      check(pg[i].is_cuda)
      check_close(pg[i]:cpu(), pc[i], {atol = 1e-4, rtol = 1e-4})
    end
  end
end)
