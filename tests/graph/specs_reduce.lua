-- tests/graph/specs_reduce.lua -- gradcheck cases for reductions, scans,
-- sorting and softmax (see test_gradcheck.lua). Value-selecting ops (max,
-- sort, topk, median, ...) get inputs with well separated values (D), so
-- that the finite differences do not reorder them; prod and cumprod are
-- polynomials, so they are checked at inputs holding zeros as well.
local G = require "gradlib"
local R, P, D, NC, NCof = G.R, G.P, G.D, G.NC, G.NCof

-- a leaf like make(...) with zeros at the given positions ({i, j} lists)
local function with_zeros(make, shape, positions)
  local x = make(shape):detach()
  for _, p in ipairs(positions) do x[p] = 0 end
  return x:requires_grad_()
end

-- a leaf holding NaNs at the given positions
local function with_nans(shape, positions)
  local x = R(shape):detach()
  for _, p in ipairs(positions) do x[p] = 0 / 0 end
  return x:requires_grad_()
end

-- values of a (values, indices) pair
local function first(a) return a end

return {
  sum = {
    {fn = function(x) return x:sum() end, inputs = function() return {R(3, 4)} end, second_order = true},
    {fn = function(x) return x:sum(2) end, inputs = function() return {NC(3, 4)} end, second_order = true},
    {fn = function(x) return x:sum({1, 3}, {keepdim = true}) end, inputs = function() return {R(2, 3, 4)} end},
    {fn = function(x) return x:sum(-1) end, inputs = function() return {R(2, 3)} end},
    {fn = function(x) return x:float():sum({dtype = torch.float64}) end, inputs = function() return {R(2, 3)} end,
     eps = 1e-2, atol = 1e-4}, -- linear: a large eps is exact
  },
  mean = {
    {fn = function(x) return x:mean() end, inputs = function() return {R(3, 4)} end, second_order = true},
    {fn = function(x) return x:mean(1, {keepdim = true}) end, inputs = function() return {R(3, 4)} end},
    {fn = function(x) return x:mean({-1, 1}) end, inputs = function() return {NC(2, 3, 4)} end, second_order = true},
  },
  prod = {
    {fn = function(x) return x:prod() end, inputs = function() return {R(2, 3)} end, second_order = true},
    {fn = function(x) return x:prod(2) end, inputs = function() return {NC(3, 4)} end, second_order = true},
    {fn = function(x) return x:prod({1, 3}, {keepdim = true}) end, inputs = function() return {R(2, 3, 2)} end},
    {fn = function(x) return x:prod(-1, true) end, inputs = function() return {R(3, 4)} end},
    -- one zero: the zero gets the product of the others, second order too
    {fn = function(x) return x:prod() end, inputs = function() return {with_zeros(R, {2, 3}, {{2, 2}})} end,
     second_order = true},
    {fn = function(x) return x:prod(2) end, inputs = function() return {with_zeros(R, {3, 4}, {{1, 2}, {3, 4}})} end,
     second_order = true},
    -- two or three zeros in a slice: every gradient of the slice is 0, but not every second derivative
    {fn = function(x) return x:prod(1) end, inputs = function() return {with_zeros(R, {3, 4}, {{1, 2}, {3, 2}, {2, 1}})} end,
     second_order = true},
    {fn = function(x) return x:prod() end, inputs = function() return {with_zeros(R, {5}, {{2}, {4}})} end,
     second_order = true},
    {fn = function(x) return x:prod(2) end, inputs = function() return {with_zeros(R, {2, 4}, {{1, 1}, {1, 2}, {1, 4}})} end,
     second_order = true},
  },
  nansum = {
    {fn = function(x) return x:nansum() end, inputs = function() return {R(3, 4)} end, second_order = true},
    {fn = function(x) return x:nansum(2) end, inputs = function() return {with_nans({3, 4}, {{1, 2}, {2, 4}})} end},
    {fn = function(x) return torch.nansum(x, 1, true) end, inputs = function() return {NC(3, 4)} end},
  },
  nanmean = {
    {fn = function(x) return x:nanmean() end, inputs = function() return {R(3, 4)} end, second_order = true},
    {fn = function(x) return x:nanmean(2) end, inputs = function() return {with_nans({3, 4}, {{1, 2}, {1, 3}, {2, 4}})} end},
    {fn = function(x) return x:nanmean(-2, true) end, inputs = function() return {NC(3, 4)} end},
  },
  var = {
    {fn = function(x) return x:var() end, inputs = function() return {R(3, 4)} end, second_order = true},
    {fn = function(x) return x:var(2) end, inputs = function() return {NC(3, 4)} end, second_order = true},
    {fn = function(x) return x:var(1, false, true) end, inputs = function() return {R(3, 4)} end},
    {fn = function(x) return x:var({1, -1}, {correction = 2, keepdim = true}) end, inputs = function() return {R(2, 3, 4)} end},
  },
  std = {
    {fn = function(x) return x:std() end, inputs = function() return {R(3, 4)} end, second_order = true},
    {fn = function(x) return x:std(2, false) end, inputs = function() return {NC(3, 4)} end, second_order = true},
    {fn = function(x) return x:std(-3, true, true) end, inputs = function() return {R(3, 2, 2)} end},
    {fn = function(x) return x:std({1, 2}, {correction = 0}) end, inputs = function() return {R(2, 3, 2)} end},
  },
  var_mean = {
    {fn = function(x) return {x:var_mean()} end, inputs = function() return {R(3, 4)} end, second_order = true},
    {fn = function(x) return {x:var_mean(2, {correction = 0, keepdim = true})} end, inputs = function() return {NC(3, 4)} end},
    {fn = function(x) return (x:var_mean(1)) end, inputs = function() return {R(3, 2)} end},
  },
  std_mean = {
    {fn = function(x) return {x:std_mean()} end, inputs = function() return {R(3, 4)} end, second_order = true},
    {fn = function(x) return {x:std_mean(-1, {correction = 2})} end, inputs = function() return {NC(3, 5)} end},
    {fn = function(x) local _, m = x:std_mean(1, true, true); return m end, inputs = function() return {R(3, 2)} end},
  },
  norm = {
    {fn = function(x) return x:norm() end, inputs = function() return {R(3, 4)} end, second_order = true},
    {fn = function(x) return x:norm(2, 2) end, inputs = function() return {NC(3, 4)} end, second_order = true},
    {fn = function(x) return x:norm(1, 1, true) end, inputs = function() return {R(3, 4)} end, second_order = true},
    {fn = function(x) return x:norm(math.huge, 2) end, inputs = function() return {D(3, 4)} end, second_order = true},
    {fn = function(x) return x:norm(-math.huge) end, inputs = function() return {D(2, 3)} end},
    {fn = function(x) return x:norm(3, {1, 2}) end, inputs = function() return {R(2, 3, 2)} end, second_order = true},
    {fn = function(x) return x:norm(1.5, -1) end, inputs = function() return {R(3, 4)} end, second_order = true},
    {fn = function(x) return x:norm(0.5, 2, true) end, inputs = function() return {P(3, 4)} end, second_order = true},
    {fn = function(x) return x:norm(0, 2) end, inputs = function() return {R(2, 3)} end},
    {fn = function(x) return x:norm("fro", nil, false, {dtype = torch.float64}) end,
     inputs = function() return {R(2, 3)} end},
  },
  logsumexp = {
    {fn = function(x) return x:logsumexp() end, inputs = function() return {R(3, 4)} end, second_order = true},
    {fn = function(x) return x:logsumexp(2) end, inputs = function() return {NC(3, 4)} end, second_order = true},
    {fn = function(x) return x:logsumexp({1, 3}, true) end, inputs = function() return {R(2, 3, 2)} end},
  },
  amax = {
    {fn = function(x) return x:amax() end, inputs = function() return {D(3, 4)} end, second_order = true},
    {fn = function(x) return x:amax(2) end, inputs = function() return {NCof(D, 3, 4)} end, second_order = true},
    {fn = function(x) return x:amax({1, -1}, true) end, inputs = function() return {D(2, 3, 2)} end},
  },
  amin = {
    {fn = function(x) return x:amin() end, inputs = function() return {D(3, 4)} end, second_order = true},
    {fn = function(x) return x:amin(-2, true) end, inputs = function() return {NCof(D, 3, 4)} end},
  },
  aminmax = {
    {fn = function(x) return {x:aminmax()} end, inputs = function() return {D(3, 4)} end, second_order = true},
    {fn = function(x) return {x:aminmax({dim = 2, keepdim = true})} end, inputs = function() return {NCof(D, 3, 4)} end},
    {fn = function(x) local _, mx = x:aminmax({dim = -2}); return mx end, inputs = function() return {D(3, 4)} end},
  },
  max = {
    {fn = function(x) return x:max() end, inputs = function() return {D(3, 4)} end, second_order = true},
    {fn = function(x) return first(x:max(2)) end, inputs = function() return {D(3, 4)} end, second_order = true},
    {fn = function(x) return first(x:max(1, true)) end, inputs = function() return {NCof(D, 3, 4)} end, second_order = true},
    {fn = function(x) return first(torch.max(x, -1)) end, inputs = function() return {D(2, 3, 4)} end},
    {fn = function(x) return first(x:max(1)) end, inputs = function() return {D(5)} end},
  },
  min = {
    {fn = function(x) return x:min() end, inputs = function() return {D(3, 4)} end, second_order = true},
    {fn = function(x) return first(x:min(2)) end, inputs = function() return {NCof(D, 3, 4)} end, second_order = true},
    {fn = function(x) return first(x:min(-3, true)) end, inputs = function() return {D(2, 3, 4)} end},
  },
  cumsum = {
    {fn = function(x) return x:cumsum(1) end, inputs = function() return {R(5)} end, second_order = true},
    {fn = function(x) return x:cumsum(2) end, inputs = function() return {NC(3, 4)} end, second_order = true},
    {fn = function(x) return x:cumsum(-3) end, inputs = function() return {R(3, 2, 2)} end},
    {fn = function(x) return x:float():cumsum(1, {dtype = torch.float64}) end, inputs = function() return {R(3, 2)} end,
     eps = 1e-2, atol = 1e-4},
  },
  cumprod = {
    {fn = function(x) return x:cumprod(1) end, inputs = function() return {R(5)} end, second_order = true},
    {fn = function(x) return x:cumprod(2) end, inputs = function() return {NC(3, 4)} end, second_order = true},
    {fn = function(x) return x:cumprod(-2) end, inputs = function() return {R(3, 2, 2)} end},
    -- zeros: rows with none, one and two of them
    {fn = function(x) return x:cumprod(2) end,
     inputs = function() return {with_zeros(R, {3, 5}, {{2, 3}, {3, 2}, {3, 4}})} end, second_order = true},
    {fn = function(x) return x:cumprod(1) end, inputs = function() return {with_zeros(R, {4, 3}, {{1, 1}, {3, 2}})} end},
  },
  cummax = {
    {fn = function(x) return first(x:cummax(1)) end, inputs = function() return {D(6)} end, second_order = true},
    {fn = function(x) return first(x:cummax(2)) end, inputs = function() return {NCof(D, 3, 4)} end},
  },
  cummin = {
    {fn = function(x) return first(x:cummin(1)) end, inputs = function() return {D(6)} end, second_order = true},
    {fn = function(x) return first(x:cummin(-1)) end, inputs = function() return {D(2, 3, 4)} end},
  },
  sort = {
    {fn = function(x) return first(x:sort()) end, inputs = function() return {D(3, 4)} end, second_order = true},
    {fn = function(x) return first(x:sort(1, true)) end, inputs = function() return {NCof(D, 3, 4)} end},
    {fn = function(x) return first(torch.sort(x, {dim = -2, stable = true})) end, inputs = function() return {D(2, 3, 2)} end},
  },
  topk = {
    {fn = function(x) return first(x:topk(2)) end, inputs = function() return {D(3, 4)} end, second_order = true},
    {fn = function(x) return first(x:topk(2, 1, false)) end, inputs = function() return {NCof(D, 3, 4)} end},
    {fn = function(x) return first(x:topk(3, -1, true, false)) end, inputs = function() return {D(2, 5)} end},
  },
  kthvalue = {
    {fn = function(x) return first(x:kthvalue(2)) end, inputs = function() return {D(3, 4)} end, second_order = true},
    {fn = function(x) return first(x:kthvalue(3, 1, true)) end, inputs = function() return {NCof(D, 3, 4)} end},
  },
  median = {
    {fn = function(x) return x:median() end, inputs = function() return {D(3, 5)} end, second_order = true},
    {fn = function(x) return first(x:median(2)) end, inputs = function() return {D(3, 4)} end, second_order = true},
    {fn = function(x) return first(x:median(-2, true)) end, inputs = function() return {NCof(D, 3, 4)} end},
  },
  nanmedian = {
    {fn = function(x) return x:nanmedian() end, inputs = function() return {D(3, 5)} end},
    {fn = function(x) return first(x:nanmedian(1)) end, inputs = function() return {NCof(D, 3, 4)} end},
    {fn = function(x) return first(x:nanmedian(2, true)) end,
     inputs = function() local x = D(3, 4):detach(); x[{1, 2}] = 0 / 0; return {x:requires_grad_()} end},
  },
  mode = {
    {fn = function(x) return first(x:mode()) end, inputs = function() return {D(3, 4)} end, second_order = true},
    {fn = function(x) return first(x:mode(1, true)) end, inputs = function() return {NCof(D, 3, 4)} end},
  },
  softmax = {
    {fn = function(x) return x:softmax(2) end, inputs = function() return {R(3, 4)} end, second_order = true},
    {fn = function(x) return torch.softmax(x, 1) end, inputs = function() return {NC(3, 4)} end},
  },
  log_softmax = {
    {fn = function(x) return x:log_softmax(2) end, inputs = function() return {R(3, 4)} end, second_order = true},
    {fn = function(x) return torch.log_softmax(x, 1) end, inputs = function() return {NC(3, 4)} end},
  },
}
