-- tests/graph/test_complex_grad.lua -- gradients through complex tensors:
-- PyTorch's convention (for a real loss L of z = x + iy the gradient is
-- dL/dx + i dL/dy), checked against PyTorch 1.13's gradients
-- (tests/ref/gen_complex.py -> tests/ref/complex.lua) and against central
-- finite differences of L over the real and imaginary parts, in complex128.

local R = ref("complex")

local function grid(n, m, a, b)
  return torch.arange(n * m, {dtype = torch.float64}):reshape(n, m):mul(a):add(b):sin():mul(2)
end
local Z = torch.complex(grid(3, 4, 0.7, 0.1), grid(3, 4, 1.3, 0.5))
local W = torch.complex(grid(3, 4, 0.4, 1.1), grid(3, 4, 0.9, 0.2)) + 0.5
local RE = grid(3, 4, 0.3, 0.8)

-- the generator's loss: L = sum(real view of y * weights), weights sin(0.37 k + 0.2)
local function loss(y)
  local yr = y:is_complex() and torch.view_as_real(y) or y
  local w = torch.arange(yr:numel(), {dtype = torch.float64}):mul(0.37):add(0.2):sin():reshape(table.unpack(yr.shape))
  return (yr * w):sum()
end

-- gradients of loss(fn(inputs...)) for each input
local function grads(fn, ...)
  local xs = {}
  for i, x in ipairs({...}) do xs[i] = x:clone():requires_grad_() end
  loss(fn(table.unpack(xs))):backward()
  local out = {}
  for i, x in ipairs(xs) do out[i] = x.grad end
  return out
end

-- central differences of loss(fn(...)) over input k's real (and imaginary) parts
local function numeric(fn, k, ...)
  local xs = {...}
  local x = xs[k]:clone()
  local flat = x:is_complex() and torch.view_as_real(x):view(-1) or x:view(-1)
  local g = torch.zeros(flat:numel(), {dtype = torch.float64})
  local eps = 1e-6
  for i = 1, flat:numel() do
    local v = flat[i]:item()
    local args = {table.unpack(xs)}
    args[k] = x
    flat[i] = v + eps
    local lp = loss(fn(table.unpack(args))):item()
    flat[i] = v - eps
    local lm = loss(fn(table.unpack(args))):item()
    flat[i] = v
    g[i] = (lp - lm) / (2 * eps)
  end
  return x:is_complex() and torch.view_as_complex(g:view(table.unpack(torch.view_as_real(x).shape))) or g:view(table.unpack(x.shape))
end

local cases = {
  mul = {function(a, b) return a * b end, Z, W}, div = {function(a, b) return a / b end, Z, W},
  add = {function(a, b) return a + b end, Z, W}, sub = {function(a, b) return a - b end, Z, W},
  mul_real = {function(r, z) return r * z end, RE, Z}, div_real = {function(z, r) return z / r end, Z, RE},
  exp = {torch.exp, Z}, log = {torch.log, Z}, sqrt = {torch.sqrt, Z}, rsqrt = {torch.rsqrt, Z},
  reciprocal = {torch.reciprocal, Z}, square = {torch.square, Z}, neg = {torch.neg, Z},
  conj = {torch.conj, Z}, abs = {torch.abs, Z}, angle = {torch.angle, Z}, sgn = {torch.sgn, Z},
  pow_2_5 = {function(z) return z:pow(2.5) end, Z}, pow_zw = {function(a, b) return a:pow(b) end, Z, W},
  real = {function(z) return z.real * 1 end, Z}, imag = {function(z) return z.imag * 1 end, Z},
  view_as_real = {function(z) return torch.view_as_real(z) * 1 end, Z},
  view_as_complex = {function(r) return torch.view_as_complex(r) end, torch.stack({RE, RE * 0.5}, 3)},
  complex = {torch.complex, RE, RE * 2}, polar = {torch.polar, RE:abs() + 0.1, RE * 3},
  sum = {function(z) return z:sum(2) end, Z}, mean = {function(z) return z:mean() end, Z},
  abs_exp = {function(z) return (z * W):exp():abs() end, Z},
}

for name, c in pairs(cases) do
  test("d " .. name .. ": PyTorch's gradients and finite differences", function()
    local fn = c[1]
    local inputs = {table.unpack(c, 2)}
    local got = grads(fn, table.unpack(inputs))
    for k = 1, #inputs do
      check(got[k] ~= nil, "input " .. k .. " has a gradient")
      check(got[k].dtype == inputs[k].dtype, "the gradient has the input's dtype")
      check_close(got[k], R.grad[name][k], {atol = 1e-8, rtol = 1e-8})
      check_close(got[k], numeric(fn, k, table.unpack(inputs)), {atol = 1e-6, rtol = 1e-6})
    end
  end)
end

test("|z|^2 has gradient 2z; a step against it shrinks |z|", function()
  local z = Z:clone():requires_grad_()
  local l = (z * z:conj()).real:sum()
  l:backward()
  check_close(z.grad, Z * 2, {atol = 1e-12})
  local z2 = (Z - z.grad * 0.1)
  check(z2:abs():sum():item() < Z:abs():sum():item())
end)

test("double backward through a complex op (create_graph)", function()
  local z = Z:clone():requires_grad_()
  local l = (z * z * z):abs():sum()
  local g = torch.autograd.grad({l}, {z}, {create_graph = true})[1]
  local s = g:abs():sum()
  s:backward()
  check(z.grad ~= nil and z.grad.dtype == torch.complex128, "second-order gradient reaches z")
  -- finite differences of the first gradient's norm
  local function first(zz)
    local q = zz:clone():requires_grad_()
    local gq = torch.autograd.grad({(q * q * q):abs():sum()}, {q})[1]
    return gq:abs():sum()
  end
  local r = torch.view_as_real(Z:clone()):view(-1)
  local eps, i = 1e-6, 5
  local v = r[i]:item()
  local base = torch.view_as_complex(r:view(3, 4, 2))
  r[i] = v + eps; local lp = first(base):item()
  r[i] = v - eps; local lm = first(base):item()
  r[i] = v
  check_close(torch.view_as_real(z.grad):view(-1)[i], (lp - lm) / (2 * eps), {atol = 1e-5, rtol = 1e-5})
end)

test("requires_grad on complex leaves; grad_fn names", function()
  local z = torch.zeros(2, {dtype = torch.complex64, requires_grad = true})
  check(z.requires_grad)
  check_eq(tostring(torch.view_as_real(z).grad_fn), "<ViewAsRealBackward0>")
  check_eq(tostring(torch.view_as_complex(torch.zeros(2, 2, {requires_grad = true})).grad_fn), "<ViewAsComplexBackward0>")
end)

test("torch.compile runs complex functions eagerly (the JIT declines complex values) with the same results", function()
  local f = torch.compile(function(a, b) return (a * b + a):abs() end)
  local r1 = f(Z, W)
  local r2 = f(Z, W)
  check_close(r1, (Z * W + Z):abs(), {atol = 1e-12})
  check_close(r2, (Z * W + Z):abs(), {atol = 1e-12})
  local g = torch.compile(function(x) return torch.view_as_real(torch.complex(x, x * 2):exp()):sum(3) end)
  check_close(g(RE), torch.view_as_real(torch.complex(RE, RE * 2):exp()):sum(3), {atol = 1e-12})
  check_close(g(RE), torch.view_as_real(torch.complex(RE, RE * 2):exp()):sum(3), {atol = 1e-12})
end)

test("backward of a complex scalar needs a gradient, as in PyTorch", function()
  local z = Z:clone():requires_grad_()
  check_error(function() (z * 2):sum():backward() end, "a gradient can be implied only for real outputs")
  local s = (z * 2):sum()
  s:backward(torch.tensor({1, 0}, {dtype = torch.complex128}))
  check_close(z.grad, torch.full({3, 4}, {2, 0}, {dtype = torch.complex128}), {atol = 1e-12})
end)
