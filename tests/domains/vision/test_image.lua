-- tests/domains/vision/test_image.lua -- torch.vision.io's PNG and JPEG
-- functions (domains/vision/l_image.c over png.c, png_decode.c, jpeg.c):
-- round trips; PNGs built here byte by byte (palette, tRNS, gray at 1/2/4/16
-- bits, Adam7 interlace, every filter type) against their literal pixels;
-- every ImageReadMode against hand-computed values; the fast PNG path
-- (png_fast.c) against libpng alone, damaged files included; real files of
-- Debian packages, PNGs also against an independent reader (png_ref.py:
-- zlib + struct); one error per kind of bad input.

local vio = torch.vision.io
local M = vio.ImageReadMode

local dir = os.tmpname()
os.remove(dir)
assert(os.execute("mkdir -p '" .. dir .. "'"))
local function P(name) return dir .. "/" .. name end

local function bytes_of(s)
  local t = {}
  for i = 1, #s do t[i] = s:byte(i) end
  return torch.tensor(t, {dtype = torch.uint8})
end

local function string_of(b)
  local t = b:totable()
  local parts = {}
  for i = 1, #t, 4096 do parts[#parts + 1] = string.char(table.unpack(t, i, math.min(i + 4095, #t))) end
  return table.concat(parts)
end

-- ---- a PNG writer: zlib "stored" blocks, CRC-32, Adler-32 ----
local crc_table = {}
for n = 0, 255 do
  local c = n
  for _ = 1, 8 do c = (c & 1) ~= 0 and (0xEDB88320 ~ (c >> 1)) or (c >> 1) end
  crc_table[n] = c
end
local function crc32(s)
  local c = 0xFFFFFFFF
  for i = 1, #s do c = crc_table[(c ~ s:byte(i)) & 0xFF] ~ (c >> 8) end
  return c ~ 0xFFFFFFFF
end
local function zlib_stored(s)
  local a, b = 1, 0
  for i = 1, #s do a = (a + s:byte(i)) % 65521; b = (b + a) % 65521 end
  local out = {"\x78\x01"}
  local i = 1
  repeat
    local piece = s:sub(i, i + 65534)
    i = i + #piece
    out[#out + 1] = string.pack("<BI2I2", i > #s and 1 or 0, #piece, (~#piece) & 0xFFFF) .. piece
  until i > #s
  out[#out + 1] = string.pack(">I4", (b << 16) | a)
  return table.concat(out)
end
local function chunk(kind, data) return string.pack(">I4", #data) .. kind .. data .. string.pack(">I4", crc32(kind .. data)) end

-- rows: rows[y][x] = {samples...}; packs samples of `depth` bits (no filter byte)
local function pack_row(row, xs, depth)
  local out, acc, nbits = {}, 0, 0
  for _, x in ipairs(xs) do
    for _, v in ipairs(row[x]) do
      if depth == 16 then out[#out + 1] = string.pack(">I2", v)
      elseif depth == 8 then out[#out + 1] = string.char(v)
      else
        acc, nbits = (acc << depth) | v, nbits + depth
        if nbits == 8 then out[#out + 1] = string.char(acc); acc, nbits = 0, 0 end
      end
    end
  end
  if nbits > 0 then out[#out + 1] = string.char(acc << (8 - nbits)) end
  return table.concat(out)
end

-- the PNG specification's Paeth predictor
local function paeth(a, b, c)
  local p = a + b - c
  local pa, pb, pc = math.abs(p - a), math.abs(p - b), math.abs(p - c)
  if pa <= pb and pa <= pc then return a elseif pb <= pc then return b else return c end
end

-- a packed row filtered with type f (0 None .. 4 Paeth) against the row above
-- (nil for the first), bpp bytes a pixel: the filter byte and the row
local function filter_row(f, row, prev, bpp)
  local out = {string.char(f)}
  for i = 1, #row do
    local a, b = i > bpp and row:byte(i - bpp) or 0, prev and prev:byte(i) or 0
    local c = prev and i > bpp and prev:byte(i - bpp) or 0
    local pred = f == 1 and a or f == 2 and b or f == 3 and (a + b) // 2 or f == 4 and paeth(a, b, c) or 0
    out[#out + 1] = string.char((row:byte(i) - pred) % 256)
  end
  return table.concat(out)
end

local CHANNELS = {[0] = 1, [2] = 3, [3] = 1, [4] = 2, [6] = 4}

local adam7 = {{1, 1, 8, 8}, {5, 1, 8, 8}, {1, 5, 4, 8}, {3, 1, 4, 4}, {1, 3, 2, 4}, {2, 1, 2, 2}, {1, 2, 1, 2}}

-- make_png{rows=, color=, depth=, interlace=, plte=, trns=, filters=}: filters
-- lists the filter types of the rows in turn (default {0}; not interlaced)
local function make_png(o)
  local h, w = #o.rows, #o.rows[1]
  local raw = {}
  local passes = o.interlace and adam7 or {{1, 1, 1, 1}}
  local filters, bpp = o.filters or {0}, math.max(1, o.depth * CHANNELS[o.color] // 8)
  for _, p in ipairs(passes) do
    local xs, prev = {}, nil
    for x = p[1], w, p[3] do xs[#xs + 1] = x end
    if #xs > 0 then
      for y = p[2], h, p[4] do
        local row = pack_row(o.rows[y], xs, o.depth)
        raw[#raw + 1] = filter_row(filters[(#raw % #filters) + 1], row, prev, bpp)
        prev = row
      end
    end
  end
  local s = "\x89PNG\r\n\x1a\n" .. chunk("IHDR", string.pack(">I4I4BBBBB", w, h, o.depth, o.color, 0, 0, o.interlace and 1 or 0))
  if o.plte then s = s .. chunk("PLTE", o.plte) end
  if o.trns then s = s .. chunk("tRNS", o.trns) end
  if o.exif then s = s .. chunk("eXIf", o.exif) end
  return s .. chunk("IDAT", zlib_stored(table.concat(raw))) .. chunk("IEND", "")
end

-- the C x H x W table of rows[y][x][c]
local function chw(rows)
  local out = {}
  for c = 1, #rows[1][1] do
    out[c] = {}
    for y = 1, #rows do
      out[c][y] = {}
      for x = 1, #rows[1] do out[c][y][x] = rows[y][x][c] end
    end
  end
  return out
end

local function map_rows(rows, f)
  local out = {}
  for y, r in ipairs(rows) do
    out[y] = {}
    for x, px in ipairs(r) do out[y][x] = f(px, x, y) end
  end
  return out
end

local function grid(h, w, f)
  local rows = {}
  for y = 1, h do
    rows[y] = {}
    for x = 1, w do rows[y][x] = f(x, y) end
  end
  return rows
end

local function decode(s, mode) return vio.decode_png(bytes_of(s), mode) end

-- libpng's rgb_to_gray for 8 bits (torchvision's weights 0.2989, 0.587 in
-- 1/32768: 9794, 19234 and the rest 3740, truncated)
local function png_gray(r, g, b)
  if r == g and g == b then return r end
  return (9794 * r + 19234 * g + 3740 * b) >> 15
end

test("encode_png then decode_png gives the image back at 1, 2, 3 and 4 channels", function()
  torch.manual_seed(1)
  for c = 1, 4 do
    local img = torch.randint(0, 256, {c, 9, 13}, {dtype = torch.uint8})
    local b = vio.encode_png(img)
    check(b.dtype == torch.uint8 and b:dim() == 1, "bytes are uint8 1-D")
    local d = vio.decode_png(b)
    check(d.dtype == torch.uint8, "uint8")
    check_shape(d, {c, 9, 13})
    check(d:eq(img):all():item(), "pixels differ at " .. c .. " channels")
    check(vio.decode_image(b):eq(img):all():item(), "decode_image")
  end
end)

test("encode_png compression levels all decode to the same pixels; a non-contiguous image encodes", function()
  local img = torch.arange(0, 3 * 20 * 30):remainder(251):to(torch.uint8):reshape(3, 20, 30)
  for _, lvl in ipairs{0, 1, 9} do
    check(vio.decode_png(vio.encode_png(img, lvl)):eq(img):all():item(), "level " .. lvl)
  end
  check(vio.encode_png(img, 0):numel() > vio.encode_png(img, {compression_level = 9}):numel(), "level 0 is larger")
  local t = img:transpose(2, 3)
  check(vio.decode_png(vio.encode_png(t)):eq(t):all():item(), "transposed")
end)

test("write_png / read_image and write_file / read_file round trip through files", function()
  local img = torch.arange(0, 4 * 5 * 6):to(torch.uint8):reshape(4, 5, 6)
  vio.write_png(img, P("a.png"))
  check(vio.read_image(P("a.png")):eq(img):all():item(), "read_image")
  local b = vio.read_file(P("a.png"))
  check(b:eq(vio.encode_png(img)):all():item(), "read_file gives the encoded bytes")
  vio.write_file(P("b.bin"), b)
  check(vio.read_file(P("b.bin")):eq(b):all():item(), "write_file")
  vio.write_file(P("empty.bin"), torch.zeros(0, {dtype = torch.uint8}))
  check(vio.read_file(P("empty.bin")):numel() == 0, "empty file")
end)

test("8-bit RGB PNG: every ImageReadMode against hand-computed values", function()
  local rows = grid(3, 4, function(x, y) return {x * 60, y * 80, (x * 37 + y * 11) % 256} end)
  local s = make_png{rows = rows, color = 2, depth = 8}
  check_eq(decode(s):totable(), chw(rows))
  check_eq(decode(s, M.RGB):totable(), chw(rows))
  check_eq(decode(s, "RGB_ALPHA"):totable(), chw(map_rows(rows, function(p) return {p[1], p[2], p[3], 255} end)))
  check_eq(decode(s, M.GRAY):totable(), chw(map_rows(rows, function(p) return {png_gray(p[1], p[2], p[3])} end)))
  check_eq(decode(s, {mode = M.GRAY_ALPHA}):totable(),
           chw(map_rows(rows, function(p) return {png_gray(p[1], p[2], p[3]), 255} end)))
end)

test("RGBA and gray+alpha PNGs: alpha kept, stripped or added per mode", function()
  local rows = grid(2, 3, function(x, y) return {x * 70, y * 90, 200, x * y * 40} end)
  local s = make_png{rows = rows, color = 6, depth = 8}
  check_eq(decode(s):totable(), chw(rows))
  check_eq(decode(s, M.RGB):totable(), chw(map_rows(rows, function(p) return {p[1], p[2], p[3]} end)))
  check_eq(decode(s, M.GRAY_ALPHA):totable(),
           chw(map_rows(rows, function(p) return {png_gray(p[1], p[2], p[3]), p[4]} end)))
  local ga = grid(2, 3, function(x, y) return {x * 50, 255 - y * 30} end)
  local g = make_png{rows = ga, color = 4, depth = 8}
  check_eq(decode(g):totable(), chw(ga))
  check_eq(decode(g, M.GRAY):totable(), chw(map_rows(ga, function(p) return {p[1]} end)))
  check_eq(decode(g, M.RGB_ALPHA):totable(), chw(map_rows(ga, function(p) return {p[1], p[1], p[1], p[2]} end)))
  check_eq(decode(g, M.RGB):totable(), chw(map_rows(ga, function(p) return {p[1], p[1], p[1]} end)))
end)

test("palette PNG with tRNS: expanded to RGB(A), alpha from tRNS (255 past its end)", function()
  local plte = string.char(255, 0, 0, 0, 255, 0, 0, 0, 255, 10, 20, 30)
  local idx = grid(3, 5, function(x, y) return {(x + y) % 4} end)
  local colors = {{255, 0, 0}, {0, 255, 0}, {0, 0, 255}, {10, 20, 30}}
  local rgb = map_rows(idx, function(p) return colors[p[1] + 1] end)
  check_eq(decode(make_png{rows = idx, color = 3, depth = 8, plte = plte}):totable(), chw(rgb))
  local alpha = {0, 128}
  local s = make_png{rows = idx, color = 3, depth = 2, plte = plte, trns = string.char(0, 128)}
  local rgba = map_rows(idx, function(p)
    local c = colors[p[1] + 1]
    return {c[1], c[2], c[3], alpha[p[1] + 1] or 255}
  end)
  check_eq(decode(s):totable(), chw(rgba))
  check_eq(decode(s, M.RGB):totable(), chw(rgb))
  check_eq(decode(s, M.GRAY):totable(), chw(map_rows(rgb, function(p) return {png_gray(p[1], p[2], p[3])} end)))
end)

test("gray PNGs of 1, 2 and 4 bits are scaled to 0..255; a tRNS gray becomes alpha", function()
  for _, depth in ipairs{1, 2, 4} do
    local top = (1 << depth) - 1
    local rows = grid(3, 11, function(x, y) return {(x * 3 + y) % (top + 1)} end)
    local want = map_rows(rows, function(p) return {p[1] * (255 // top)} end)
    check_eq(decode(make_png{rows = rows, color = 0, depth = depth}):totable(), chw(want), depth .. " bits")
  end
  local rows = grid(2, 4, function(x, y) return {x * 60} end)
  local s = make_png{rows = rows, color = 0, depth = 8, trns = string.pack(">I2", 120)}
  check_eq(decode(s):totable(), chw(map_rows(rows, function(p) return {p[1], p[1] == 120 and 0 or 255} end)))
  check_eq(decode(s, M.GRAY):totable(), chw(rows))
end)

-- libpng's rgb_to_gray for 16 bits: the same fixed-point weights, rounded
local function png_gray16(r, g, b)
  if r == g and g == b then return r end
  return (9794 * r + 19234 * g + 3740 * b + 16384) >> 15
end

test("16-bit PNGs decode to uint16 tensors of 0..65535 in every ImageReadMode (gray, gray+alpha, RGB, RGBA)", function()
  local rows = grid(3, 4, function(x, y) return {x * 16000 + y * 7, 65535 - x * 100, y * 300, (x * y * 5000) % 65536} end)
  local rgb = map_rows(rows, function(p) return {p[1], p[2], p[3]} end)
  local s = make_png{rows = rgb, color = 2, depth = 16}
  local d = decode(s)
  check(d.dtype == torch.uint16, "uint16, got " .. tostring(d.dtype))
  check_eq(d:totable(), chw(rgb))
  check_eq(decode(s, M.RGB):totable(), chw(rgb))
  check_eq(decode(s, M.RGB_ALPHA):totable(), chw(map_rows(rgb, function(p) return {p[1], p[2], p[3], 65535} end)))
  check_eq(decode(s, M.GRAY):totable(), chw(map_rows(rgb, function(p) return {png_gray16(p[1], p[2], p[3])} end)))
  check_eq(decode(s, M.GRAY_ALPHA):totable(),
           chw(map_rows(rgb, function(p) return {png_gray16(p[1], p[2], p[3]), 65535} end)))
  local rgba = make_png{rows = rows, color = 6, depth = 16}
  check_eq(decode(rgba):totable(), chw(rows))
  check_eq(decode(rgba, M.RGB):totable(), chw(rgb))
  check_eq(decode(rgba, M.GRAY_ALPHA):totable(),
           chw(map_rows(rows, function(p) return {png_gray16(p[1], p[2], p[3]), p[4]} end)))
  local g = map_rows(rows, function(p) return {p[1]} end)
  local gs = make_png{rows = g, color = 0, depth = 16}
  check(decode(gs, M.GRAY).dtype == torch.uint16, "GRAY keeps 16 bits")
  check_eq(decode(gs):totable(), chw(g))
  check_eq(decode(gs, M.GRAY_ALPHA):totable(), chw(map_rows(g, function(p) return {p[1], 65535} end)))
  check_eq(decode(gs, M.RGB):totable(), chw(map_rows(g, function(p) return {p[1], p[1], p[1]} end)))
  check_eq(decode(gs, M.RGB_ALPHA):totable(), chw(map_rows(g, function(p) return {p[1], p[1], p[1], 65535} end)))
  local ga = map_rows(rows, function(p) return {p[1], p[4]} end)
  local gas = make_png{rows = ga, color = 4, depth = 16}
  check_eq(decode(gas):totable(), chw(ga))
  check_eq(decode(gas, M.GRAY):totable(), chw(g))
  check_eq(decode(gas, M.RGB_ALPHA):totable(), chw(map_rows(ga, function(p) return {p[1], p[1], p[1], p[2]} end)))
  -- a tRNS gray value (16 bits wide) becomes alpha 0, the rest 65535
  local t = make_png{rows = g, color = 0, depth = 16, trns = string.pack(">I2", g[2][3][1])}
  check_eq(decode(t):totable(), chw(map_rows(g, function(p) return {p[1], p[1] == g[2][3][1] and 0 or 65535} end)))
end)

test("encode_png of uint16 images writes 16-bit PNGs that decode_png and an independent reader read back", function()
  torch.manual_seed(3)
  local imgs = {}
  for c = 1, 4 do
    local img = torch.randint(0, 65536, {c, 7, 11}, {dtype = torch.int64}):to(torch.uint16)
    img[{1, 1, 1}] = 65535
    img[{1, 1, 2}] = 0
    imgs[c] = img
    local b = vio.encode_png(img)
    local s = string_of(b)
    check_eq({s:byte(25), s:byte(26)}, {16, ({0, 4, 2, 6})[c]}, "IHDR bit depth 16 and colour type")
    local d = vio.decode_png(b)
    check(d.dtype == torch.uint16, "decodes to uint16")
    check_eq(d:totable(), img:totable(), c .. " channels")
    vio.write_png(img:transpose(2, 3), P("w16_" .. c .. ".png"), {compression_level = 9})
    check_eq(vio.read_image(P("w16_" .. c .. ".png")):totable(), img:transpose(2, 3):totable(), "write_png, strided")
  end
  if not io.open("/usr/bin/python3") then return print("  (no /usr/bin/python3: independent read skipped)") end
  local args = {}
  for c = 1, 4 do
    vio.write_file(P("e16_" .. c .. ".png"), vio.encode_png(imgs[c]))
    args[c] = "'" .. P("e16_" .. c .. ".png") .. "'"
  end
  local script = debug.getinfo(1, "S").source:match("^@(.*)/[^/]*$") or "tests/domains/vision"
  local q = io.popen("/usr/bin/python3 '" .. script .. "/png_ref.py' --16 " .. table.concat(args, " ") .. " 2>&1")
  local out = q:read("a")
  q:close()
  local chunk = load(out, "png_ref.py", "t", {})
  local ref = chunk and chunk()
  check(ref, "png_ref.py failed:\n" .. out)
  for c = 1, 4 do
    local r = ref[P("e16_" .. c .. ".png")]
    check(r, "png_ref.py read " .. c)
    check_eq({r[1], r[2], r[3]}, {c, 7, 11})
    check_eq(r[4], imgs[c]:permute(2, 3, 1):reshape(-1):totable(), "pixels of " .. c .. " channels")
  end
end)

test("a real 16-bit PNG (python3-skimage's chessboard_RGB.png) matches the independent reader", function()
  local path = "/usr/lib/python3/dist-packages/skimage/data/chessboard_RGB.png"
  if not io.open(path) then return print("  (python3-skimage not installed: skipped)") end
  local img = vio.read_image(path)
  check(img.dtype == torch.uint16, "uint16, got " .. tostring(img.dtype))
  check_shape(img, {3, 200, 200})
  check_eq(vio.read_image(path, M.GRAY).dtype, torch.uint16)
  if not io.open("/usr/bin/python3") then return print("  (no /usr/bin/python3: cross-check skipped)") end
  local script = debug.getinfo(1, "S").source:match("^@(.*)/[^/]*$") or "tests/domains/vision"
  local q = io.popen("/usr/bin/python3 '" .. script .. "/png_ref.py' --16 '" .. path .. "' 2>&1")
  local out = q:read("a")
  q:close()
  local chunk = load(out, "png_ref.py", "t", {})
  local r = chunk and chunk()
  r = r and r[path]
  check(r, "png_ref.py failed:\n" .. out)
  check_eq({r[1], r[2], r[3]}, {3, 200, 200})
  local want = torch.tensor(r[4], {dtype = torch.int64}):reshape(200, 200, 3):permute(3, 1, 2)
  check(img:long():eq(want):all():item(), "pixels")
  check(want:max():item() == 65535 and want:unique():numel() > 2, "the file really uses 16 bits")
end)

test("encode_jpeg refuses uint16 images; encode_png refuses other dtypes", function()
  local img = torch.zeros(3, 4, 4, {dtype = torch.uint16})
  check_error(function() vio.encode_jpeg(img) end, "encode_jpeg: the image must be a uint8 CPU tensor")
  check_error(function() vio.encode_png(torch.zeros(3, 4, 4, {dtype = torch.int32})) end,
              "encode_png: the image must be a uint8 or uint16 CPU tensor of shape C x H x W, got a 3-D int32 tensor")
end)

test("Adam7-interlaced PNGs decode to the same pixels as plain ones", function()
  local rows = grid(11, 13, function(x, y) return {(x * 19 + y * 7) % 256, (x * y) % 256, (x + y * 31) % 256} end)
  check_eq(decode(make_png{rows = rows, color = 2, depth = 8, interlace = true}):totable(), chw(rows))
  local g = grid(5, 9, function(x, y) return {(x + y) % 2} end)
  check_eq(decode(make_png{rows = g, color = 0, depth = 1, interlace = true}):totable(),
           chw(map_rows(g, function(p) return {p[1] * 255} end)))
end)

-- a smooth image, so that JPEG's 4:2:0 chroma loses almost nothing
local function smooth(c, h, w)
  local t = torch.zeros(c, h, w)
  for k = 1, c do
    local yy = torch.arange(0, h):reshape(h, 1):float()
    local xx = torch.arange(0, w):reshape(1, w):float()
    t[k] = (yy * (2 + k) + xx * (5 - k) + 40):clamp(0, 255)
  end
  return t:to(torch.uint8)
end

test("encode_jpeg at quality 100 then decode_jpeg is within a few levels (RGB and gray)", function()
  for _, c in ipairs{1, 3} do
    local img = smooth(c, 24, 32)
    local b = vio.encode_jpeg(img, 100)
    check(b[1]:item() == 0xFF and b[2]:item() == 0xD8, "JPEG signature")
    local d = vio.decode_jpeg(b)
    check(d.dtype == torch.uint8, "uint8")
    check_shape(d, {c, 24, 32})
    local err = (d:int() - img:int()):abs():max():item()
    check(err <= 3, c .. " channels: max error " .. err)
    check(vio.decode_image(b):eq(d):all():item(), "decode_image sniffs JPEG")
  end
  local img = smooth(3, 16, 16)
  check(vio.encode_jpeg(img, 10):numel() < vio.encode_jpeg(img, {quality = 100}):numel(), "quality 10 is smaller")
  vio.write_jpeg(img, P("a.jpg"), 95)
  check_shape(vio.read_image(P("a.jpg")), {3, 16, 16})
end)

test("JPEG modes: GRAY is libjpeg's luma 0.299 R + 0.587 G + 0.114 B; alpha modes add 255", function()
  local img = torch.zeros(3, 16, 16, {dtype = torch.uint8})
  img[1], img[2], img[3] = 200, 100, 50
  local b = vio.encode_jpeg(img, 100)
  local gray = vio.decode_jpeg(b, M.GRAY)
  check_shape(gray, {1, 16, 16})
  local y = 0.299 * 200 + 0.587 * 100 + 0.114 * 50
  check((gray:float() - y):abs():max():item() <= 1.5, "luma")
  local ga = vio.decode_jpeg(b, "GRAY_ALPHA")
  check_shape(ga, {2, 16, 16})
  check(ga[1]:eq(gray[1]):all():item() and ga[2]:eq(255):all():item(), "gray + alpha 255")
  local rgba = vio.decode_jpeg(b, M.RGB_ALPHA)
  check_shape(rgba, {4, 16, 16})
  check(rgba:narrow(1, 1, 3):eq(vio.decode_jpeg(b, M.RGB)):all():item() and rgba[4]:eq(255):all():item(), "RGBA")
  local g1 = vio.encode_jpeg(gray, 100)
  check_shape(vio.decode_jpeg(g1), {1, 16, 16})
  check_shape(vio.decode_jpeg(g1, M.RGB), {3, 16, 16})
end)

-- inserts an APP1 Exif segment with orientation o after SOI
local function with_orientation(jpeg, o)
  local tiff = "MM\0\42" .. string.pack(">I4I2", 8, 1) .. string.pack(">I2I2I4I2I2", 0x0112, 3, 1, o, 0)
      .. string.pack(">I4", 0)
  local app1 = "Exif\0\0" .. tiff
  return jpeg:sub(1, 2) .. "\xFF\xE1" .. string.pack(">I2", #app1 + 2) .. app1 .. jpeg:sub(3)
end

test("apply_exif_orientation turns the image upright for orientations 1..8; off by default", function()
  -- four flat 8x8 quadrant blocks survive JPEG almost exactly
  local img = torch.zeros(1, 16, 24, {dtype = torch.uint8})
  img[{1, {1, 8}, {1, 8}}] = 0
  img[{1, {1, 8}, {9, 16}}] = 80
  img[{1, {1, 8}, {17, 24}}] = 160
  img[{1, {9, 16}, {}}] = 240
  local base = string_of(vio.encode_jpeg(img, 100))
  local plain = vio.decode_jpeg(bytes_of(base)):float()
  local want = {
    [1] = plain, [2] = plain:flip(3), [3] = plain:flip(2):flip(3), [4] = plain:flip(2),
    [5] = plain:transpose(2, 3), [6] = plain:transpose(2, 3):flip(3), [7] = plain:transpose(2, 3):flip(2):flip(3),
    [8] = plain:transpose(2, 3):flip(2),
  }
  for o = 1, 8 do
    local b = bytes_of(with_orientation(base, o))
    check_close(vio.decode_jpeg(b, {apply_exif_orientation = true}):float(), want[o], {atol = 0})
    check_close(vio.decode_jpeg(b):float(), plain, {atol = 0})
    check_close(vio.decode_image(b, M.UNCHANGED, true):float(), want[o], {atol = 0})
  end
end)

test("decode_jpeg: lists give lists; torchvision's argument order (mode, device, apply_exif_orientation)", function()
  local img = smooth(3, 16, 24)
  local a, g = vio.encode_jpeg(img, 90), vio.encode_jpeg(img:narrow(1, 1, 1):contiguous(), 90)
  local out = vio.decode_jpeg({a, g, a}, "RGB")
  check(type(out) == "table" and #out == 3, "a list back")
  for i, b in ipairs{a, g, a} do check(out[i]:eq(vio.decode_jpeg(b, M.RGB)):all():item(), "item " .. i) end
  check_eq(#vio.decode_jpeg({}), 0, "an empty list")
  local o6 = bytes_of(with_orientation(string_of(a), 6))
  check_shape(vio.decode_jpeg(o6, M.UNCHANGED, "cpu", true), {3, 24, 16})
  check_shape(vio.decode_jpeg({o6}, {device = "cpu", apply_exif_orientation = true})[1], {3, 24, 16})
  check_error(function() vio.decode_jpeg({a, "x"}) end, "decode_jpeg: data[2] must be a 1-D uint8 CPU tensor")
  check_error(function() vio.decode_jpeg({a, bytes_of("nope")}) end, "decode_jpeg: JPEG decoder: not a JPEG file")
  check_error(function() vio.decode_jpeg(a, {device = "tpu"}) end, "decode_jpeg: unknown device 'tpu'")
  if not torch.cuda.is_available() then
    check_error(function() vio.decode_jpeg(a, {device = "cuda"}) end, "decode_jpeg: nvJPEG: CUDA is not available")
  end
end)

test("large JPEGs decoded in parts (4 or more threads) give the pixels and errors of one pass", function()
  local SK = "/usr/lib/python3/dist-packages/skimage/data/"
  local f = io.open(SK .. "astronaut.png", "rb")
  if not f then return end
  f:close()
  local astro = vio.read_image(SK .. "astronaut.png", "RGB")
  local files = {vio.encode_jpeg(astro, 90), vio.encode_jpeg(astro:narrow(2, 1, 509):narrow(3, 1, 501):contiguous(), 75),
                 vio.encode_jpeg(astro:narrow(1, 2, 1):contiguous(), 90)}
  local saved = torch.get_num_threads()
  for i, b in ipairs(files) do
    for _, mode in ipairs{"UNCHANGED", "GRAY", "RGB", "GRAY_ALPHA", "RGB_ALPHA"} do
      torch.set_num_threads(1)
      local one = vio.decode_jpeg(b, mode)
      for _, t in ipairs{4, 5, 8} do
        torch.set_num_threads(t)
        check(vio.decode_jpeg(b, mode):eq(one):all():item(), ("file %d %s, %d threads"):format(i, mode, t))
      end
    end
    local cut = b:narrow(1, 1, b:numel() * 2 // 3):clone()
    torch.set_num_threads(1)
    local ok1, e1 = pcall(vio.decode_jpeg, cut)
    torch.set_num_threads(4)
    local ok4, e4 = pcall(vio.decode_jpeg, cut)
    check(not ok1 and not ok4 and e1 == e4, "truncated: the same error: " .. tostring(e1) .. " / " .. tostring(e4))
  end
  torch.set_num_threads(saved)
end)

test("decoded 8-bit images are C x H x W views of H x W x C pixels, as torchvision's", function()
  local img = smooth(3, 10, 12)
  for _, d in ipairs{vio.decode_jpeg(vio.encode_jpeg(img, 95)), vio.decode_png(vio.encode_png(img))} do
    check_eq(d:stride(), {1, 36, 3}, "strides")
    check(d:contiguous():eq(d):all():item() and d:contiguous():is_contiguous(), "values through a copy")
  end
  check(vio.decode_png(vio.encode_png(img)):eq(img):all():item(), "PNG round trip through the view")
  local gray = vio.decode_png(vio.encode_png(img:narrow(1, 1, 1):contiguous()))
  check(gray:is_contiguous(), "one channel: contiguous")
end)

test("16-bit PNGs and WebP files decode to views too; an EXIF-rotated image is a contiguous copy", function()
  local img16 = torch.randint(0, 65536, {3, 5, 7}, {dtype = torch.int64}):to(torch.uint16)
  local d = vio.decode_png(vio.encode_png(img16))
  check(d.dtype == torch.uint16, "uint16")
  check_eq(d:stride(), {1, 21, 3}, "uint16 strides")
  check(d:eq(img16):all():item(), "uint16 pixels through the view")
  local script = debug.getinfo(1, "S").source:match("^@(.*)/[^/]*$") or "tests/domains/vision"
  local w = vio.read_image(script .. "/webp/rgba_lossless.webp")
  local h, wd = w:size(2), w:size(3)
  check_eq(w:stride(), {1, wd * 4, 4}, "WebP strides")
  check(w:eq(vio.decode_webp(vio.read_file(script .. "/webp/rgba_lossless.webp")):contiguous()):all():item()
        and h > 0, "WebP view pixels")
  local base = string_of(vio.encode_jpeg(smooth(3, 6, 10), 95))
  local r = vio.decode_jpeg(bytes_of(with_orientation(base, 6)), {apply_exif_orientation = true})
  check_eq(r:size(), {3, 10, 6}, "rotated shape")
  check(r:is_contiguous(), "rotated: contiguous")
end)

test("ImageFolder's default loader (load_rgb) gives decode_image's RGB pixels, as views", function()
  local cfolder = require "torch.vision._folder"
  local img = smooth(3, 6, 9)
  local rgba = torch.cat({img, torch.full({1, 6, 9}, 200, {dtype = torch.uint8})}, 1)
  vio.write_png(img, P("lr_rgb.png"))
  vio.write_png(rgba, P("lr_rgba.png"))
  vio.write_jpeg(img, P("lr.jpg"), 90)
  for _, name in ipairs{"lr_rgb.png", "lr_rgba.png", "lr.jpg"} do
    local a, b = cfolder.load_rgb(P(name)), vio.read_image(P(name), M.RGB)
    check_eq(a:size(), {3, 6, 9}, name .. " shape")
    check_eq(a:stride(), {1, 27, 3}, name .. " strides")
    check(a:eq(b):all():item(), name .. " pixels")
  end
end)

test("_jpeg_orientation (the CUDA path's marker walk) reads what the CPU decoder reads", function()
  local base = string_of(vio.encode_jpeg(smooth(1, 8, 8), 90))
  check_eq(vio._jpeg_orientation(bytes_of(base)), 1, "no Exif")
  for o = 1, 8 do check_eq(vio._jpeg_orientation(bytes_of(with_orientation(base, o))), o, "orientation " .. o) end
  -- an XMP APP1 first: the first Exif APP1 counts, on both paths
  local xmp = "http://ns.adobe.com/xap/1.0/\0<x/>"
  local two = with_orientation(base, 8)
  two = two:sub(1, 2) .. "\xFF\xE1" .. string.pack(">I2", #xmp + 2) .. xmp .. two:sub(3)
  check_eq(vio._jpeg_orientation(bytes_of(two)), 8, "after XMP")
  check_shape(vio.decode_jpeg(bytes_of(two), {apply_exif_orientation = true}), {1, 8, 8})
  local tall = string_of(vio.encode_jpeg(smooth(1, 8, 16), 90))
  local t2 = with_orientation(tall, 8)
  t2 = t2:sub(1, 2) .. "\xFF\xE1" .. string.pack(">I2", #xmp + 2) .. xmp .. t2:sub(3)
  check_shape(vio.decode_jpeg(bytes_of(t2), {apply_exif_orientation = true}), {1, 16, 8})
  -- a TEM marker (no length) and fill bytes before the Exif segment: both read through them
  local tem = t2:sub(1, 2) .. "\xFF\xFF\xFF\x01" .. t2:sub(3)
  check_eq(vio._jpeg_orientation(bytes_of(tem)), 8, "after TEM")
  check_shape(vio.decode_jpeg(bytes_of(tem), {apply_exif_orientation = true}), {1, 16, 8})
  for _, bad in ipairs{"", "\xFF\xD8", "\xFF\xD8\xFF\xE1\xFF\xFF", "\xFF\xD8\xFF\xE1\0\1Exif\0\0"} do
    check_eq(vio._jpeg_orientation(bytes_of(bad)), 1, "malformed")
  end
end)

test("a PNG's eXIf orientation is applied with apply_exif_orientation=true (decode_png, decode_image)", function()
  local rows = grid(2, 3, function(x, y) return {x * 10 + y} end)
  local tiff = "II\42\0" .. string.pack("<I4I2I2I2I4I2I2I4", 8, 1, 0x0112, 3, 1, 6, 0, 0)
  local s = make_png{rows = rows, color = 0, depth = 8, exif = tiff}
  local plain = {{{11, 21, 31}, {12, 22, 32}}}
  check_eq(decode(s):totable(), plain)
  local upright = {{{12, 11}, {22, 21}, {32, 31}}} -- orientation 6: turned 90 degrees clockwise
  check_eq(vio.decode_png(bytes_of(s), {apply_exif_orientation = true}):totable(), upright)
  check_eq(vio.decode_image(bytes_of(s), M.UNCHANGED, true):totable(), upright)
end)

test("real PNG and JPEG files of Debian packages decode with sane shapes", function()
  local found = 0
  local p = io.popen("find /usr/share/doc /usr/share/gitweb /usr/share/pixmaps /usr/share/icons "
                     .. "\\( -name '*.png' -o -name '*.jpg' \\) -size -200k 2>/dev/null | head -20")
  for path in p:lines() do
    local ok, img = pcall(vio.read_image, path)
    if ok then
      found = found + 1
      check(img:dim() == 3 and img.shape[1] >= 1 and img.shape[1] <= 4, path .. ": shape")
      check(img.dtype == torch.uint8 or img.dtype == torch.uint16, path .. ": dtype")
      local rgb = vio.read_image(path, M.RGB)
      check(rgb.shape[1] == 3 and rgb.shape[2] == img.shape[2] and rgb.shape[3] == img.shape[3], path .. ": RGB")
    else
      check(tostring(img):find("torch.vision.io.read_image: " .. path, 1, true), tostring(img))
    end
  end
  p:close()
  if found == 0 then print("  (no PNG or JPEG under /usr/share: nothing real to decode)") end
end)

test("the fast PNG path (png_fast.c) takes the common files and gives libpng's pixels in every mode", function()
  local SK = "/usr/lib/python3/dist-packages/skimage/data/"
  local files = {}
  local p = io.popen("ls " .. SK .. "*.png /usr/share/pixmaps/*.png 2>/dev/null")
  for l in p:lines() do
    if #files < 40 then files[#files + 1] = l end
  end
  p:close()
  -- made here: every filter type on every layout (encode_png's libpng picks them per row), palettes with tRNS
  local noisy = (torch.arange(0, 4 * 37 * 29):view(4, 37, 29) * 7919 % 251):to(torch.uint8)
  local made = {}
  for c = 1, 4 do made[#made + 1] = vio.encode_png(noisy:narrow(1, 1, c):contiguous(), 9) end
  local idx = {}
  for y = 1, 6 do
    idx[y] = {}
    for x = 1, 7 do idx[y][x] = {(x * y) % 5} end
  end
  local plte = string.char(10, 20, 30, 40, 50, 60, 70, 80, 90, 100, 110, 120, 130, 140, 150)
  made[#made + 1] = bytes_of(make_png{rows = idx, color = 3, depth = 8, plte = plte, trns = string.char(0, 128)})
  made[#made + 1] = bytes_of(make_png{rows = idx, color = 3, depth = 8, plte = plte})
  local fast, total = 0, 0
  local function compare(b, name)
    for _, mode in ipairs{"UNCHANGED", "GRAY", "GRAY_ALPHA", "RGB", "RGB_ALPHA"} do
      local ok, want = pcall(vio._decode_png_libpng, b, mode)
      if ok then
        local got = vio.decode_png(b, mode)
        total = total + 1
        if vio._png_fast(b, mode) then fast = fast + 1 end
        check(got.dtype == want.dtype and got:eq(want):all():item(), name .. " " .. mode)
      end
    end
  end
  for _, f in ipairs(files) do compare(vio.read_file(f), f) end
  for i, b in ipairs(made) do compare(b, "made " .. i) end
  check(vio._png_fast(made[3]) and vio._png_fast(made[5], "RGB_ALPHA"), "RGB and palette + tRNS take the fast path")
  check(fast >= total // 2, ("%d of %d decodes took the fast path"):format(fast, total))
  io.write(("  (%d decodes compared, %d by the fast path)\n"):format(total, fast))
  -- left to libpng: interlace, gray + tRNS, color to gray, a bad CRC, an eXIf chunk
  local rows = grid(3, 2, function(x, y) return {x * 40 + y, y, x} end)
  check(not vio._png_fast(bytes_of(make_png{rows = rows, color = 2, depth = 8, interlace = true})), "interlaced")
  local g = grid(3, 2, function(x, y) return {x + y} end)
  check(not vio._png_fast(bytes_of(make_png{rows = g, color = 0, depth = 8, trns = string.pack(">I2", 2)})), "tRNS")
  check(not vio._png_fast(made[3], "GRAY"), "RGB to GRAY")
  local good = string_of(made[3])
  local bad = good:sub(1, 29) .. string.char((good:byte(30) + 1) % 256) .. good:sub(31)
  check(not vio._png_fast(bytes_of(bad)), "a bad IHDR CRC")
  check_error(function() vio.decode_png(bytes_of(bad)) end, "decode_png: PNG decoder:")
  check(not vio._png_fast(bytes_of(make_png{rows = g, color = 0, depth = 8, exif = "MM\0\42\0\0\0\8\0\0"})), "eXIf")
end)

-- decode_png of b and libpng alone (torch.vision.io._decode_png_libpng) in
-- every mode: the same dtype and pixels, or an error from both; returns how
-- many modes the fast path took
local function same_as_libpng(b, name)
  local fast = 0
  for _, mode in ipairs{"UNCHANGED", "GRAY", "GRAY_ALPHA", "RGB", "RGB_ALPHA"} do
    local ok, want = pcall(vio._decode_png_libpng, b, mode)
    local ok2, got = pcall(vio.decode_png, b, mode)
    check(ok == ok2, ("%s %s: libpng %s, decode_png %s"):format(name, mode, ok and "decodes" or want,
                                                               ok2 and "decodes" or got))
    if ok then check(got.dtype == want.dtype and got:eq(want):all():item(), name .. " " .. mode) end
    if vio._png_fast(b, mode) then fast = fast + 1 end
  end
  return fast
end

test("fast path: palettes of 1, 2, 4 and 8 bits, with and without tRNS, every filter: as written and as libpng", function()
  for _, depth in ipairs{1, 2, 4, 8} do
    local n = depth == 8 and 200 or 1 << depth
    local colors, plte = {}, {}
    for i = 1, n do
      colors[i] = {(i * 37) % 256, (i * 91 + 7) % 256, (255 - i * 13) % 256}
      plte[i] = string.char(table.unpack(colors[i]))
    end
    plte = table.concat(plte)
    local trns = string.char(0, 77, 200):sub(1, n - 1) -- shorter than the palette: 255 past its end
    for _, w in ipairs{1, 7, 37, 300} do
      local idx = grid(5, w, function(x, y) return {(x * 7 + y * 3 + x // 5) % n} end)
      local rgb = map_rows(idx, function(p) return colors[p[1] + 1] end)
      for _, t in ipairs{false, true} do
        local b = bytes_of(make_png{rows = idx, color = 3, depth = depth, plte = plte, trns = t and trns or nil,
                                    filters = {0, 1, 2, 3, 4}})
        local name = ("palette of %d bits, %d wide%s"):format(depth, w, t and ", tRNS" or "")
        local rgba = map_rows(idx, function(p)
          local c = colors[p[1] + 1]
          return {c[1], c[2], c[3], t and trns:byte(p[1] + 1) or 255}
        end)
        check_eq(vio.decode_png(b):totable(), chw(t and rgba or rgb), name)
        check_eq(vio.decode_png(b, M.RGB):totable(), chw(rgb), name .. " RGB")
        check_eq(vio.decode_png(b, M.RGB_ALPHA):totable(), chw(rgba), name .. " RGB_ALPHA")
        check_eq(same_as_libpng(b, name), 3, name .. ": UNCHANGED, RGB and RGB_ALPHA by the fast path")
      end
    end
  end
  -- left to libpng, whose result stands: an index past the palette, a tRNS longer than the palette
  local idx = grid(2, 3, function(x) return {x - 1} end)
  local b = bytes_of(make_png{rows = idx, color = 3, depth = 8, plte = string.char(1, 2, 3, 4, 5, 6)})
  check(not vio._png_fast(b), "index 2 of a palette of 2")
  same_as_libpng(b, "an index past the palette")
  b = bytes_of(make_png{rows = grid(2, 3, function() return {1} end), color = 3, depth = 1, plte = "abcdef",
                        trns = "\0\0\0"})
  check(not vio._png_fast(b), "a tRNS of 3 entries, a palette of 2")
  same_as_libpng(b, "a tRNS longer than the palette")
end)

test("fast path: gray of 1, 2, 4, 8 and 16 bits and gray + alpha, every filter: as written and as libpng", function()
  for _, depth in ipairs{1, 2, 4, 8, 16} do
    local top = (1 << depth) - 1
    local full, scale = depth == 16 and 65535 or 255, depth < 8 and 255 // top or 1
    for _, w in ipairs{1, 9, 300} do
      local rows = grid(6, w, function(x, y) return {(x * x * 7 + y * 13 + x) % (top + 1)} end)
      local b = bytes_of(make_png{rows = rows, color = 0, depth = depth, filters = {1, 2, 3, 4, 0}})
      local name = ("gray of %d bits, %d wide"):format(depth, w)
      local g = map_rows(rows, function(p) return {p[1] * scale} end)
      local d = vio.decode_png(b)
      check(d.dtype == (depth == 16 and torch.uint16 or torch.uint8), name .. ": dtype")
      check_eq(d:totable(), chw(g), name)
      check_eq(vio.decode_png(b, M.RGB_ALPHA):totable(), chw(map_rows(g, function(p) return {p[1], p[1], p[1], full} end)),
               name .. " RGB_ALPHA")
      check_eq(same_as_libpng(b, name), 5, name .. ": every mode by the fast path")
    end
  end
  for _, depth in ipairs{8, 16} do
    local top = (1 << depth) - 1
    local rows = grid(4, 70, function(x, y) return {(x * 5003 + y) % (top + 1), (x * y * 911) % (top + 1)} end)
    local b = bytes_of(make_png{rows = rows, color = 4, depth = depth, filters = {4, 3, 2, 1}})
    local name = ("gray + alpha of %d bits"):format(depth)
    check_eq(vio.decode_png(b):totable(), chw(rows), name)
    check_eq(same_as_libpng(b, name), 5, name .. ": every mode by the fast path")
  end
end)

test("fast path: RGB and RGBA of 16 bits, every filter, and libpng's own files: as written and as libpng", function()
  for _, c in ipairs{3, 4} do
    local rows = grid(5, 130, function(x, y)
      local p = {}
      for k = 1, c do p[k] = (x * 4099 * k + y * 31 + k * 7) % 65536 end
      return p
    end)
    local b = bytes_of(make_png{rows = rows, color = c == 3 and 2 or 6, depth = 16, filters = {0, 1, 2, 3, 4}})
    local name = ("%d channels of 16 bits"):format(c)
    local d = vio.decode_png(b)
    check(d.dtype == torch.uint16, name .. ": uint16")
    check_eq(d:totable(), chw(rows), name)
    check_eq(same_as_libpng(b, name), 3, name .. ": all but the gray modes by the fast path")
  end
  -- encode_png (libpng: deflate, its choice of filter per row, IDAT chunks of 8 KiB): images of several
  -- of the fast path's steps, 8 and 16 bits, smooth and noisy
  torch.manual_seed(5)
  for c = 1, 4 do
    local smooth = (torch.arange(0, c * 150 * 301):view(c, 150, 301) % 301):to(torch.uint8)
    local noisy = torch.randint(0, 256, {c, 150, 301}, {dtype = torch.int64}):to(torch.uint8)
    local deep = torch.randint(0, 65536, {c, 40, 301}, {dtype = torch.int64}):to(torch.uint16)
    for name, img in pairs{smooth = smooth, noisy = noisy, ["16-bit"] = deep} do
      for _, level in ipairs{1, 9} do
        local b = vio.encode_png(img, level)
        local label = ("%s, %d channels, level %d"):format(name, c, level)
        check(vio._png_fast(b), label .. ": fast path")
        check(vio.decode_png(b):eq(img):all():item(), label)
        same_as_libpng(b, label)
      end
    end
  end
end)

test("fast path: interlaced files (palette, 1-bit gray, 16-bit RGBA) are left to libpng and decode as written", function()
  local idx = grid(9, 11, function(x, y) return {(x * y) % 3} end)
  local plte = string.char(200, 0, 0, 0, 200, 0, 0, 0, 200)
  local b = bytes_of(make_png{rows = idx, color = 3, depth = 2, plte = plte, trns = "\40", interlace = true})
  local colors = {{200, 0, 0, 40}, {0, 200, 0, 255}, {0, 0, 200, 255}}
  check(not vio._png_fast(b), "interlaced palette")
  check_eq(vio.decode_png(b):totable(), chw(map_rows(idx, function(p) return colors[p[1] + 1] end)), "palette")
  same_as_libpng(b, "interlaced palette")
  local g = grid(7, 13, function(x, y) return {(x + 2 * y) % 2} end)
  b = bytes_of(make_png{rows = g, color = 0, depth = 1, interlace = true})
  check(not vio._png_fast(b), "interlaced 1-bit gray")
  check_eq(vio.decode_png(b, M.RGB):totable(), chw(map_rows(g, function(p) return {p[1] * 255, p[1] * 255, p[1] * 255} end)))
  local rgba = grid(6, 10, function(x, y) return {x * 6000, y * 9000, (x * y * 1111) % 65536, 65535 - x} end)
  b = bytes_of(make_png{rows = rgba, color = 6, depth = 16, interlace = true})
  check(not vio._png_fast(b), "interlaced 16-bit RGBA")
  check_eq(vio.decode_png(b):totable(), chw(rgba), "16-bit RGBA")
  same_as_libpng(b, "interlaced 16-bit RGBA")
end)

test("fast path: damaged files are left to libpng, whose error or pixels stand", function()
  local img = (torch.arange(0, 3 * 40 * 50):view(3, 40, 50) * 7 % 253):to(torch.uint8)
  local good = string_of(vio.encode_png(img, 6))
  -- the first IDAT chunk's data, its CRC made good again after each change
  local at = good:find("IDAT", 1, true) - 4
  local len = string.unpack(">I4", good, at)
  local function with_data(data)
    return bytes_of(good:sub(1, at - 1) .. chunk("IDAT", data) .. good:sub(at + 12 + len))
  end
  local data = good:sub(at + 8, at + 7 + len)
  local cases = {
    ["a bad Adler-32"] = data:sub(1, -2) .. string.char(data:byte(-1) ~ 1),
    ["a bad zlib header"] = "\x78\x9d" .. data:sub(3),
    ["a block type 3"] = data:sub(1, 2) .. string.char(data:byte(3) | 6) .. data:sub(4),
    ["the stream cut short"] = data:sub(1, #data // 2),
    ["data after the stream"] = data .. "\0\0\0",
    ["a flipped byte"] = data:sub(1, 40) .. string.char(data:byte(41) ~ 0x55) .. data:sub(42),
  }
  for name, d in pairs(cases) do
    local b = with_data(d)
    check(not vio._png_fast(b), name .. ": not by the fast path")
    same_as_libpng(b, name)
  end
  local ok, err = pcall(vio.decode_png, with_data(cases["a bad zlib header"]))
  check(not ok and err:find("PNG decoder: IDAT: incorrect header check", 1, true), "libpng's reason: " .. tostring(err))
  -- a filter type past 4
  local b = bytes_of(make_png{rows = grid(3, 4, function(x, y) return {x, y, 9} end), color = 2, depth = 8,
                              filters = {0, 7}})
  check(not vio._png_fast(b), "filter type 7")
  same_as_libpng(b, "filter type 7")
end)

test("real PNG files match an independent zlib+struct reader (png_ref.py) pixel for pixel", function()
  if not io.open("/usr/bin/python3") then return print("  (no /usr/bin/python3: cross-check skipped)") end
  local p = io.popen("find /usr/share/doc /usr/share/gitweb /usr/share/pixmaps /usr/share/icons -name '*.png' "
                     .. "-size -100k 2>/dev/null | head -40")
  local args = {}
  for path in p:lines() do
    if not path:find("'", 1, true) then args[#args + 1] = "'" .. path .. "'" end
  end
  p:close()
  if #args == 0 then return print("  (no PNG under /usr/share: cross-check skipped)") end
  local script = debug.getinfo(1, "S").source:match("^@(.*)/[^/]*$") or "tests/domains/vision"
  local q = io.popen("/usr/bin/python3 '" .. script .. "/png_ref.py' " .. table.concat(args, " ") .. " 2>&1")
  local out = q:read("a")
  q:close()
  local chunk = load(out, "png_ref.py", "t", {})
  local ref = chunk and chunk()
  check(ref ~= nil, "png_ref.py failed:\n" .. out:sub(1, 2000))
  local compared = 0
  for path, r in pairs(ref) do
    local img = vio.read_image(path)
    check_eq(img.shape[1], r[1], path .. ": channels")
    check(img.shape[2] == r[2] and img.shape[3] == r[3], path .. ": size")
    check_eq(img:permute(2, 3, 1):flatten():totable(), r[4], path .. ": pixels")
    compared = compared + 1
  end
  print(("  (%d real PNGs compared)"):format(compared))
end)

test("bad input raises an error naming the function and the reason", function()
  local good = string_of(vio.encode_png(torch.zeros(3, 4, 4, {dtype = torch.uint8})))
  local jpg = string_of(vio.encode_jpeg(smooth(3, 16, 16)))
  check_error(function() vio.decode_png(bytes_of("GIF89a........")) end, "decode_png: PNG decoder: not a PNG file")
  check_error(function() vio.decode_png(bytes_of(jpg)) end, "not a PNG file")
  check_error(function() vio.decode_jpeg(bytes_of(good)) end, "decode_jpeg: JPEG decoder: not a JPEG file")
  check_error(function() vio.decode_image(bytes_of("hello world")) end, "decode_image: not a PNG, JPEG or WebP file")
  check_error(function() vio.decode_image(torch.zeros(0, {dtype = torch.uint8})) end, "not a PNG, JPEG or WebP file")
  check_error(function() vio.decode_png(bytes_of(good:sub(1, 40))) end, "PNG decoder: the file is truncated")
  check_error(function() vio.decode_jpeg(bytes_of(jpg:sub(1, #jpg // 2))) end, "JPEG decoder: Premature end")
  local bad_crc = good:sub(1, 30) .. string.char(good:byte(31) ~ 1) .. good:sub(32)
  check_error(function() vio.decode_png(bytes_of(bad_crc)) end, "PNG decoder:")
  local zero = "\x89PNG\r\n\x1a\n" .. chunk("IHDR", string.pack(">I4I4BBBBB", 0, 4, 8, 0, 0, 0, 0))
  check_error(function() vio.decode_png(bytes_of(zero)) end, "PNG decoder:")
  local huge = "\x89PNG\r\n\x1a\n" .. chunk("IHDR", string.pack(">I4I4BBBBB", 900000, 900000, 16, 6, 0, 0, 0))
      .. chunk("IDAT", zlib_stored("\0")) .. chunk("IEND", "")
  check_error(function() vio.decode_png(bytes_of(huge)) end, "too large")
  local sof = jpg:find("\xFF\xC0", 1, true)
  local big = jpg:sub(1, sof + 4) .. string.pack(">I2I2", 60000, 60000) .. jpg:sub(sof + 9)
  check_error(function() vio.decode_jpeg(bytes_of(big)) end, "JPEG decoder: an image of 60000 x 60000 pixels is too large")
  local rows = grid(2, 2, function() return {1} end)
  check_error(function() vio.decode_png(bytes_of(make_png{rows = rows, color = 3, depth = 8})) end, "PNG decoder:")
  check_error(function() vio.decode_png(bytes_of(good), "BGR") end, "unknown mode 'BGR'")
  check_error(function() vio.decode_png(bytes_of(good), 7) end, "mode must be a value of torch.vision.io.ImageReadMode")
  check_error(function() vio.decode_png(bytes_of(good), {mod = 1}) end, "unknown option 'mod'")
  check_error(function() vio.decode_png(torch.zeros(5)) end, "decode_png: data must be a 1-D uint8 CPU tensor")
  check_error(function() vio.decode_png("abc") end, "decode_png")
end)

test("bad images to encode and bad paths raise errors naming the function", function()
  local u8 = function(...) return torch.zeros({...}, {dtype = torch.uint8}) end
  check_error(function() vio.encode_png(torch.zeros(3, 4, 4)) end, "encode_png: the image must be a uint8 or uint16 CPU tensor")
  check_error(function() vio.encode_png(u8(4, 4)) end, "encode_png: the image must be a uint8 or uint16 CPU tensor of shape C x H x W, got a 2-D")
  check_error(function() vio.encode_png(u8(5, 4, 4)) end, "encode_png: the image has 5 channels (expected 1, 2, 3 or 4)")
  check_error(function() vio.encode_jpeg(u8(4, 4, 4)) end, "encode_jpeg: the image has 4 channels (expected 1 or 3)")
  check_error(function() vio.encode_jpeg(u8(2, 4, 4)) end, "expected 1 or 3")
  check_error(function() vio.encode_png(u8(3, 0, 4)) end, "encode_png: the image has no pixels")
  check_error(function() vio.encode_jpeg(u8(3, 4, 4), 0) end, "encode_jpeg: quality must be in 1..100, got 0")
  check_error(function() vio.encode_png(u8(3, 4, 4), 10) end, "encode_png: compression_level must be in 0..9, got 10")
  check_error(function() vio.encode_jpeg(u8(3, 70000, 1)) end, "encode_jpeg: JPEG encoder: an image of 70000 x 1 pixels")
  check_error(function() vio.read_image(P("missing.png")) end, "torch.vision.io.read_image: " .. P("missing.png") .. ": No such file")
  check_error(function() vio.read_file(P("missing.bin")) end, "torch.vision.io.read_file: " .. P("missing.bin"))
  check_error(function() vio.read_image(dir) end, "torch.vision.io.read_image: " .. dir)
  check_error(function() vio.write_png(u8(1, 2, 2), P("no/such/dir.png")) end, "write_png: " .. P("no/such/dir.png"))
  check_error(function() vio.write_jpeg(u8(1, 2, 2), 5) end, "write_jpeg: argument #2 must be a file path")
  vio.write_file(P("text.txt"), bytes_of("not an image"))
  check_error(function() vio.read_image(P("text.txt")) end, "read_image: " .. P("text.txt") .. ": not a PNG, JPEG or WebP file")
end)

os.execute("rm -rf '" .. dir .. "'")
