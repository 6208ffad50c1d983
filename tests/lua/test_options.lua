-- tests/lua/test_options.lua -- the one options checker (lua_bindings/
-- args.c): trailing options tables of C and Lua functions are checked
-- against the names each declares (the mtl_reg row's opts for C functions),
-- and the declarations cannot drift from what the functions read.

local exe = (arg and arg[-1] and arg[-1]:match("moontorch$")) and arg[-1] or "build/moontorch"
local here = (debug.getinfo(1, "S").source:match("^@(.*/)") or "tests/lua/")

-- the message of fn(...)'s error (called by pcall: no position)
local function err_of(fn, ...)
  local ok, e = pcall(fn, ...)
  check(not ok, "expected an error")
  return tostring(e)
end

test("an unknown option names the function, the key and the closest name", function()
  check_eq(err_of(torch.zeros, 2, 2, {dtyp = torch.float64}), "zeros: unknown option 'dtyp' (did you mean 'dtype'?)")
  check_eq(err_of(torch.randn, 2, {requires_grd = true}),
           "randn: unknown option 'requires_grd' (did you mean 'requires_grad'?)")
  local x = torch.ones(2, 3)
  check_eq(err_of(x.sum, x, 1, {keepdm = true}), "sum: unknown option 'keepdm' (did you mean 'keepdim'?)")
  check_eq(err_of(x.add, x, x, {alpah = 2}), "add: unknown option 'alpah' (did you mean 'alpha'?)")
end)

test("far from every name: the valid names are listed; no options: said so", function()
  check_eq(err_of(torch.zeros, 2, {colour = 1}),
           "zeros: unknown option 'colour' (valid options: 'dtype', 'device' or 'requires_grad')")
  local x = torch.ones(2, 3)
  check_eq(err_of(x.t, x, {foo = 1}), "t: unknown option 'foo' (t takes no options)")
  check_eq(err_of(x.exp_, x, {out = x}), "exp_: unknown option 'out' (exp_ takes no options)")
end)

test("the position is the caller's line and the session goes on", function()
  local line = debug.getinfo(1, "l").currentline + 1
  local ok, e = pcall(function() return torch.ones(2, {dtyp = torch.float64}) end)
  check(not ok and e:find("test_options.lua:" .. line .. ": ones: unknown option 'dtyp'", 1, true) ~= nil, e)
  check_eq(torch.ones(2, {dtype = torch.float64}).dtype, torch.float64)
  -- a C op called through a C wrapper (the JIT's and the profiler's op
  -- wrappers are such): the position is still the Lua caller's
  local wrapped = torch._profiler.wrap(torch.ones, "ones")
  line = debug.getinfo(1, "l").currentline + 1
  ok, e = pcall(function() local t = wrapped(2, {dtyp = 1}) return t end)
  check(not ok and e:find("test_options.lua:" .. line .. ": ones: unknown option 'dtyp'", 1, true) ~= nil, e)
end)

test("data tables and non-option tables pass", function()
  check_eq(torch.typename({a = 1}), "table") -- declared as data (MTL_DATA)
  check_shape(torch.zeros({2, 3}), {2, 3}) -- a list, not options
  check_shape(torch.tensor({{1, 2}, {3, 4}}), {2, 2})
  local x = torch.ones(2, 3)
  check_shape(x:view(torch.Size and x.shape or {2, 3}), {2, 3}) -- a Size (metatable) is no options table
end)

test("torch._check_options and _check_choice serve the Lua functions", function()
  local o = {lr = 1}
  check(torch._check_options("optim.X", o, "lr momentum") == o)
  check(torch._check_options("optim.X", o, {"lr", "momentum"}) == o)
  check_eq(err_of(torch._check_options, "optim.X", {lt = 1}, {"lr", "momentum"}),
           "optim.X: unknown option 'lt' (did you mean 'lr'?)")
  check_eq(torch._check_choice("F.x", "mode", "sum", "mean sum none"), "sum")
  check_eq(err_of(torch._check_choice, "F.x", "reduction", "meen", "mean sum none"),
           "F.x: unknown reduction 'meen' (did you mean 'mean'? expected 'mean', 'sum' or 'none')")
  check_eq(err_of(torch._check_choice, "F.x", "mode", 3, "a b"), "F.x: mode must be a string, got number (expected 'a' or 'b')")
  check_eq(torch._closest("batchsize", "batch_size shuffle"), "batch_size")
  check_eq(torch._closest("zzz", "batch_size shuffle"), nil)
end)

test("every option a registered C function reads is declared in its row (the audit walk)", function()
  local p = io.popen(("%q %q 2>&1"):format(exe, here .. "options_walk.lua"))
  local out = p:read("a")
  p:close()
  check(out:find("\nDONE") ~= nil, "the walk did not finish:\n" .. out:sub(-2000))
  local undeclared = {}
  for line in out:gmatch("UNDECLARED ([^\n]*)") do undeclared[#undeclared + 1] = line end
  check(#undeclared == 0, "read but not declared: " .. table.concat(undeclared, ", "))
  local reads, fns = tonumber(out:match("READS (%d+)")), tonumber(out:match("FUNCTIONS (%d+)"))
  check(reads and reads >= 400, "the walk saw too few option reads: " .. tostring(reads))
  check(fns and fns >= 350, "the walk found too few registered functions: " .. tostring(fns))
end)
