-- tests/io/test_safetensors.lua -- torch.save / torch.load (tensor/io/
-- safetensors.c, st_file.c, fileio.c; lua_bindings/l_serialize.c,
-- l_structure.c): round trips of every dtype, views and nested tables against
-- literal values; files written and read by an independent Python reader and
-- writer (tests/io/st_interop.py, PyTorch's own float16/bfloat16 rounding);
-- one error per kind of corrupt file; atomic replacement under SIGKILL.

local dir = os.tmpname()
os.remove(dir)
assert(os.execute("mkdir -p '" .. dir .. "'"))
local function P(name) return dir .. "/" .. name end

-- removes first: rewriting a truncated file makes ext4 flush it (auto_da_alloc)
local function write_bytes(path, s)
  os.remove(path)
  local f = assert(io.open(path, "wb"))
  f:write(s)
  f:close()
end

local function read_bytes(path)
  local f = assert(io.open(path, "rb"))
  local s = f:read("a")
  f:close()
  return s
end

-- a safetensors image from a header text and the data bytes
local function image(header, data)
  return string.pack("<I8", #header) .. header .. (data or "")
end

local function flat(t) return t:flatten():totable() end

-- ---------------------------------------------------------------- round trips

test("torch.save and torch.load have help texts", function()
  check((torch._helptext(torch.save) or ""):find("torch.save(obj, path)", 1, true), "save")
  check((torch._helptext(torch.load) or ""):find("torch.load(path)", 1, true), "load")
end)

test("every dtype round-trips with its values, shape and dtype", function()
  local cases = {
    {torch.float32, {{1.5, -2.25, 2 ^ 127 * 1.5}, {2 ^ -140, math.huge, -0.0}}},
    {torch.float64, {math.pi, -1e300, 5e-324}},
    {torch.float16, {1, 65504, 2 ^ -24, -0.0, -math.huge, 0.333251953125}},
    {torch.bfloat16, {1, -3.140625, 2 ^ -133, math.huge}},
    {torch.int8, {-128, 127, 0}},
    {torch.int16, {-32768, 32767, 258}},
    {torch.int32, {-2147483648, 2147483647}},
    {torch.int64, {math.mininteger, math.maxinteger, 1099511627777}},
    {torch.uint8, {0, 255, 128}},
    {torch.bool, {true, false, true}},
  }
  local sd = {}
  for i, c in ipairs(cases) do sd["t" .. i] = torch.tensor(c[2], {dtype = c[1]}) end
  torch.save(sd, P("dtypes.safetensors"))
  local back = torch.load(P("dtypes.safetensors"))
  for i, c in ipairs(cases) do
    local t = back["t" .. i]
    check(t ~= nil, "tensor t" .. i .. " missing")
    check_eq(t.dtype, c[1], "dtype of t" .. i)
    check_eq(t:totable(), c[2], tostring(c[1]) .. " values")
  end
  check(1 / back.t1:totable()[2][3] == -math.huge, "-0.0 keeps its sign")
end)

test("a lone tensor round-trips as a tensor, also 0-dim and empty ones", function()
  torch.save(torch.tensor({{1, 2}, {3, 4}}, {dtype = torch.int32}), P("lone.safetensors"))
  local t = torch.load(P("lone.safetensors"))
  check(torch.is_tensor(t), "a tensor comes back")
  check_eq(t:totable(), {{1, 2}, {3, 4}})
  torch.save(torch.tensor(2.5), P("scalar.safetensors"))
  local s = torch.load(P("scalar.safetensors"))
  check_eq(s:dim(), 0)
  check_eq(s:item(), 2.5)
  torch.save(torch.zeros(0, 3), P("empty.safetensors"))
  check_shape(torch.load(P("empty.safetensors")), {0, 3})
end)

test("views and non-contiguous tensors are saved as their contiguous content", function()
  local base = torch.arange(12):view(3, 4)
  torch.save({
    t = base:t(),
    narrow = base:narrow(2, 2, 2),
    step = base[{{}, {1, 4, 2}}],
    expanded = torch.tensor({1, 2}):expand(3, 2),
    row = base[2],
  }, P("views.safetensors"))
  local r = torch.load(P("views.safetensors"))
  check_eq(r.t:totable(), {{0, 4, 8}, {1, 5, 9}, {2, 6, 10}, {3, 7, 11}})
  check_eq(r.narrow:totable(), {{1, 2}, {5, 6}, {9, 10}})
  check_eq(r.step:totable(), {{0, 2}, {4, 6}, {8, 10}})
  check_eq(r.expanded:totable(), {{1, 2}, {1, 2}, {1, 2}})
  check_eq(r.row:totable(), {4, 5, 6, 7})
  check(r.t:is_contiguous() and r.expanded:is_contiguous(), "loaded tensors are contiguous")
  -- the file holds exactly the elements of the views: 12+6+6+6+4 int64 values
  local bytes = read_bytes(P("views.safetensors"))
  local n = string.unpack("<I8", bytes)
  check_eq(#bytes - 8 - n, (12 + 6 + 6 + 6 + 4) * 8, "data buffer size")
end)

test("tensors sharing storage are saved as separate tensors", function()
  local x = torch.arange(6):float()
  torch.save({a = x, b = x:narrow(1, 3, 2)}, P("shared.safetensors"))
  local r = torch.load(P("shared.safetensors"))
  r.a:fill_(-1)
  check_eq(r.b:totable(), {2.0, 3.0}, "b does not alias a after loading")
end)

test("nested tables keep structure, integer/float kinds, strings, booleans and special floats", function()
  local w = torch.tensor({{1, 2}, {3, 4}}, {dtype = torch.float64})
  local obj = {
    model = {layer1 = {weight = w, bias = torch.tensor({0.5, -0.5})}},
    optim = {lr = 1e-3, step = 10, betas = {0.9, 0.999}, state = {{exp_avg = torch.zeros(2)}}},
    name = "run \"1\"\n\tüñí",
    bin = "\0\1\255\254 binary",
    flags = {true, false},
    special = {math.huge, -math.huge, -0.0, 0.1, 2 ^ 53, math.mininteger, math.maxinteger},
    [7] = "seven", [2.5] = "two and a half", [true] = "yes",
    empty = {},
    tied = w,
  }
  torch.save(obj, P("nested.safetensors"))
  local r = torch.load(P("nested.safetensors"))
  check_eq(r.model.layer1.weight:totable(), {{1, 2}, {3, 4}})
  check_eq(r.model.layer1.weight.dtype, torch.float64)
  check_eq(r.model.layer1.bias:totable(), {0.5, -0.5})
  check_eq(r.optim.lr, 1e-3)
  check_eq(math.type(r.optim.step), "integer")
  check_eq(math.type(r.optim.lr), "float")
  check_eq(r.optim.betas, {0.9, 0.999})
  check_eq(r.optim.state[1].exp_avg:totable(), {0, 0})
  check_eq(r.name, obj.name)
  check_eq(r.bin, obj.bin)
  check_eq(r.flags, {true, false})
  check_eq(#r.special, 7)
  check(r.special[1] == math.huge and r.special[2] == -math.huge, "infinities")
  check(1 / r.special[3] == -math.huge, "-0.0")
  check_eq(r.special[4], 0.1)
  check_eq(math.type(r.special[5]), "float")
  check_eq(r.special[6], math.mininteger)
  check_eq(r.special[7], math.maxinteger)
  check_eq(r[7], "seven")
  check_eq(r[2.5], "two and a half")
  check_eq(r[true], "yes")
  check_eq(r.empty, {})
  check(rawequal(r.tied, r.model.layer1.weight), "one tensor referenced twice loads as one tensor")
  torch.save({nan = 0 / 0}, P("nan.safetensors"))
  local v = torch.load(P("nan.safetensors")).nan
  check(v ~= v, "nan")
end)

test("random floats, integers and byte strings in tables come back exactly", function()
  math.randomseed(99)
  local floats, ints, strs = {}, {}, {}
  for i = 1, 2000 do
    local bits = {}
    for k = 1, 8 do bits[k] = string.char(math.random(0, 255)) end
    local d = string.unpack("<d", table.concat(bits))
    floats[i] = d == d and d or 0.5 -- nan has no identity to compare
    ints[i] = math.random(math.mininteger, math.maxinteger)
    local n = math.random(0, 12)
    local c = {}
    for k = 1, n do c[k] = string.char(math.random(0, 255)) end
    strs[i] = table.concat(c)
  end
  floats[#floats + 1] = 2 ^ -1074
  floats[#floats + 1] = 1.7976931348623157e308
  floats[#floats + 1] = 2.0 ^ 63
  torch.save({floats = floats, ints = ints, strs = strs}, P("random.safetensors"))
  local r = torch.load(P("random.safetensors"))
  for i, d in ipairs(floats) do
    local g = r.floats[i]
    if not (math.type(g) == "float" and g == d and (d ~= 0 or 1 / g == 1 / d)) then
      error(("float %d: saved %.17g, loaded %s"):format(i, d, tostring(g)))
    end
  end
  for i, v in ipairs(ints) do check(math.type(r.ints[i]) == "integer" and r.ints[i] == v, "integer " .. i) end
  for i, v in ipairs(strs) do check(r.strs[i] == v, "string " .. i) end
end)

test("a flat name->tensor table is a plain state dict: tensor names are its keys, no metadata", function()
  torch.save({["encoder.weight"] = torch.ones(2, 2), ["encoder.bias"] = torch.zeros(2)}, P("sd.safetensors"))
  local bytes = read_bytes(P("sd.safetensors"))
  local n = string.unpack("<I8", bytes)
  local header = bytes:sub(9, 8 + n)
  check(not header:find("__metadata__", 1, true), "no metadata in a plain state dict")
  check(header:find('"encoder.weight":{"dtype":"F32","shape":[2,2],"data_offsets":[', 1, true), header)
  check_eq((8 + n) % 8, 0, "data starts 8-byte aligned")
  local r = torch.load(P("sd.safetensors"))
  check_eq(r["encoder.weight"]:totable(), {{1, 1}, {1, 1}})
end)

test("saving the same object twice gives identical files", function()
  local obj = {b = torch.ones(2), a = {3, 2, 1}, c = {x = 1, y = 2, [1] = 0, [2.5] = 1, [false] = 0}}
  torch.save(obj, P("same1.safetensors"))
  torch.save(obj, P("same2.safetensors"))
  check(read_bytes(P("same1.safetensors")) == read_bytes(P("same2.safetensors")), "deterministic output")
end)

test("torch.save replaces an existing file", function()
  torch.save(torch.ones(3), P("replace.safetensors"))
  torch.save(torch.zeros(2), P("replace.safetensors"))
  check_eq(torch.load(P("replace.safetensors")):totable(), {0, 0})
end)

-- ---------------------------------------------------------------- save errors

test("values that cannot be saved are errors naming torch.save and where they are", function()
  check_error(function() torch.save({a = {f = print}}, P("x")) end, "torch.save: cannot save a function (at a.f)")
  check_error(function() torch.save({io.stdout}, P("x")) end, "cannot save a userdata (at 1)")
  local cyc = {}
  cyc.self = cyc
  check_error(function() torch.save({c = cyc}, P("x")) end, "contains itself")
  check_error(function() torch.save({[{}] = 1}, P("x")) end, "table keys must be strings, numbers or booleans")
  check_error(function() torch.save(42, P("x")) end, "torch.save: expected a tensor or a table")
  check_error(function() torch.save(torch.ones(1)) end, "torch.save: argument #2 must be a file path")
  check_error(function() torch.save(torch.ones(1), P("no/such/dir/x.safetensors")) end,
    "torch.save: " .. P("no/such/dir/x.safetensors") .. ": cannot create")
  local deep = {}
  local t = deep
  for _ = 1, 150 do t.x = {}; t = t.x end
  check_error(function() torch.save(deep, P("x")) end, "nested deeper than")
  check(io.open(P("x")) == nil, "nothing written by failed saves")
end)

-- ---------------------------------------------------------------- load errors

local function load_error(bytes, needle)
  local path = P("bad.safetensors")
  write_bytes(path, bytes)
  local err = check_error(function() return torch.load(path) end, needle)
  check(err:find("torch.load: " .. path .. ": ", 1, true), "message names torch.load and the path: " .. err)
end

local T = '"t":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}'
local DATA8 = string.rep("\0", 8)

test("corrupt files: sizes of the file and header", function()
  check_error(function() torch.load(P("does-not-exist")) end, "torch.load: " .. P("does-not-exist") .. ": cannot open")
  check_error(function() torch.load(dir) end, "torch.load: " .. dir .. ": cannot read")
  check_error(function() torch.load(7) end, "torch.load: argument #1 must be a file path")
  if os.execute("mkfifo '" .. P("fifo") .. "' 2>/dev/null") then
    check_error(function() torch.load(P("fifo")) end, "torch.load: " .. P("fifo") .. ": cannot read: not a regular file")
  end
  load_error("", "too short (0 bytes)")
  load_error("\1\0\0", "too short (3 bytes)")
  load_error(string.pack("<I8", 1 << 40) .. "{}", "larger than the limit")
  load_error(string.pack("<I8", -1) .. "{}", "larger than the limit")
  load_error(string.pack("<I8", 100) .. "{" .. T .. "}", "runs past the end of the file")
  load_error(string.pack("<I8", 0), "too small")
end)

test("corrupt files: the JSON header", function()
  load_error(image('{' .. T, DATA8), "invalid JSON")
  load_error(image('[' .. T .. ']', DATA8), "does not start with '{'")
  load_error(image('{' .. T .. ',' .. T .. '}', DATA8), "duplicate key \"t\"")
  load_error(image('{"t":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}} x', DATA8), "unexpected text after the value")
  load_error(image('{"t\255":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}', DATA8), "invalid UTF-8")
  load_error(image('{"t\n":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}', DATA8), "control character")
  load_error(image('{"t":' .. string.rep("[", 600) .. string.rep("]", 600) .. '}', ""), "nesting too deep")
  load_error(image('{"t":{"dtype":"F32","shape":[2],"data_offsets":[0,1e30]}}', DATA8), "data_offsets must be two non-negative integers")
  load_error(image('{"t":{"dtype":"F32","shape":[2],"data_offsets":[0,99999999999999999999]}}', DATA8), "data_offsets must be")
  load_error(image('{"t":5}', ""), "description is not a JSON object")
  load_error(image('{"t":{"shape":[2],"data_offsets":[0,8]}}', DATA8), "missing field 'dtype'")
  load_error(image('{"__metadata__":{"a":1},' .. T .. '}', DATA8), "__metadata__ value of 'a' is not a string")
  load_error(image('{"__metadata__":[],' .. T .. '}', DATA8), "__metadata__ is not a JSON object")
end)

test("header strings: escapes and surrogate pairs decode, lone surrogates are errors", function()
  local path = P("esc.safetensors")
  write_bytes(path, image('{"\\ud83d\\ude00\\u00e9\\/\\b\\"":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}}', "\7"))
  local r = torch.load(path)
  check_eq(r["\u{1F600}\u{e9}/\b\""]:totable(), {7})
  load_error(image('{"\\ud83d":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}}', "\7"), "unpaired surrogate")
  load_error(image('{"\\ude00x":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}}', "\7"), "unpaired surrogate")
  load_error(image('{"\\u12":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}}', "\7"), "bad \\u escape")
  load_error(image('{"\\q":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}}', "\7"), "bad escape in string")
  load_error(image('{"\192\128":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}}', "\7"), "invalid UTF-8")
end)

test("corrupt files: dtypes, shapes and offsets", function()
  load_error(image('{"t":{"dtype":"F17","shape":[2],"data_offsets":[0,8]}}', DATA8), "unknown dtype 'F17'")
  load_error(image('{"t":{"dtype":"U32","shape":[2],"data_offsets":[0,8]}}', DATA8), "dtype U32 is not supported")
  load_error(image('{"t":{"dtype":3,"shape":[2],"data_offsets":[0,8]}}', DATA8), "dtype is not a string")
  load_error(image('{"t":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}}', DATA8), "hold 8 bytes, but shape 3 of F32 needs 12")
  load_error(image('{"t":{"dtype":"F32","shape":[-2],"data_offsets":[0,8]}}', DATA8), "shape must be a list of non-negative integers")
  load_error(image('{"t":{"dtype":"F32","shape":"2","data_offsets":[0,8]}}', DATA8), "shape must be a list")
  load_error(image('{"t":{"dtype":"F32","shape":[1,1,1,1,1,1,1,1,2],"data_offsets":[0,8]}}', DATA8), "9 dimensions")
  load_error(image('{"t":{"dtype":"F64","shape":[4611686018427387904,4],"data_offsets":[0,8]}}', DATA8), "overflows")
  load_error(image('{"t":{"dtype":"F32","shape":[2],"data_offsets":[8,0]}}', DATA8), "end before they begin")
  load_error(image('{"t":{"dtype":"F32","shape":[2],"data_offsets":[0]}}', DATA8), "data_offsets must be two")
  load_error(image('{"t":{"dtype":"F32","shape":[2],"data_offsets":[8,16]}}', DATA8), "run past the end of the data")
  load_error(image('{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}}',
    string.rep("\0", 12)), "tensors 'a' and 'b' overlap")
  load_error(image('{"t":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}', DATA8), "bytes 0..4 of the data belong to no tensor")
  load_error(image('{' .. T .. '}', DATA8 .. "garbage"), "7 bytes of trailing data")
  load_error(image('{}', "x"), "1 bytes of trailing data")
end)

test("corrupt files: the nested-table description", function()
  local function meta(s)
    return image('{"__metadata__":{"moontorch.structure":' .. s .. '},' .. T .. '}', DATA8)
  end
  load_error(meta('"{\\"version\\":1,\\"root\\":{\\"tensor\\":\\"u\\"}}"'), "refers to a tensor 'u' that is not in the file")
  load_error(meta('"{\\"version\\":1,\\"root\\":{\\"code\\":\\"os.exit()\\"}}"'), "bad structure metadata (unknown tag)")
  load_error(meta('"{\\"version\\":9,\\"root\\":1}"'), "newer moontorch")
  load_error(meta('"{\\"root\\":1}"'), "bad structure metadata")
  load_error(meta('"not json"'), "bad structure metadata: invalid JSON")
  load_error(meta('"{\\"version\\":1,\\"root\\":{\\"map\\":[[{\\"list\\":[]},1]]}}"'), "map keys must be")
  load_error(meta('"{\\"version\\":1,\\"root\\":{\\"map\\":[[1]]}}"'), "[key, value] pairs")
  load_error(meta('"{\\"version\\":1,\\"root\\":{\\"bytes\\":\\"abc\\"}}"'), "odd number of hex digits")
  load_error(meta('"{\\"version\\":1,\\"root\\":null}"'), "null is not a value")
end)

test("every truncation of a valid file is an error, never a crash", function()
  torch.save({w = torch.ones(3, 3), meta = {step = 1, tag = "x"}}, P("full.safetensors"))
  local bytes = read_bytes(P("full.safetensors"))
  for k = 0, #bytes - 1 do
    write_bytes(P("cut.safetensors"), bytes:sub(1, k))
    local ok = pcall(torch.load, P("cut.safetensors"))
    check(not ok, "a file cut to " .. k .. " bytes loaded")
  end
end)

test("bool bytes other than 0 and 1 load as true", function()
  write_bytes(P("bool.safetensors"), image('{"b":{"dtype":"BOOL","shape":[3],"data_offsets":[0,3]}}', "\0\2\255"))
  check_eq(torch.load(P("bool.safetensors")).b:totable(), {false, true, true})
end)

-- ---------------------------------------------------------------- interop with PyTorch

local function python_with_torch()
  if not io.open("/usr/bin/python3") then return false end
  return os.execute("cd /tmp && /usr/bin/python3 -c 'import torch' >/dev/null 2>&1") == true
end

local script_dir = debug.getinfo(1, "S").source:match("^@(.*)/[^/]*$") or "tests/io"
if script_dir:sub(1, 1) ~= "/" then
  local pwd = io.popen("pwd")
  script_dir = pwd:read("l") .. "/" .. script_dir
  pwd:close()
end

if not python_with_torch() then
  io.write("note: /usr/bin/python3 with torch not found; safetensors interop tests skipped\n")
else
  -- our files for the Python reader
  local src = torch.tensor({1 / 3, 65504, 65520, 1e-7, 6e-8, 2 ^ -25, 2 ^ -24 * 1.5, -0.0, math.huge, -math.huge,
    3.14159, 1e38, 3.4e38, 3.5e38, 1 + 2 ^ -11, 1 + 3 * 2 ^ -11, 1 + 2 ^ -8, 1 + 3 * 2 ^ -8, 0.1, 2 ^ -149,
    2 ^ -150, 1e-45, -7.5e-39, 1234.5678}, {dtype = torch.float64})
  torch.save({src = src, half = src:half(), bf16 = src:bfloat16(), f32 = src:float(),
    i64 = torch.tensor({math.mininteger, math.maxinteger, -1}), u8 = torch.tensor({0, 200, 255}, {dtype = torch.uint8}),
    i8 = torch.tensor({-128, 5}, {dtype = torch.int8}), i16 = torch.tensor({-300, 300}, {dtype = torch.int16}),
    i32 = torch.tensor({-70000, 70000}, {dtype = torch.int32}), flags = torch.tensor({false, true}),
    tview = torch.arange(12):view(3, 4):t()}, P("ours.safetensors"))
  torch.save({model = {w = torch.ones(2)}, step = 3}, P("ours_nested.safetensors"))
  torch.save(torch.eye(2), P("ours_lone.safetensors"))
  local cmd = ("cd /tmp && /usr/bin/python3 '%s/st_interop.py' '%s' '%s' '%s' '%s' 2>&1"):format(script_dir, dir,
    P("ours.safetensors"), P("ours_nested.safetensors"), P("ours_lone.safetensors"))
  local p = io.popen(cmd)
  local out = p:read("a")
  p:close()
  local chunk = load(out, "st_interop.py", "t", {math = math})
  local py = chunk and chunk()

  test("the Python reference ran", function() check(py ~= nil, "st_interop.py failed:\n" .. out) end)

  if py then
    test("files written by the reference writer load with PyTorch's dtypes, shapes and values", function()
      for fname, tensors in pairs(py.written) do
        local r = torch.load(P(fname))
        for name, want in pairs(tensors) do
          local t = r[name]
          check(t ~= nil, fname .. ": " .. name .. " missing")
          check_eq(t.dtype.name, want.dtype, name .. " dtype")
          check_eq(t:size(), setmetatable(want.shape, getmetatable(t:size())), name .. " shape")
          local got = flat(t)
          check_eq(#got, #want.values, name .. " count")
          for i, w in ipairs(want.values) do
            local g = got[i]
            if type(w) == "number" and w ~= w then check(g ~= g, name .. " nan")
            else
              check(g == w and (w ~= 0 or type(w) ~= "number" or 1 / g == 1 / w),
                ("%s value %d: want %s got %s"):format(name, i, tostring(w), tostring(g)))
            end
          end
        end
      end
    end)

    test("float16 and bfloat16 bit patterns from PyTorch: 1, max, subnormals, -0, infinities", function()
      local f = py.written["py_dtypes.safetensors"]
      check_eq(f.f16.bits, {0x3C00, 0x7BFF, 0x0001, 0x8000, 0x7C00, 0xFC00, 0x3555, 0xC000, 0x03FF})
      check_eq(f.bf16.bits, {0x3F80, 0x7F7F, 0x0001, 0x8000, 0x7F80, 0xFF80, 0x3EAB, 0xC049, 0x0080})
      local r = torch.load(P("py_dtypes.safetensors"))
      check_eq(flat(r.f16:float()), f.f16.values)
      check_eq(flat(r.bf16:float()), f.bf16.values)
    end)

    test("our files pass the independent reader's checks, with our names, dtypes, shapes and values", function()
      local f = py.read[P("ours.safetensors")]
      check(not f.error, f.error)
      check_eq(f.data_start % 8, 0, "data 8-byte aligned")
      check_eq(f.metadata, {}, "a flat state dict has no metadata")
      local t = f.tensors
      check_eq(t.i64.values, {math.mininteger, math.maxinteger, -1})
      check_eq(t.u8.values, {0, 200, 255})
      check_eq(t.i8.values, {-128, 5})
      check_eq(t.i16.values, {-300, 300})
      check_eq(t.i32.values, {-70000, 70000})
      check_eq(t.flags.values, {false, true})
      check_eq(t.tview.shape, {4, 3})
      check_eq(t.tview.values, {0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11})
      check_eq(t.src.dtype, "float64")
      check_eq(t.half.dtype, "float16")
      check_eq(t.bf16.dtype, "bfloat16")
    end)

    test("our float16, bfloat16 and float32 roundings match PyTorch's bit for bit", function()
      local rd = py.read[P("ours.safetensors")].rounding
      for _, k in ipairs({"half", "bf16", "f32"}) do
        check(rd[k] and rd[k].checked == 24, k .. " checked")
        check(#rd[k].bad == 0, k .. ": " .. table.concat(rd[k].bad, "; "))
      end
    end)

    test("nested checkpoints and lone tensors are plain safetensors files for PyTorch", function()
      local n = py.read[P("ours_nested.safetensors")]
      check(not n.error, n.error)
      check_eq(n.tensors["model.w"].values, {1.0, 1.0})
      check(type(n.metadata["moontorch.structure"]) == "string", "structure kept as a metadata string")
      local l = py.read[P("ours_lone.safetensors")]
      check(not l.error, l.error)
      check_eq(l.tensors.tensor.values, {1.0, 0.0, 0.0, 1.0})
    end)
  end
end

-- ---------------------------------------------------------------- atomic writes under SIGKILL

local exe = arg and arg[-1]
if not (exe and exe:match("moontorch$")) then
  io.write("note: not running under the moontorch executable; the SIGKILL test is skipped\n")
else
  test("a writer killed at random times never leaves a broken checkpoint (50 trials)", function()
    local path = P("ckpt.safetensors")
    local child = P("writer.lua")
    write_bytes(child, [[
      local path, base = arg[1], tonumber(arg[2])
      for i = base, base + 100000 do
        torch.save({step = i, w = torch.full({128, 128}, i, {dtype = torch.float64}), tag = "s" .. i}, path)
      end
    ]])
    torch.save({step = 0, w = torch.full({128, 128}, 0, {dtype = torch.float64}), tag = "s0"}, path)
    math.randomseed(1234)
    local last = 0
    for trial = 1, 50 do
      local base = trial * 1000000
      local p = io.popen(("exec sh -c 'echo $$; exec \"%s\" \"%s\" \"%s\" %d 2>/dev/null'"):format(exe, child, path, base))
      local pid = p:read("l")
      os.execute(("sleep %.3f"):format(0.005 + math.random() * 0.04))
      os.execute("kill -9 " .. pid .. " 2>/dev/null")
      p:close()
      local ok, r = pcall(torch.load, path)
      check(ok, "trial " .. trial .. ": checkpoint unreadable after kill: " .. tostring(r))
      check(math.type(r.step) == "integer" and r.tag == "s" .. r.step, "trial " .. trial .. ": structure intact")
      check(r.w:min():item() == r.step and r.w:max():item() == r.step, "trial " .. trial .. ": data matches its step")
      check(r.step >= last, "trial " .. trial .. ": never goes back to an older checkpoint")
      last = r.step
    end
    -- leftover temporary files (from kills between create and rename) break nothing
    local leftovers = 0
    local ls = io.popen("ls '" .. dir .. "'")
    for f in ls:lines() do if f:match("^ckpt%.safetensors%.tmp%.") then leftovers = leftovers + 1 end end
    ls:close()
    torch.save({step = -1, w = torch.zeros(1), tag = "done"}, path)
    check_eq(torch.load(path).tag, "done", "save and load work beside " .. leftovers .. " leftover temp files")
  end)
end

os.execute("rm -rf '" .. dir .. "'")
