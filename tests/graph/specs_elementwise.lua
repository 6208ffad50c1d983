-- tests/graph/specs_elementwise.lua -- gradcheck cases for the elementwise
-- ops (see test_gradcheck.lua). Each unary op is checked on a contiguous and
-- a non-contiguous input; binary ops also with broadcasting; second-order
-- gradients for all of them.
local G = require "gradlib"
local R, P, U, F, NC = G.R, G.P, G.U, G.F, G.NC

local specs = {}

-- unary ops and the input maker their domain needs
local unary = {
  neg = R, abs = F, sign = F, exp = R, exp2 = R, expm1 = R, log = P, log2 = P, log10 = P, log1p = P,
  sqrt = P, rsqrt = P, sin = R, cos = R, tan = U, asin = U, acos = U, atan = R, sinh = R, cosh = R,
  tanh = R, sigmoid = R, relu = F, gelu = R, gelu_tanh = R, silu = R, erf = R, erfc = R, floor = F,
  ceil = F, round = F, trunc = F, frac = F, reciprocal = P, square = R, sinc = R, conj = R, angle = F, sgn = F,
}
for name, make in pairs(unary) do
  local fn = function(x) return torch[name](x) end
  specs[name] = {
    {fn = fn, inputs = function() return {make(3, 4)} end, second_order = true},
    {fn = fn, inputs = function()
      local x = make(4, 3)
      return {x:detach():t():detach():requires_grad_()} -- a non-contiguous leaf
    end},
  }
end

local binary = {
  add = {R, R}, sub = {R, R}, mul = {R, R}, div = {R, P}, pow = {P, R}, atan2 = {R, P}, hypot = {P, P},
  fmod = {F, P}, remainder = {F, P}, maximum = {G.D, R}, minimum = {G.D, R},
}
for name, makers in pairs(binary) do
  local fn = function(a, b) return torch[name](a, b) end
  specs[name] = {
    {fn = fn, inputs = function() return {makers[1](2, 3), makers[2](2, 3)} end, second_order = true},
    {fn = fn, inputs = function() return {makers[1](2, 3), makers[2](3)} end}, -- broadcasting
    {fn = fn, inputs = function() return {makers[1](3, 1), makers[2](1, 4)} end}, -- both broadcast
    {fn = fn, inputs = function() return {G.NCof(makers[1], 2, 3), makers[2](2, 3)} end},
  }
end
-- fmod/remainder are only smooth away from multiples of b: keep |a| < b
specs.fmod[4] = nil
specs.remainder[4] = nil
specs.fmod[1].inputs = function() return {P(2, 3) * 0.5, P(2, 3) + 1} end
specs.remainder[1].inputs = specs.fmod[1].inputs
specs.fmod[2].inputs = function() return {P(2, 3) * 0.5, P(3) + 1} end
specs.remainder[2].inputs = specs.fmod[2].inputs
specs.fmod[3].inputs = function() return {P(3, 1) * 0.5, P(1, 4) + 1} end
specs.remainder[3].inputs = specs.fmod[3].inputs
-- a scalar exponent and a scalar base
specs.pow[#specs.pow + 1] = {fn = function(a) return a ^ 3 end, inputs = function() return {R(4)} end, second_order = true}
specs.pow[#specs.pow + 1] = {fn = function(b) return torch.pow(2, b) end, inputs = function() return {R(4)} end}

specs.relu_backward = {
  {fn = function(g, y) return torch.relu_backward(g, y) end, inputs = function() return {R(3, 4), F(3, 4)} end,
   second_order = true},
  {fn = function(g, y) return torch.relu_backward(g, y) end, inputs = function() return {R(3, 4), F(4)} end},
}
specs.gelu_backward = {
  {fn = function(g, x) return torch.gelu_backward(g, x) end, inputs = function() return {R(3, 4), R(3, 4)} end,
   second_order = true},
  {fn = function(g, x) return torch.gelu_backward(g, x) end, inputs = function() return {R(3, 4), R(4)} end},
}
specs.gelu_tanh_backward = {
  {fn = function(g, x) return torch.gelu_backward(g, x, "tanh") end, inputs = function() return {R(3, 4), R(3, 4)} end,
   second_order = true},
  {fn = function(g, x) return torch.gelu_backward(g, x, {approximate = "tanh"}) end,
   inputs = function() return {R(4), R(3, 4)} end},
}
specs.clamp = {
  {fn = function(x) return torch.clamp(x, -0.5, 0.5) end, inputs = function() return {G.D(3, 4) * 0.1} end},
  {fn = function(x, lo, hi) return torch.clamp(x, lo, hi) end,
   inputs = function() return {G.D(3, 4) * 0.1, R(4) * 0.01 - 0.4, R(3, 1) * 0.01 + 0.4} end},
}
specs.where = {
  {fn = function(a, b) return torch.where(torch.tensor({{true, false, true}, {false, false, true}}), a, b) end,
   inputs = function() return {R(2, 3), R(3)} end, second_order = true},
}
specs.lerp = {
  {fn = function(a, b, w) return torch.lerp(a, b, w) end, inputs = function() return {R(2, 3), R(2, 3), U(3)} end,
   second_order = true},
  {fn = function(a, b) return torch.lerp(a, b, 0.3) end, inputs = function() return {R(4), R(4)} end},
}
specs.nan_to_num = {
  {fn = function(x) return torch.nan_to_num(x) end, inputs = function() return {R(3, 4)} end},
}
specs.leaky_relu = {
  {fn = function(x) return torch.leaky_relu(x, 0.1) end, inputs = function() return {F(3, 4)} end, second_order = true},
}
specs.logit = { -- inputs in (0, 1); with eps some are clamped (none sits on a bound), non-contiguous
  {fn = function(x) return torch.logit(x) end, second_order = true,
   inputs = function() return {(torch.rand({3, 4}, {dtype = torch.float64}) * 0.9 + 0.05):requires_grad_()} end},
  {fn = function(x) return x:logit(0.3) end, second_order = true, inputs = function()
    local x = torch.tensor({{0.05, 0.2, 0.35}, {0.5, 0.8, 0.95}}, {dtype = torch.float64})
    return {x:t():detach():requires_grad_()}
  end},
}
specs.copy = {
  {fn = function(x) return x:clone() end, inputs = function() return {R(3, 4)} end, second_order = true},
  {fn = function(x) return x:contiguous() end, inputs = function() return {NC(3, 4)} end},
}
specs.cast = {
  {fn = function(x) return x:float():double() end, inputs = function() return {R(3, 4)} end, eps = 1e-2, atol = 1e-3},
}
return specs
