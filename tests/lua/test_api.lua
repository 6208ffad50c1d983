-- tests/lua/test_api.lua -- every function API.md lists under "Tensor core"
-- (minus autograd) exists in the function and/or method form and carries a
-- one-line help text.

local functions = {
  -- creation
  "tensor", "zeros", "ones", "full", "empty", "arange", "linspace", "logspace", "eye", "rand", "randn",
  "randint", "randperm", "normal", "bernoulli", "multinomial", "zeros_like", "ones_like", "full_like",
  "empty_like", "rand_like", "randn_like",
  -- shape
  "cat", "stack", "chunk", "split", "flatten", "reshape", "squeeze", "unsqueeze", "permute", "transpose",
  "flip", "roll", "tril", "triu", "diag", "clone", "narrow", "select",
  -- indexing
  "index_select", "gather", "scatter", "scatter_add", "index_add", "index_copy", "masked_fill",
  "masked_select", "where", "nonzero", "take",
  -- math
  "abs", "neg", "sign", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt", "rsqrt", "sin",
  "cos", "tan", "asin", "acos", "atan", "atan2", "sinh", "cosh", "tanh", "sigmoid", "relu", "erf", "erfc",
  "floor", "ceil", "round", "trunc", "frac", "clamp", "pow", "reciprocal", "lerp", "hypot", "fmod",
  "remainder", "maximum", "minimum", "logical_and", "logical_or", "logical_not", "logical_xor",
  "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not", "isnan", "isinf", "isfinite", "nan_to_num",
  -- reductions
  "sum", "mean", "prod", "std", "var", "norm", "max", "min", "amax", "amin", "argmax", "argmin", "logsumexp",
  "all", "any", "cumsum", "cumprod", "sort", "topk", "kthvalue", "median", "mode", "unique", "softmax",
  "log_softmax",
  -- linear algebra
  "matmul", "mm", "bmm", "mv", "dot", "outer", "einsum", "addmm", "baddbmm",
  -- random / misc
  "manual_seed", "seed", "get_rng_state", "set_rng_state", "Generator", "time", "Timer", "set_num_threads",
  "get_num_threads", "set_default_dtype", "set_default_device",
}

local methods = {
  "totable", "item", "tolist", "size", "dim", "numel", "stride", "is_contiguous", "contiguous", "view",
  "reshape", "flatten", "unflatten", "squeeze", "unsqueeze", "permute", "transpose", "t", "expand",
  "expand_as", "tile", "repeat", "narrow", "select", "unfold", "chunk", "split", "flip", "roll", "tril",
  "triu", "diag", "clone", "copy_", "to", "float", "double", "long", "int", "bool", "half", "bfloat16", "cpu",
  "cuda", "add", "add_", "eq", "lt", "le", "gt", "ge", "ne", "gelu", "silu", "sum", "matmul",
}

local linalg = {"inv", "det", "solve", "cholesky", "qr", "svd", "eigh", "norm"}

local function helped(f) return type(torch._helptext(f)) == "string" and #torch._helptext(f) > 10 end

for _, name in ipairs(functions) do
  test("torch." .. name .. " exists with help", function()
    check(type(torch[name]) == "function", "torch." .. name .. " is missing")
    check(helped(torch[name]), "torch." .. name .. " has no help text")
  end)
end

for _, name in ipairs(methods) do
  test("x:" .. name .. " exists with help", function()
    local f = torch.ones(2)[name]
    check(type(f) == "function", "method " .. name .. " is missing")
    check(helped(f), "method " .. name .. " has no help text")
  end)
end

for _, name in ipairs(linalg) do
  test("torch.linalg." .. name .. " exists with help", function()
    check(type(torch.linalg) == "table", "torch.linalg is missing")
    check(type(torch.linalg[name]) == "function", "torch.linalg." .. name .. " is missing")
    check(helped(torch.linalg[name]), "torch.linalg." .. name .. " has no help text")
  end)
end

test("dtypes and devices are values", function()
  for _, d in ipairs({"float32", "float64", "float16", "bfloat16", "int8", "int16", "int32", "int64", "uint8", "bool", "uint16"}) do
    check(tostring(torch[d]) == "torch." .. d, d)
  end
  check_eq(tostring(torch.ones(1, {device = "cpu"}).device), "cpu")
  check_eq(type(torch.cuda.is_available()), "boolean")
  check(torch.ones(1).dtype == torch.float32)
end)

test("version and time", function()
  check(type(torch.version) == "string")
  local t0 = torch.time()
  local t1 = torch.time()
  check(t1 >= t0 and t1 - t0 < 1)
  local timer = torch.Timer()
  check(timer:elapsed() >= 0)
end)

test("every registered function and method has a help text", function()
  local missing = {}
  local function scan(t, prefix)
    for k, v in pairs(t) do
      if type(v) == "function" and not torch._helptext(v) then missing[#missing + 1] = prefix .. k end
    end
  end
  scan(torch, "torch.")
  scan(torch.linalg, "torch.linalg.")
  scan(torch.cuda, "torch.cuda.")
  scan(getmetatable(torch.ones(1)).__methods, "x:")
  table.sort(missing)
  check(#missing == 0, "no help for: " .. table.concat(missing, ", "))
end)
