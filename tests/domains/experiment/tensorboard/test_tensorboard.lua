-- tests/tensorboard/test_tensorboard.lua -- torch.utils.tensorboard: CRC-32C
-- check values, the protobuf encoder, and event files read back by an
-- independent Python reader (tb_decode.py: its own bitwise CRC-32C, generic
-- wire-format decoding, PNG decoding with zlib); CSV/JSONL writers,
-- including the files a killed process leaves; bad input.
local tb = torch.utils.tensorboard
local C = require("torch.utils.tensorboard._summary")
local P = require "torch.utils.tensorboard.proto"

local here = debug.getinfo(1, "S").source:match("^@(.*)/[^/]*$") or "tests/tensorboard"
if here:sub(1, 1) ~= "/" then
  local pwd = io.popen("pwd")
  here = pwd:read("l") .. "/" .. here
  pwd:close()
end
local exe = (arg and arg[-1] and arg[-1]:match("moontorch$")) and arg[-1] or "build/moontorch"

local tmp = os.tmpname()
os.remove(tmp)
local function path(p) return tmp .. "/" .. p end

local function ls(dir)
  local p = io.popen("ls -1 '" .. dir .. "' 2>/dev/null")
  local out = {}
  for l in p:lines() do out[#out + 1] = l end
  p:close()
  return out
end

local function read(p)
  local f = assert(io.open(p, "rb"))
  local s = f:read("a")
  f:close()
  return s
end

local function f32(x) return (string.unpack("<f", string.pack("<f", x))) end

-- ---------------------------------------------------------------- checksums and encoding

test("crc32c matches the published check values", function()
  check_eq(C.crc32c("123456789"), 0xE3069283)
  check_eq(C.crc32c(""), 0)
  check_eq(C.crc32c(("\0"):rep(32)), 0x8A9136AA) -- RFC 3720, B.4
  check_eq(C.crc32c(("\255"):rep(32)), 0x62A8AB43)
  local inc = {}
  for i = 0, 31 do inc[#inc + 1] = string.char(i) end
  check_eq(C.crc32c(table.concat(inc)), 0x46DD794E)
end)

test("masked crc32c is TFRecord's rotation plus constant", function()
  local c = 0xE3069283
  check_eq(C.masked_crc32c("123456789"), (((c >> 15) | (c << 17)) + 0xa282ead8) & 0xffffffff)
end)

test("tfrecord frames data with length and two masked CRCs", function()
  local r = C.tfrecord("abc")
  check_eq(#r, 3 + 16)
  check_eq(string.unpack("<I8", r), 3)
  check_eq(string.unpack("<I4", r, 9), C.masked_crc32c(r:sub(1, 8)))
  check_eq(r:sub(13, 15), "abc")
  check_eq(string.unpack("<I4", r, 16), C.masked_crc32c("abc"))
end)

test("protobuf varints, keys and fixed-width fields", function()
  check_eq(P.varint_bytes(0), "\0")
  check_eq(P.varint_bytes(1), "\1")
  check_eq(P.varint_bytes(300), "\172\2")
  check_eq(P.varint_bytes(-1), ("\255"):rep(9) .. "\1")
  check_eq(P.varint(2, 150), "\16\150\1")
  check_eq(P.bytes(1, "hi"), "\10\2hi")
  check_eq(P.double(1, 1.0), "\9" .. string.pack("<d", 1.0))
  check_eq(P.float(2, 0.5), "\21" .. string.pack("<f", 0.5))
  check_eq(P.packed_doubles(6, {1, 2}), "\50\16" .. string.pack("<dd", 1, 2))
  local many = {}
  for i = 1, 1000 do many[i] = i end
  check_eq(#P.packed_doubles(7, many), 1 + 2 + 8000)
end)

-- ---------------------------------------------------------------- event files, read by Python

local have_python = io.open("/usr/bin/python3") ~= nil
if not have_python then io.write("note: /usr/bin/python3 not found; event-file decoding tests skipped\n") end

-- Decodes the event files with tb_decode.py: {path -> list of events}.
local function decode(files)
  local quoted = {}
  for i, f in ipairs(files) do quoted[i] = "'" .. f .. "'" end
  local p = io.popen(("cd /tmp && /usr/bin/python3 '%s/tb_decode.py' %s 2>&1"):format(here, table.concat(quoted, " ")))
  local out = p:read("a")
  p:close()
  local chunk, err = load(out, "tb_decode.py", "t", {math = math})
  assert(chunk, "tb_decode.py output: " .. tostring(err) .. "\n" .. out:sub(1, 2000))
  return chunk()
end

local function events_in(dir)
  local files = {}
  for _, f in ipairs(ls(dir)) do
    if f:match("^events%.out%.tfevents%.") then files[#files + 1] = dir .. "/" .. f end
  end
  return files
end

if have_python then
  local run = path("run")
  local w = tb.SummaryWriter(run, {flush_secs = 1, filename_suffix = ".x"})
  local losses = {1.5, 0.75, 1 / 3, 1e-8, -2.5e7}
  for i, v in ipairs(losses) do w:add_scalar("train/loss", v, i) end
  w:add_scalar("tensor_value", torch.tensor(0.25), 10, 1234.5)
  w:add_scalars("lr", {adam = 0.1, sgd = torch.tensor({0.2})}, 3)
  w:add_histogram("uniform", torch.arange(10), 4, 5)
  local hv = torch.tensor({0.5, -2, 3, 3, 1e-3})
  w:add_histogram("tf", hv, 5)
  w:add_histogram("edges", {0.1, 0.2, 0.9}, 6, {bins = {0, 0.5, 1}})
  local img = torch.tensor({{{0, 0.5, 1}, {1.5, -1, 0.25}}, {{0.1, 0.2, 0.3}, {0.4, 0.6, 0.999}},
    {{1, 1, 1}, {0, 0, 0}}}) -- 3 x 2 x 3 CHW
  w:add_image("rgb", img, 7)
  local rgba = torch.randint(0, 256, {5, 4, 4}):to(torch.uint8)
  w:add_image("rgba", rgba, 8, {dataformats = "HWC"})
  local gray = torch.rand(3, 2)
  w:add_image("gray", gray, 9, nil, "HW")
  w:add_text("notes", "hello, *world*\n\"quoted\" é", 11)
  w:add_hparams({lr = 0.01, optimizer = "adam", bn = true, layers = torch.tensor(3)}, {accuracy = 0.875},
    {run_name = "hp", hparam_domain_discrete = {optimizer = {"adam", "sgd"}}})
  w:close()

  local files = events_in(run)
  local ev = decode{files[1]}[files[1]]

  test("event file name follows PyTorch: events.out.tfevents.<time>.<host>.<pid>.<n><suffix>", function()
    check_eq(#files, 1)
    local t, host, pid = files[1]:match("/events%.out%.tfevents%.(%d+)%.(.+)%.(%d+)%.%d+%.x$")
    check(t and #t == 10, files[1])
    check_eq(host, C.hostname())
    check_eq(tonumber(pid), C.getpid())
  end)

  test("the first record is the file_version event", function()
    check_eq(ev[1].file_version, "brain.Event:2")
    check(math.abs(ev[1].wall_time - os.time()) < 600, "wall time is now")
  end)

  test("scalars: tag, float value, step and walltime", function()
    for i, v in ipairs(losses) do
      local e = ev[1 + i]
      check_eq(e.step, i)
      check_eq(e.values[1].tag, "train/loss")
      check_eq(e.values[1].kind, "scalar")
      check_eq(e.values[1].value, f32(v))
    end
    local e = ev[7]
    check_eq(e.values[1].value, 0.25)
    check_eq(e.step, 10)
    check_eq(e.wall_time, 1234.5)
  end)

  local function histo(tag)
    for _, e in ipairs(ev) do
      if e.values and e.values[1].tag == tag then return e.values[1], e end
    end
  end

  test("histogram with equal buckets: statistics and buckets", function()
    local h, e = histo("uniform")
    check_eq(e.step, 4)
    check_eq(h.kind, "histogram")
    check_eq({h.min, h.max, h.num, h.sum, h.sum_squares}, {0.0, 9.0, 10.0, 45.0, 285.0})
    check_close(h.bucket_limit, {0, 1.8, 3.6, 5.4, 7.2, 9}, {atol = 1e-12})
    check_eq(h.bucket, {0.0, 2.0, 2.0, 2.0, 2.0, 2.0})
  end)

  test("histogram with TensorFlow's default buckets places each value in its bucket", function()
    local h = histo("tf")
    check_eq(h.num, 5.0)
    check_eq(h.min, -2.0)
    check_eq(h.max, 3.0)
    check_close(h.sum, 0.5 - 2 + 6 + 1e-3, {atol = 1e-12})
    local total = 0
    for j, c in ipairs(h.bucket) do total = total + c end
    check_eq(total, 5.0)
    check_eq(h.bucket[1], 0.0)
    for _, v in ipairs{0.5, -2, 3, 1e-3} do
      local found
      for j = 2, #h.bucket_limit do
        if h.bucket_limit[j - 1] <= v and v < h.bucket_limit[j] then found = j end
      end
      check(found and h.bucket[found] >= 1, "value " .. v .. " counted in its bucket")
    end
    for j = 2, #h.bucket_limit do check(h.bucket_limit[j] > h.bucket_limit[j - 1], "limits increase") end
  end)

  test("histogram with explicit edges", function()
    local h = histo("edges")
    check_eq(h.bucket_limit, {0.0, 0.5, 1.0})
    check_eq(h.bucket, {0.0, 2.0, 1.0})
  end)

  local function image(tag)
    for _, e in ipairs(ev) do
      if e.values and e.values[1].tag == tag then return e.values[1] end
    end
  end

  test("float CHW image: PNG pixels are floor(clip(255 x)) in HWC order", function()
    local im = image("rgb")
    check_eq({im.height, im.width, im.colorspace}, {2, 3, 3})
    check_eq({im.png_height, im.png_width, im.png_channels}, {2, 3, 3})
    local t, want = img:totable(), {}
    for y = 1, 2 do
      for x = 1, 3 do
        for c = 1, 3 do
          local v = math.floor(math.max(0, math.min(255, f32(t[c][y][x]) * 255)))
          want[#want + 1] = string.char(v)
        end
      end
    end
    check_eq(im.pixels, table.concat(want))
  end)

  test("uint8 HWC image with alpha is stored as is", function()
    local im = image("rgba")
    check_eq({im.height, im.width, im.colorspace, im.png_channels}, {5, 4, 4, 4})
    local bytes = {}
    for _, v in ipairs(rgba:flatten():totable()) do bytes[#bytes + 1] = string.char(v) end
    check_eq(im.pixels, table.concat(bytes))
  end)

  test("HW gray image is repeated to RGB like PyTorch", function()
    local im = image("gray")
    check_eq({im.height, im.width, im.colorspace}, {3, 2, 3})
    local t, want = gray:totable(), {}
    for y = 1, 3 do
      for x = 1, 2 do
        local v = string.char(math.floor(math.max(0, math.min(255, f32(t[y][x]) * 255))))
        want[#want + 1] = v:rep(3)
      end
    end
    check_eq(im.pixels, table.concat(want))
  end)

  test("text is a DT_STRING tensor summary of the text plugin", function()
    local v = image("notes/text_summary")
    check_eq(v.plugin, "text")
    check_eq(v.kind, "tensor")
    check_eq(v.dtype, 7)
    check_eq(v.dims, {1})
    check_eq(v.strings, {"hello, *world*\n\"quoted\" é"})
  end)

  test("add_scalars writes one sub-run per tag under the main tag", function()
    local dirs = ls(run)
    table.sort(dirs)
    check(#events_in(run .. "/lr_adam") == 1 and #events_in(run .. "/lr_sgd") == 1, table.concat(dirs, " "))
    local fa, fs = events_in(run .. "/lr_adam")[1], events_in(run .. "/lr_sgd")[1]
    local d = decode{fa, fs}
    check_eq(d[fa][2].values[1].tag, "lr")
    check_eq(d[fa][2].values[1].value, f32(0.1))
    check_eq(d[fa][2].step, 3)
    check_eq(d[fs][2].values[1].value, f32(0.2))
  end)

  test("add_hparams writes experiment, session start/end and metrics in a run", function()
    local f = events_in(run .. "/hp")[1]
    local e = decode{f}[f]
    check_eq(e[1].file_version, "brain.Event:2")
    local byname = {}
    for i = 2, #e do byname[e[i].values[1].tag] = e[i].values[1] end
    local exp = byname["_hparams_/experiment"]
    check_eq(exp.plugin, "hparams")
    check_eq(exp.hparams.experiment.metrics, {"accuracy"})
    local types = {}
    for _, h in ipairs(exp.hparams.experiment.hparams) do types[h.name] = h.type end
    check_eq(types, {lr = 3, optimizer = 1, bn = 2, layers = 3})
    for _, h in ipairs(exp.hparams.experiment.hparams) do
      if h.name == "optimizer" then check_eq(h.discrete, {"adam", "sgd"}) end
    end
    check_eq(byname["_hparams_/session_start_info"].hparams.session_start,
      {lr = 0.01, optimizer = "adam", bn = true, layers = 3.0})
    check_eq(byname["_hparams_/session_end_info"].hparams.session_end, {status = 1})
    check_eq(byname["accuracy"].value, 0.875)
  end)
end

test("events reach the file at flush(), before close()", function()
  local dir = path("flush")
  local w = tb.SummaryWriter(dir, {max_queue = 1000, flush_secs = 1000})
  local f = events_in(dir)[1]
  local n0 = #read(f)
  check(n0 > 0, "the header is written at creation")
  w:add_scalar("a", 1, 1)
  check_eq(#read(f), n0)
  w:flush()
  check(#read(f) > n0, "flush writes the queue")
  w:close()
  w:close() -- a second close is harmless
  check_error(function() w:add_scalar("a", 1, 2) end, "closed")
end)

test("a <close> variable closes the writer", function()
  local dir = path("closevar")
  do
    local w <close> = tb.SummaryWriter(dir, {max_queue = 100})
    w:add_scalar("x", 2, 1)
  end
  local f = events_in(dir)[1]
  check(#read(f) > 40, "the queued event was written")
end)

-- ---------------------------------------------------------------- bad input

test("an unwritable log dir fails when the writer is made, naming the path", function()
  check_error(function() tb.SummaryWriter("/proc/no_such_dir/run") end, "/proc/no_such_dir")
  local file = path("plainfile")
  C.makedirs(tmp)
  local f = io.open(file, "w")
  f:write("x")
  f:close()
  check_error(function() tb.SummaryWriter(file .. "/run") end, "SummaryWriter: cannot create log directory")
  check_error(function() tb.CSVWriter(file .. "/run") end, "CSVWriter: cannot create log directory")
  check_error(function() tb.SummaryWriter(42) end, "log_dir must be a string")
  check_error(function() tb.SummaryWriter(path("x"), {bogus = 1}) end, "unknown option 'bogus'")
end)

test("bad arguments give errors naming the call", function()
  local w = tb.SummaryWriter(path("bad"))
  check_error(function() w:add_scalar(1, 2, 3) end, "add_scalar: tag must be a string")
  check_error(function() w:add_scalar("a", "x", 3) end, "add_scalar: scalar_value must be a number")
  check_error(function() w:add_scalar("a", torch.ones(3), 3) end, "one-element tensor")
  check_error(function() w:add_scalar("a", 1, 1.5) end, "add_scalar: global_step must be an integer")
  check_error(function() w:add_image("i", torch.rand(3, 4), 1) end, "add_image: dataformats 'CHW' needs a 3-D tensor")
  check_error(function() w:add_image("i", torch.rand(2, 4, 4), 1) end, "add_image: an image needs 1, 3 or 4 channels")
  check_error(function() w:add_image("i", "img", 1) end, "add_image: img_tensor must be a tensor")
  check_error(function() w:add_image("i", torch.rand(3, 4, 4), 1, {dataformats = "XYZ"}) end, "dataformats must be")
  check_error(function() w:add_histogram("h", torch.tensor({}), 1) end, "add_histogram: values is empty")
  check_error(function() w:add_histogram("h", torch.tensor({0 / 0}), 1) end, "NaN")
  check_error(function() w:add_histogram("h", torch.ones(3), 1, "fd") end, "add_histogram: bins must be")
  check_error(function() w:add_text("t", 5, 1) end, "add_text: text_string must be a string")
  check_error(function() w:add_hparams({lr = {}}, {}) end, "add_hparams: hparam 'lr' must be")
  w:close()
end)

-- ---------------------------------------------------------------- CSV and JSONL

test("CSVWriter writes scalars.csv and text.csv with quoting", function()
  local dir = path("csv")
  local w = tb.CSVWriter(dir)
  w:add_scalar("loss", 0.5, 1, 100.25)
  w:add_scalars("acc", {train = 0.75, val = 0.5}, 2, 101)
  w:add_text("note", 'a,"b"\nc', 3, 102)
  w:add_histogram("w", torch.tensor({1, 2, 3, 4}), 4, nil, 103)
  w:close()
  local s = read(dir .. "/scalars.csv")
  local head, std = s:match("^(.*)4,w/std,([^,]+),103%.000000\n$")
  check_eq(head, "step,tag,value,walltime\n1,loss,0.5,100.250000\n" ..
    "2,acc/train,0.75,101.000000\n2,acc/val,0.5,101.000000\n" ..
    "4,w/min,1,103.000000\n4,w/max,4,103.000000\n4,w/mean,2.5,103.000000\n")
  check_eq(tonumber(std), math.sqrt(1.25))
  check_eq(read(dir .. "/text.csv"), 'step,tag,text,walltime\n3,note,"a,""b""\nc",102.000000\n')
end)

test("CSVWriter appends to an existing file without a second header", function()
  local dir = path("csv")
  local w = tb.CSVWriter(dir)
  w:add_scalar("loss", 0.25, 5, 1)
  w:close()
  local s = read(dir .. "/scalars.csv")
  local _, headers = s:gsub("step,tag,value,walltime", "")
  check_eq(headers, 1)
  check_eq(s:sub(-21), "5,loss,0.25,1.000000\n")
end)

test("JSONLWriter writes one JSON object per line", function()
  local dir = path("jsonl")
  local w = tb.JSONLWriter(dir)
  w:add_scalar("loss", 0.1, 1, 5)
  w:add_scalar("nan", 0 / 0, 2, 5)
  w:add_text("t", 'q"\\\n\1', 3, 6)
  w:add_image("img/x", torch.zeros(1, 2, 2), 4, {walltime = 7})
  w:close()
  local lines = {}
  for l in read(dir .. "/metrics.jsonl"):gmatch("([^\n]*)\n") do lines[#lines + 1] = l end
  check_eq(lines[1], '{"step":1,"tag":"loss","value":0.1,"walltime":5}')
  check_eq(lines[2], '{"step":2,"tag":"nan","value":NaN,"walltime":5}')
  check_eq(lines[3], '{"step":3,"tag":"t","text":"q\\"\\\\\\n\\u0001","walltime":6}')
  check_eq(lines[4], '{"image":"images/img_x_4.png","step":4,"tag":"img/x","walltime":7}')
  check_eq(read(dir .. "/images/img_x_4.png"):sub(1, 8), "\137PNG\r\n\26\n")
  if have_python then
    local p = io.popen(("cd /tmp && /usr/bin/python3 -c \"import json,sys\nfor l in open('%s'): json.loads(l)\nprint('ok')\""
      ):format(dir .. "/metrics.jsonl"))
    check_eq(p:read("a"), "ok\n")
    p:close()
  end
end)

test("a killed process leaves whole lines in scalars.csv and metrics.jsonl", function()
  local dir = path("killed")
  local script = path("killme.lua")
  local f = io.open(script, "w")
  f:write(([[
local tb = torch.utils.tensorboard
local c, j = tb.CSVWriter(%q), tb.JSONLWriter(%q)
for i = 1, 200 do c:add_scalar("loss", i / 7, i); j:add_scalar("loss", i / 7, i) end
os.execute("kill -9 " .. require("torch.utils.tensorboard._summary").getpid())
]]):format(dir .. "/c", dir .. "/j"))
  f:close()
  os.execute(("'%s' '%s' >/dev/null 2>&1"):format(exe, script))
  local csv = read(dir .. "/c/scalars.csv")
  check_eq(csv:sub(-1), "\n")
  local n = 0
  for l in csv:gmatch("([^\n]*)\n") do
    if n > 0 then
      local step, v = l:match("^(%d+),loss,([^,]+),[%d.]+$")
      check(step and math.abs(tonumber(v) - tonumber(step) / 7) < 1e-12, l)
    end
    n = n + 1
  end
  check_eq(n, 201)
  local jl = read(dir .. "/j/metrics.jsonl")
  local m = 0
  for l in jl:gmatch("([^\n]*)\n") do
    m = m + 1
    check(l:match("^{.*}$"), l)
  end
  check_eq(m, 200)
end)

os.execute("rm -rf '" .. tmp .. "'")
