-- tests/repl/test_pprint.lua -- torch.pformat (lua_bindings/l_pprint.c), the
-- text the REPL auto-prints: nested tables with sorted keys, tensors
-- summarized, long tables elided with a count, cycles marked, __tostring
-- honoured, and nothing but __tostring run.

local P = torch.pformat
-- the summary's device suffix when the suite runs on a GPU
local dev = DEVICE == "cpu" and "" or " " .. DEVICE .. ":0"

local function lines(s)
  local n = 1
  for _ in s:gmatch("\n") do n = n + 1 end
  return n
end

test("a list prints on one line", function()
  check_eq(P({1, 2, 3}), "{1, 2, 3}")
  check_eq(P({}), "{}")
  check_eq(P({"a", true, 1.5}), '{"a", true, 1.5}')
end)

test("values outside tables print as print shows them", function()
  check_eq(P("plain"), "plain")
  check_eq(P(42), "42")
  check_eq(P(nil), "nil")
  check_eq(P(torch.ones(2)), tostring(torch.ones(2)))
end)

test("a state dict: keys sorted, tensors summarized", function()
  local sd = nn.Linear(3, 4):state_dict()
  check_eq(P(sd), "{bias: Tensor 4 float32" .. dev .. ", weight: Tensor 4x3 float32" .. dev .. "}")
end)

test("parameters show requires_grad; 0-dim tensors show their value", function()
  local ps = nn.Linear(3, 4):parameters()
  check_eq(P(ps), "{Tensor 4x3 float32" .. dev .. " requires_grad, Tensor 4 float32" .. dev .. " requires_grad}")
  check_eq(P({loss = torch.tensor(2.5, {dtype = torch.float64})}),
           "{loss: " .. tostring(torch.tensor(2.5, {dtype = torch.float64})) .. "}")
  check_eq(P({torch.zeros(0, 3, {dtype = torch.int64})}), "{Tensor 0x3 int64" .. dev .. "}")
end)

test("numbered keys sort as numbers (layer2 before layer10)", function()
  local t = {}
  for i = 1, 12 do t["layer" .. i .. ".w"] = i end
  local s = P(t, {max_items = 100})
  check(s:find("layer2.w: 2", 1, true) < s:find("layer10.w: 10", 1, true), s)
  check(s:find("layer9.w", 1, true) < s:find("layer10.w", 1, true), s)
end)

test("array part first, then numbers, strings, other keys", function()
  check_eq(P({7, 8, [10] = 1, [2.5] = 2, z = 6, ["a b"] = 5, ["1"] = 4, [true] = 3}),
           '{7, 8, [2.5]: 2, [10]: 1, "1": 4, "a b": 5, z: 6, [true]: 3}')
end)

test("a cycle is marked with the path of the table it returns to", function()
  local t = {a = 1, b = {c = 2}}
  t.b.back = t
  t.self = t
  check_eq(P(t), "{a: 1, b: {back: <cycle: root>, c: 2}, self: <cycle: root>}")
  local u = {x = {y = {}}}
  u.x.y.up = u.x
  check_eq(P(u), "{x: {y: {up: <cycle: root.x>}}}")
end)

test("a table under a number key keeps the number key", function()
  check_eq(P({[10] = {}, [2.5] = {1}}), "{[2.5]: {1}, [10]: {}}")
  local t = {[7] = {}}
  t[7].up = t[7]
  check_eq(P(t), "{[7]: {up: <cycle: root[7]>}}")
end)

test("a table shared but not cyclic prints each time", function()
  local shared = {1}
  check_eq(P({shared, shared}), "{{1}, {1}}")
end)

test("a long list is elided with a count of what is left out", function()
  local t = {}
  for i = 1, 100 do t[i] = i end
  local s = P(t)
  check(s:find("... (80 more)", 1, true), s)
  check(s:find("{\n  1, 2, 3", 1, true) and s:find("99, 100\n}", 1, true), s)
  check(not s:find(" 50,", 1, true), s)
end)

test("a state dict of 100 parameters stays short and quick", function()
  local m = nn.Sequential()
  for _ = 1, 50 do m:append(nn.Linear(8, 8)) end
  local t0 = torch.time()
  local s = P(m:state_dict())
  check(torch.time() - t0 < 0.05, "took " .. (torch.time() - t0) .. " s")
  check(lines(s) <= 24, s)
  check(s:find("1.bias: Tensor 8 float32", 1, true), s)
  check(s:find("50.weight: Tensor 8x8 float32", 1, true), s)
  check(s:find("... (80 more)", 1, true), s)
  check(s:find("1.weight: Tensor 8x8 float32" .. dev .. ",\n  2.bias", 1, true), s) -- 2 before 10
end)

test("huge tables print quickly and briefly", function()
  local t = {}
  for i = 1, 200000 do t["k" .. i] = i end
  for i = 1, 1000 do t[i] = i end
  local t0 = torch.time()
  local s = P(t)
  check(torch.time() - t0 < 2, "took " .. (torch.time() - t0) .. " s")
  check(s:find("... (200980 more)", 1, true), s)
  check(s:find("k199999: 199999", 1, true) and s:find("k200000: 200000", 1, true), s) -- the last keys in order
end)

test("the output as a whole stays bounded", function()
  local t = {}
  for i = 1, 30 do
    t[i] = {}
    for j = 1, 30 do t[i][j] = {j} end
  end
  check(lines(P(t)) < 450)
end)

test("tables deeper than depth are folded with their size", function()
  check_eq(P({a = {b = {c = {d = {e = {f = 1, g = 2}}}}}}), "{a: {b: {c: {d: {e: {... 2 entries}}}}}}")
  check_eq(P({a = {b = {1}}}, {depth = 2}), "{a: {b: {... 1 entry}}}")
end)

test("objects with __tostring print through it, multi-line ones indented", function()
  local s = P({m = nn.Sequential(nn.Linear(2, 2), nn.ReLU()), dt = torch.float32})
  check_eq(s, "{\n  dt: torch.float32,\n  m: Sequential(\n    (1): Linear(in_features=2, out_features=2, bias=true)\n"
              .. "    (2): ReLU()\n  )\n}")
  local bad = setmetatable({}, {__tostring = function() error("broken") end})
  check(P({bad}):find("<error in __tostring:", 1, true), P({bad}))
end)

test("a class without __tostring shows its __name and fields", function()
  local obj = setmetatable({x = 1}, {__name = "Point"})
  check_eq(P({obj}), "{Point {x: 1}}")
end)

test("only __tostring runs: no __index, __pairs or __len", function()
  local trap = function() error("must not run") end
  local t = setmetatable({1, 2, k = "v"}, {__index = trap, __pairs = trap, __len = trap, __newindex = trap})
  check_eq(P(t), '{1, 2, k: "v"}')
end)

test("strings inside tables are quoted, escaped and cut when long", function()
  check_eq(P({s = 'a\n"b"\t'}), [[{s: "a\n\"b\"\t"}]])
  local s = P({long = string.rep("x", 300)})
  check(s:find('..." (300 bytes)', 1, true), s)
  for line in s:gmatch("[^\n]+") do check(#line <= 80, line) end
end)

test("wide tables break into lines within the width", function()
  local t = {}
  for i = 1, 15 do t["name" .. i] = "value number " .. i end
  local s = P(t, {max_items = 100})
  for line in s:gmatch("[^\n]+") do check(#line <= 80, line) end
  check(lines(s) == 17, s)
  check_eq(P({a = 1, b = 2}, {width = 20}), "{a: 1, b: 2}")
end)

test("options are checked", function()
  check_error(function() P({}, {widht = 10}) end, "unknown option 'widht'")
  check_error(function() P({}, {depth = 0}) end, "depth must be in")
end)

test("torch.pprint prints what pformat returns", function()
  local exe = arg and arg[-1] or "build/moontorch"
  local p = io.popen(exe .. [[ -e "torch.pprint({b = 2, a = {1}}, 'x')"]])
  local out = p:read("a")
  p:close()
  check_eq(out, "{a: {1}, b: 2}\tx\n")
end)
