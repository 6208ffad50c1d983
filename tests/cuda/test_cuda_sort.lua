-- tests/cuda/test_cuda_sort.lua -- sorts, selections and scans on CUDA
-- (tensor/cuda/sort.c, scan.c; unique on a host copy) against the CPU on
-- the same data: values and indices equal (the order is the CPU's stable
-- one, NaN largest), short rows (one block each) and long ones (the global
-- bitonic network), every dim, ties, NaN, dtypes; scans of many short and
-- few long (chunked) columns; then their gradients.
-- Skips without a GPU.

if not torch.cuda.is_available() then
  io.write("note: no CUDA GPU/driver here; GPU sort/scan tests skipped\n")
  return
end

local H = {device = "cpu"}

-- data on the CPU: few distinct values (many ties), some NaN for floats
local function data(shape, dt, nan)
  local x = torch.randint(-6, 7, shape, H):to(dt)
  if nan and x:is_floating_point() then
    local m = torch.rand(shape, H):lt(0.1)
    x = torch.where(m, torch.full(shape, 0 / 0, H):to(dt), x)
  end
  return x
end

local function eq(g, c, what)
  check(g.is_cuda, what .. " on cuda")
  check_eq(g.dtype, c.dtype, what .. " dtype")
  check_close(g:cpu():double(), c:double(), {atol = 0, rtol = 0, equal_nan = true})
end

local function near(g, c, what)
  check(g.is_cuda, what .. " on cuda")
  check_eq(g.dtype, c.dtype, what .. " dtype")
  check_close(g:cpu():double(), c:double(), {atol = 1e-6, rtol = 1e-6, equal_nan = true})
end

local shapes = {{1}, {7}, {5, 33}, {3, 4, 300}, {2, 3000}, {5000}, {2, 2, 2100}}
local dts = {torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int64, torch.int32, torch.uint8}

test("sort and argsort equal the CPU's (stable, NaN last, descending, every dim)", function()
  torch.manual_seed(1)
  for _, shape in ipairs(shapes) do
    for _, dt in ipairs(dts) do
      local x = data(shape, dt, true)
      local xg = x:cuda()
      for d = 1, #shape do
        for _, desc in ipairs({false, true}) do
          local cv, ci = torch.sort(x, d, desc)
          local gv, gi = torch.sort(xg, d, desc)
          eq(gv, cv, "sort values")
          eq(gi, ci, "sort indices")
          eq(torch.argsort(xg, d, desc), torch.argsort(x, d, desc), "argsort")
        end
      end
    end
  end
  local b = torch.rand(4, 50, H):gt(0.5)
  local bv, bi = torch.sort(b:cuda(), 2)
  local cv, ci = torch.sort(b, 2)
  eq(bv, cv, "bool sort")
  eq(bi, ci, "bool sort indices")
  local t = torch.randn(6, 40, H)
  eq(torch.sort(t:cuda():t(), 2), torch.sort(t:t(), 2), "a transposed input")
end)

test("topk, kthvalue, median, nanmedian, mode equal the CPU's", function()
  torch.manual_seed(2)
  for _, shape in ipairs(shapes) do
    for _, dt in ipairs({torch.float32, torch.float64, torch.int64, torch.float16}) do
      local x = data(shape, dt, dt ~= torch.int64)
      local xg = x:cuda()
      local d = #shape
      local L = shape[d]
      for _, k in ipairs({1, math.max(1, L // 3), L}) do
        for _, largest in ipairs({true, false}) do
          local cv, ci = torch.topk(x, k, d, largest)
          local gv, gi = torch.topk(xg, k, d, largest)
          eq(gv, cv, "topk values")
          eq(gi, ci, "topk indices")
        end
        local cv, ci = torch.kthvalue(x, k, d)
        local gv, gi = torch.kthvalue(xg, k, d)
        eq(gv, cv, "kthvalue")
        eq(gi, ci, "kthvalue indices")
      end
      for _, keep in ipairs({false, true}) do
        for _, f in ipairs({torch.median, torch.nanmedian, torch.mode}) do
          local cv, ci = f(x, 1, keep)
          local gv, gi = f(xg, 1, keep)
          eq(gv, cv, "median/nanmedian/mode values")
          eq(gi, ci, "median/nanmedian/mode indices")
        end
      end
      eq(torch.median(xg), torch.median(x), "median of all")
      eq(torch.nanmedian(xg), torch.nanmedian(x), "nanmedian of all")
    end
  end
  local allnan = torch.full({3, 4}, 0 / 0, H)
  eq(torch.nanmedian(allnan:cuda(), 2), torch.nanmedian(allnan, 2), "all-NaN rows")
  check_error(function() torch.topk(torch.zeros(3):cuda(), 4) end, "out of range")
end)

test("cumsum, cumprod, cummax, cummin equal the CPU's along every dim", function()
  torch.manual_seed(3)
  for _, shape in ipairs({{1}, {9}, {4, 70}, {3, 5, 7}, {100000}, {2, 40000}, {40000, 3}}) do
    for _, dt in ipairs({torch.float32, torch.float64, torch.int64, torch.int32, torch.uint8, torch.float16}) do
      local x = data(shape, dt, true)
      if x:is_floating_point() then x = x / 4 end
      local xg = x:cuda()
      for d = 1, #shape do
        -- few long columns are scanned in chunks: floating sums reassociate (last bits)
        local cmp = shape[d] >= 8192 and x:is_floating_point() and near or eq
        cmp(torch.cumsum(xg, d), torch.cumsum(x, d), "cumsum")
        if #shape > 1 or shape[1] < 100 then cmp(torch.cumprod(xg, d), torch.cumprod(x, d), "cumprod") end
        local cv, ci = torch.cummax(x, d)
        local gv, gi = torch.cummax(xg, d)
        eq(gv, cv, "cummax")
        eq(gi, ci, "cummax indices")
        cv, ci = torch.cummin(x, d)
        gv, gi = torch.cummin(xg, d)
        eq(gv, cv, "cummin")
        eq(gi, ci, "cummin indices")
      end
    end
  end
  local x = torch.randn(5, 6, H)
  eq(torch.cumsum(x:cuda(), 2, {dtype = torch.float64}), torch.cumsum(x, 2, {dtype = torch.float64}), "dtype=")
  eq(torch.cumsum(x:cuda():t(), 1), torch.cumsum(x:t(), 1), "a transposed input")
  eq(torch.cumsum(torch.ones(10, {dtype = torch.bool}):cuda(), 1), torch.cumsum(torch.ones(10, {dtype = torch.bool}), 1),
     "bool cumsum is int64")
end)

test("unique (on a host copy) equals the CPU's", function()
  local x = data({6, 50}, torch.float32, false)
  local cv, ci, cc = torch.unique(x, true, true, true)
  local gv, gi, gc = torch.unique(x:cuda(), true, true, true)
  eq(gv, cv, "unique values")
  eq(gi, ci, "unique inverse")
  eq(gc, cc, "unique counts")
end)

test("gradients of sort, topk, kthvalue, median, cumsum, cumprod, cummax equal the CPU's", function()
  torch.manual_seed(4)
  local x0 = torch.randn(4, 37, H)
  local fs = {
    function(x) return (torch.sort(x, 2)) end,
    function(x) return (torch.topk(x, 5, 2)) end,
    function(x) return (torch.kthvalue(x, 3, 2)) end,
    function(x) return (torch.median(x, 2)) end,
    function(x) return torch.median(x) end,
    function(x) return torch.cumsum(x, 2) end,
    function(x) return torch.cumprod(x, 2) end,
    function(x) return (torch.cummax(x, 2)) end,
    function(x) return (torch.cummin(x, 1)) end,
  }
  for _, f in ipairs(fs) do
    local xc = x0:clone():requires_grad_(true)
    local xg = x0:cuda():requires_grad_(true)
    local yc, yg = f(xc), f(xg)
    local w = torch.randn_like(yc:detach())
    local lc, lg = (yc * w):sum(), (yg * w:cuda()):sum()
    lc:backward()
    lg:backward()
    check(xg.grad.is_cuda, "grad on cuda")
    check_close(xg.grad:cpu(), xc.grad, {atol = 1e-4, rtol = 1e-4})
  end
end)
