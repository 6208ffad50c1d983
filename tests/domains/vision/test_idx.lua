-- tests/domains/vision/test_idx.lua -- torch.vision.io.read_idx (domains/vision/idx.c, idx_read.c):
-- every idx type code, plain and gzip, against literal values; one error
-- per kind of malformed file; the real Fashion-MNIST files (Debian's
-- dataset-fashion-mnist) against an independent Python reader
-- (tests/domains/vision/idx_ref.py: gzip + struct).

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

-- an idx image: magic 0 0 code ndim, big-endian sizes, payload
local function idx(code, dims, payload)
  local h = string.char(0, 0, code, #dims)
  for _, d in ipairs(dims) do h = h .. string.pack(">I4", d) end
  return h .. payload
end

local function gzip_of(bytes, name)
  write_bytes(P(name), bytes)
  assert(os.execute("gzip -nf '" .. P(name) .. "'"), "gzip failed")
  return read_bytes(P(name .. ".gz"))
end

local function pack_all(fmt, values)
  local s = {}
  for i, v in ipairs(values) do s[i] = string.pack(fmt, v) end
  return table.concat(s)
end

local cases = {
  {0x08, torch.uint8, ">B", {{0, 255, 7}, {128, 1, 2}}},
  {0x09, torch.int8, ">b", {-128, 127, 0, -1}},
  {0x0B, torch.int16, ">i2", {-32768, 32767, 258}},
  {0x0C, torch.int32, ">i4", {-2147483648, 2147483647, 16909060}},
  {0x0D, torch.float32, ">f", {1.5, -0.0, math.huge, 2 ^ -149}},
  {0x0E, torch.float64, ">d", {math.pi, -1e300, 5e-324}},
}

local function flatten(t, out)
  out = out or {}
  for _, v in ipairs(t) do
    if type(v) == "table" then flatten(v, out) else out[#out + 1] = v end
  end
  return out
end

for _, c in ipairs(cases) do
  local code, dt, fmt, values = c[1], c[2], c[3], c[4]
  local dims = type(values[1]) == "table" and {#values, #values[1]} or {#values}
  local bytes = idx(code, dims, pack_all(fmt, flatten(values)))
  test(("type 0x%02X reads as %s, plain and gzip-compressed"):format(code, dt.name), function()
    local name = ("t%02x.idx"):format(code)
    write_bytes(P(name), bytes)
    local t = torch.vision.io.read_idx(P(name))
    check_eq(t.dtype, dt)
    check_eq(t:totable(), values)
    gzip_of(bytes, name)
    local g = torch.vision.io.read_idx(P(name .. ".gz"))
    check_eq(g.dtype, dt)
    check_eq(g:totable(), values)
  end)
end

test("three dimensions, zero-size and 0-dim images", function()
  local vals = {}
  for i = 1, 24 do vals[i] = i - 1 end
  write_bytes(P("3d.idx"), idx(0x08, {2, 3, 4}, pack_all(">B", vals)))
  local t = torch.vision.io.read_idx(P("3d.idx"))
  check_shape(t, {2, 3, 4})
  check_eq(t[2][3]:totable(), {20, 21, 22, 23})
  write_bytes(P("empty.idx"), idx(0x0D, {0, 28}, ""))
  check_shape(torch.vision.io.read_idx(P("empty.idx")), {0, 28})
  write_bytes(P("scalar.idx"), idx(0x0C, {}, string.pack(">i4", -5)))
  local s = torch.vision.io.read_idx(P("scalar.idx"))
  check_eq(s:dim(), 0)
  check_eq(s:item(), -5)
end)

test("gzip files made of several members read as their concatenation", function()
  local bytes = idx(0x08, {6}, "\1\2\3\4\5\6")
  local a, b = gzip_of(bytes:sub(1, 7), "part1"), gzip_of(bytes:sub(8), "part2")
  write_bytes(P("multi.gz"), a .. b)
  check_eq(torch.vision.io.read_idx(P("multi.gz")):totable(), {1, 2, 3, 4, 5, 6})
end)

local function bad(bytes, needle, name)
  local path = P(name or "bad.idx")
  write_bytes(path, bytes)
  local err = check_error(function() return torch.vision.io.read_idx(path) end, needle)
  check(err:find("torch.vision.io.read_idx: " .. path .. ": ", 1, true), "message names the function and path: " .. err)
end

test("malformed headers are errors naming the file", function()
  check_error(function() torch.vision.io.read_idx(P("missing.idx")) end, "torch.vision.io.read_idx: " .. P("missing.idx") .. ": cannot open")
  check_error(function() torch.vision.io.read_idx(dir) end, "it is a directory")
  check_error(function() torch.vision.io.read_idx() end, "torch.vision.io.read_idx: argument #1 must be a file path")
  bad("", "too short (0 bytes)")
  bad("\0\0\8", "too short (3 bytes)")
  bad("\1\0\8\1" .. string.pack(">I4", 1) .. "\0", "bad magic number 01 00 08 01")
  bad("\0\0\7\1" .. string.pack(">I4", 1) .. "\0", "unknown data type code 0x07")
  bad("\0\0\8\9" .. string.rep(string.pack(">I4", 1), 9) .. "\0", "9 dimensions")
  bad("\0\0\8\2" .. string.pack(">I4", 1), "truncated header")
  bad(idx(0x08, {0x80000000}, ""), "dimension 1 has a negative size")
  bad(idx(0x0E, {0x7fffffff, 0x7fffffff, 0x7fffffff}, ""), "overflow")
end)

test("truncated and trailing data are errors", function()
  bad(idx(0x0C, {3}, string.pack(">i4>i4", 1, 2)), "truncated: the header promises 12 bytes of data, the file holds 8")
  bad(idx(0x08, {2}, "\1\2\3"), "1 bytes of trailing data")
  bad(idx(0x08, {60000, 28, 28}, "\0"), "truncated")
end)

test("gzip errors: corrupt, truncated, bad checksum, trailing data, implausible sizes", function()
  local good = gzip_of(idx(0x08, {4, 100}, string.rep("\7\8", 200)), "g.idx")
  check_eq(torch.vision.io.read_idx(P("g.idx.gz")):sum():item(), 200 * 15)
  bad(good:sub(1, #good - 10), "the gzip data is truncated", "trunc.gz")
  bad(good:sub(1, 12), "gzip data", "trunc2.gz")
  bad(good:sub(1, 10) .. string.rep("\255", 8) .. good:sub(19), "the gzip data is corrupt", "corrupt.gz")
  local crc = good:sub(1, #good - 8) .. string.char((good:byte(#good - 7) + 1) % 256) .. good:sub(#good - 6)
  bad(crc, "the gzip data is corrupt (incorrect data check)", "crc.gz")
  bad(good .. "junk", "the gzip data is corrupt", "trailing.gz")
  bad(gzip_of(idx(0x08, {2}, "\1\2\3"), "x.idx"), "trailing data", "tail.gz")
  bad(gzip_of(idx(0x0E, {1 << 30, 1 << 20}, ""), "huge.idx"), "more than", "huge.gz")
end)

-- ---------------------------------------------------------------- Fashion-MNIST

local fm = "/usr/share/datasets/fashion-mnist"
local files = {"train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz", "t10k-images-idx3-ubyte.gz",
  "t10k-labels-idx1-ubyte.gz"}
if not io.open(fm .. "/" .. files[1]) then
  io.write("note: " .. fm .. " not found (Debian package dataset-fashion-mnist); real-file tests skipped\n")
else
  local data = {}
  for _, f in ipairs(files) do data[f] = torch.vision.io.read_idx(fm .. "/" .. f) end

  test("Fashion-MNIST: shapes, dtype, label range and balanced classes", function()
    check_shape(data[files[1]], {60000, 28, 28})
    check_shape(data[files[2]], {60000})
    check_shape(data[files[3]], {10000, 28, 28})
    check_shape(data[files[4]], {10000})
    for _, f in ipairs(files) do check_eq(data[f].dtype, torch.uint8, f) end
    for i, f in ipairs({files[2], files[4]}) do
      check_eq(data[f]:min():item(), 0)
      check_eq(data[f]:max():item(), 9)
      local per_class = i == 1 and 6000 or 1000 -- the data set's documented balance
      for k = 0, 9 do check_eq(data[f]:eq(k):sum():item(), per_class, f .. " class " .. k) end
    end
  end)

  if io.open("/usr/bin/python3") then
    local args = {}
    for i, f in ipairs(files) do args[i] = "'" .. fm .. "/" .. f .. "'" end
    local script = debug.getinfo(1, "S").source:match("^@(.*)/[^/]*$") or "tests/io"
    if script:sub(1, 1) ~= "/" then
      local pwd = io.popen("pwd")
      script = pwd:read("l") .. "/" .. script
      pwd:close()
    end
    local p = io.popen("cd /tmp && /usr/bin/python3 '" .. script .. "/idx_ref.py' " .. table.concat(args, " ") .. " 2>&1")
    local out = p:read("a")
    p:close()
    local chunk = load(out, "idx_ref.py", "t", {})
    local ref = chunk and chunk()

    test("Fashion-MNIST matches an independent gzip+struct reader", function()
      check(ref ~= nil, "idx_ref.py failed:\n" .. out)
      for _, f in ipairs(files) do
        local r, t = ref[fm .. "/" .. f], data[f]
        check_eq(t:size(), setmetatable(r.shape, getmetatable(t:size())), f .. " shape")
        check_eq(r.type, 8, f .. " type code")
        local flat = t:flatten()
        check_eq(flat:long():sum():item(), r.sum, f .. " sum of all values")
        check_eq(flat:narrow(1, 1, 16):totable(), r.first, f .. " first values")
        for pos, v in pairs(r.picks) do check_eq(flat[pos + 1]:item(), v, f .. " value at " .. pos) end
        if r.counts then
          for k = 0, 9 do check_eq(t:eq(k):sum():item(), r.counts[k + 1], f .. " count of " .. k) end
        end
      end
    end)
  else
    io.write("note: /usr/bin/python3 not found; Fashion-MNIST cross-check skipped\n")
  end
end

os.execute("rm -rf '" .. dir .. "'")

test("torch.vision.io.read_idx has a help text", function()
  check(type(torch.vision.io) == "table", "torch.vision.io exists")
  check((torch._helptext(torch.vision.io.read_idx) or ""):find("torch.vision.io.read_idx(path)", 1, true), "help text")
end)
