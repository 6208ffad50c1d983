-- tests/cuda/test_cuda_complex.lua -- complex tensors on the GPU: transfers,
-- casts, fills, views, the elementwise ops (by parts: real kernels on the
-- real and imaginary parts, tensor/complex_parts.c), where, sum/mean,
-- printing and gradients, each against the CPU's kernels. Skipped without
-- a GPU.
if not torch.cuda.is_available() then
  io.write("note: no CUDA GPU/driver here; GPU complex tests skipped\n")
  test("complex tensors exist without a GPU", function()
    check(torch.zeros(1, {dtype = torch.complex64}):is_complex())
  end)
  return
end

local C64, C128 = torch.complex64, torch.complex128
torch.manual_seed(3)
local Z = torch.complex(torch.randn(5, 7, {dtype = torch.float64}), torch.randn(5, 7, {dtype = torch.float64}))
local W = torch.complex(torch.randn(5, 7, {dtype = torch.float64}), torch.randn(5, 7, {dtype = torch.float64}))
local RE = torch.randn(5, 7, {dtype = torch.float64})

local function same(g, c, tol)
  check(g.is_cuda, "stays on cuda")
  check(g.dtype == c.dtype, "dtype " .. tostring(g.dtype) .. " vs " .. tostring(c.dtype))
  check_close(g:cpu(), c, {atol = tol or 1e-12, rtol = tol or 1e-12})
end

test("transfers, casts, fills and views on CUDA keep both parts", function()
  local g = Z:cuda()
  check(g.is_cuda and g.dtype == C128)
  check_close(g:cpu(), Z, {atol = 0})
  same(g:to(C64), Z:to(C64), 0)
  same(RE:cuda():to(C128), RE:to(C128), 0)
  same(g:to(torch.float64), Z:to(torch.float64), 0)
  same(torch.view_as_real(g), torch.view_as_real(Z), 0)
  same(g.imag, Z.imag, 0)
  same(g:t():contiguous(), Z:t():contiguous(), 0)
  same(torch.cat({g, g:flip(1)}, 2), torch.cat({Z, Z:flip(1)}, 2), 0)
  local f = torch.zeros(3, {dtype = C64, device = "cuda"})
  f:fill_(2)
  check_close(f:cpu(), {{2, 0}, {2, 0}, {2, 0}})
  check_close(torch.full({2}, {1, -1}, {device = "cuda"}):cpu(), {{1, -1}, {1, -1}})
  check_eq(g[2][3]:item(), Z[2][3]:item())
  check_eq(tostring(g[1]):gsub(", device='cuda:0'", ""), tostring(Z[1]))
end)

test("elementwise ops on CUDA match the CPU kernels", function()
  local g, w, r = Z:cuda(), W:cuda(), RE:cuda()
  for _, name in ipairs{"neg", "conj", "abs", "angle", "exp", "log", "sqrt", "rsqrt", "reciprocal", "square", "sgn",
                        "isnan", "isfinite"} do
    same(torch[name](g), torch[name](Z), 1e-10)
    same(torch[name](g:to(C64)), torch[name](Z:to(C64)), 1e-5)
  end
  for _, name in ipairs{"add", "sub", "mul", "div", "pow", "eq", "ne"} do
    same(torch[name](g, w), torch[name](Z, W), 1e-10)
    same(torch[name](g, r), torch[name](Z, RE), 1e-10)
  end
  same(g * 2.5, Z * 2.5); same(1 / g, 1 / Z, 1e-12); same(g ^ 2, Z ^ 2, 1e-10)
  same(torch.where(r:gt(0), g, w), torch.where(RE:gt(0), Z, W), 0)
  same(g:sum(2), Z:sum(2), 1e-12); same(g:mean(), Z:mean(), 1e-12)
  same(torch.polar(r:abs(), r), torch.polar(RE:abs(), RE), 1e-12)
  check_error(function() g:sin() end, "sin: complex128 tensors are not supported")
end)

test("gradients on CUDA match the CPU's", function()
  local function grad(dev)
    local z = Z:to(dev):requires_grad_()
    local w = W:to(dev)
    local l = ((z * w):exp():abs() + (z / w):angle() + z:sgn().real):sum()
    l:backward()
    return z.grad
  end
  same(grad("cuda"), grad("cpu"), 1e-9)
end)
