-- tests/io/test_fuzz_replay.lua -- the fuzz seed corpora (tests/fuzz/
-- corpus_*/, made by tests/fuzz/gen_corpus.py) and a few thousand seeded
-- random mutations of them go through torch.load, torch.vision.io.read_idx and read_image, so
-- that `make test` and `make asan` exercise the parsers the fuzzers target
-- (`make fuzz`) along the whole path to tensors and Lua values. Every input
-- must load or fail with a Lua error naming the function and the file.

local root = (debug.getinfo(1, "S").source:match("^@(.*)/tests/io/[^/]*$")) or "."
local dir = os.tmpname()
os.remove(dir)
assert(os.execute("mkdir -p '" .. dir .. "'"))

local function read_bytes(path)
  local f = assert(io.open(path, "rb"))
  local s = f:read("a")
  f:close()
  return s
end

-- removes first: rewriting a truncated file makes ext4 flush it (auto_da_alloc)
local function write_bytes(path, s)
  os.remove(path)
  local f = assert(io.open(path, "wb"))
  f:write(s)
  f:close()
end

local function corpus(name)
  local files = {}
  local p = io.popen("ls '" .. root .. "/tests/fuzz/corpus_" .. name .. "' 2>/dev/null")
  for f in p:lines() do files[#files + 1] = root .. "/tests/fuzz/corpus_" .. name .. "/" .. f end
  p:close()
  table.sort(files)
  return files
end

local interesting = {0, 1, 0x7f, 0x80, 0xff, 0x20, 0x22, 0x5c, 0x2c, 0x7b, 0x7d, 0x5b, 0x5d, 0x30, 0x39, 0x2d}

-- One random change of s: flip, set, insert, delete, truncate, duplicate or
-- splice in bytes of another seed.
local function mutate(s, seeds)
  local n = #s
  local op = math.random(1, 8)
  local at = math.random(1, math.max(n, 1))
  if op == 1 and n > 0 then
    local b = s:byte(at) ~ (1 << math.random(0, 7))
    return s:sub(1, at - 1) .. string.char(b) .. s:sub(at + 1)
  elseif op == 2 and n > 0 then
    return s:sub(1, at - 1) .. string.char(interesting[math.random(#interesting)]) .. s:sub(at + 1)
  elseif op == 3 then
    local k = math.random(1, 8)
    local ins = {}
    for i = 1, k do ins[i] = string.char(math.random(0, 255)) end
    return s:sub(1, at - 1) .. table.concat(ins) .. s:sub(at)
  elseif op == 4 and n > 1 then
    return s:sub(1, at - 1) .. s:sub(at + math.random(1, 16))
  elseif op == 5 then
    return s:sub(1, math.random(0, n))
  elseif op == 6 and n > 0 then
    local len = math.random(1, 32)
    return s:sub(1, at - 1) .. s:sub(at, at + len - 1) .. s:sub(at)
  elseif op == 7 and n > 0 then -- rewrite a decimal digit (sizes and offsets)
    local pos = {}
    for i = 1, n do if s:byte(i) >= 0x30 and s:byte(i) <= 0x39 then pos[#pos + 1] = i end end
    if #pos > 0 then
      local i = pos[math.random(#pos)]
      return s:sub(1, i - 1) .. tostring(math.random(0, 9)) .. s:sub(i + 1)
    end
  end
  local other = seeds[math.random(#seeds)]
  return s:sub(1, at) .. other:sub(math.random(1, math.max(#other, 1)))
end

local function replay(label, files, fn, fname, count)
  test(label .. ": the seed corpus and " .. count .. " mutations load or fail cleanly", function()
    check(#files > 0, "no seed files found under tests/fuzz/")
    local seeds = {}
    for i, f in ipairs(files) do seeds[i] = read_bytes(f) end
    math.randomseed(20240601)
    local path = dir .. "/input"
    local loaded, failed = 0, 0
    for k = 1, #seeds + count do
      local bytes = k <= #seeds and seeds[k] or seeds[math.random(#seeds)]
      if k > #seeds then
        for _ = 1, math.random(1, 4) do bytes = mutate(bytes, seeds) end
      end
      write_bytes(path, bytes)
      local ok, err = pcall(fn, path)
      if ok then
        loaded = loaded + 1
      else
        failed = failed + 1
        check(type(err) == "string" and err:find(fname .. ": " .. path .. ": ", 1, true),
          "input " .. k .. ": unexpected error " .. tostring(err))
      end
      if k % 500 == 0 then collectgarbage() end
    end
    check(loaded >= #seeds // 2, "most seeds load (" .. loaded .. " loaded)")
    check(failed > count // 4, "mutations are mostly rejected (" .. failed .. " failed)")
  end)
end

replay("safetensors", corpus("safetensors"), torch.load, "torch.load", 3000)

-- Mutations of the bytes rarely keep the JSON-in-JSON structure description
-- well-formed, so mutate the description itself and embed it properly.
test("structure descriptions: 2000 mutations decode or fail cleanly", function()
  local T = '"t":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}'
  local base = '{"version":1,"root":{"map":[[true,1],[2.5,"x"],[3,{"bytes":"ff00"}],["m",{"map":[["w",' ..
    '{"tensor":"t"}]]}],["l",{"list":[{"float":"inf"},{"float":"nan"},-0.0,1e308,{"list":[]},"s\\u00e9"]}],' ..
    '["tied",{"tensor":"t"}]]}}'
  local path = dir .. "/structure.safetensors"
  local function try(desc)
    local escaped = desc:gsub('[%c"\\]', function(c) return ("\\u%04x"):format(c:byte()) end)
    local header = '{"__metadata__":{"moontorch.structure":"' .. escaped .. '"},' .. T .. '}'
    write_bytes(path, string.pack("<I8", #header) .. header .. string.rep("\0", 8))
    return pcall(torch.load, path)
  end
  local ok, r = try(base)
  check(ok, tostring(r))
  check(rawequal(r.m.w, r.tied) and r[3] == "\255\0" and r.l[6] == "s\u{e9}", "the base description decodes")
  math.randomseed(777)
  local loaded = 0
  for k = 1, 2000 do
    local desc = base
    for _ = 1, math.random(1, 3) do desc = mutate(desc, {base}) end
    local good, err = try(desc)
    if good then loaded = loaded + 1
    else check(err:find("torch.load: " .. path .. ": ", 1, true), "mutation " .. k .. ": unexpected error " .. tostring(err)) end
  end
  check(loaded > 0 and loaded < 2000, loaded .. " of 2000 mutations loaded")
end)
replay("idx", corpus("idx"), torch.vision.io.read_idx, "torch.vision.io.read_idx", 3000)
replay("png", corpus("png"), torch.vision.io.read_image, "torch.vision.io.read_image", 2000)
replay("jpeg", corpus("jpeg"), torch.vision.io.read_image, "torch.vision.io.read_image", 2000)

os.execute("rm -rf '" .. dir .. "'")
