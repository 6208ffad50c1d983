-- tests/domains/vision/test_webp.lua -- torch.vision.io.decode_webp and
-- WebP in decode_image/read_image (domains/vision/webp.c over libwebp).
-- The files in tests/domains/vision/webp/ were written once by PIL
-- (tests/ref/gen_vision_webp.py): lossless ones must decode to the exact
-- pattern pix() below, lossy ones to PIL's decoded pixels
-- (tests/ref/vision_webp.lua); then one error per kind of bad input.
cpu_only("a file decoder")

local vio = torch.vision.io
local M = vio.ImageReadMode
local R = ref("vision_webp")
local here = debug.getinfo(1, "S").source:match("^@(.*)/[^/]*$") or "tests/domains/vision"
local function F(name) return here .. "/webp/" .. name .. ".webp" end

-- the pattern of gen_vision_webp.py's pix(), as a C x H x W uint8 tensor
local function pix(h, w, c, seed)
  local t = torch.zeros(c, h, w, {dtype = torch.int64})
  local y = torch.arange(0, h):view(h, 1)
  local x = torch.arange(0, w):view(1, w)
  for k = 0, c - 1 do
    if k == 3 then t[k + 1] = (y * 13 + x * 7 + seed) % 256
    else t[k + 1] = (y * 31 + x * 17 + 59 * k + seed) % 256 end
  end
  return t:to(torch.uint8)
end

test("lossless RGB and RGBA WebP decode to the exact pixels PIL encoded", function()
  for _, name in ipairs({"rgb_lossless", "rgba_lossless"}) do
    local r = R[name]
    local img = vio.decode_webp(vio.read_file(F(name)))
    check_eq(img.dtype, torch.uint8, name)
    check_shape(img, {r.c, r.h, r.w})
    check(img:equal(pix(r.h, r.w, r.c, r.seed)), name .. " pixels")
    check(vio.read_image(F(name)):equal(img), name .. " read_image")
    check(vio.decode_image(vio.read_file(F(name))):equal(img), name .. " decode_image")
  end
end)

test("lossy WebP decodes to PIL's pixels (same libwebp decoder)", function()
  for _, name in ipairs({"rgb_lossy", "rgba_lossy"}) do
    local r = R[name]
    local img = vio.read_image(F(name))
    check_shape(img, {r.c, r.h, r.w})
    check_close(img:flatten():long(), r.chw, {atol = 1}) -- libwebp may round the chroma upsampling differently
    local exact = img:flatten():long():eq(torch.tensor(r.chw)):sum():item()
    check(exact >= img:numel() * 0.95, ("%d of %d values exact"):format(exact, img:numel()))
  end
end)

test("decode_webp modes: RGB drops alpha, RGB_ALPHA adds an opaque one; gray modes are refused", function()
  local rgba = vio.decode_webp(vio.read_file(F("rgba_lossless")))
  local rgb = vio.decode_webp(vio.read_file(F("rgba_lossless")), M.RGB)
  check(rgb:equal(rgba:narrow(1, 1, 3)), "RGB = the first three channels")
  local plain = vio.read_file(F("rgb_lossless"))
  local withalpha = vio.decode_webp(plain, {mode = M.RGB_ALPHA})
  check_shape(withalpha, {4, 5, 7})
  check(withalpha:narrow(1, 1, 3):equal(vio.decode_webp(plain)), "colour kept")
  check(withalpha[4]:eq(255):all():item(), "opaque alpha")
  check(vio.decode_webp(plain, "RGB"):equal(vio.decode_webp(plain)), "mode by name")
  check_error(function() vio.decode_webp(plain, M.GRAY) end, "decode_webp: WebP decoder: mode GRAY is not supported")
  check_error(function() vio.read_image(F("rgb_lossless"), M.GRAY_ALPHA) end, "mode GRAY_ALPHA is not supported")
end)

test("bad WebP input is a clear error, never a crash", function()
  local data = vio.read_file(F("rgb_lossy"))
  check_error(function() vio.decode_webp(data:narrow(1, 1, 40)) end, "decode_webp: WebP decoder:")
  check_error(function() vio.decode_webp(data:narrow(1, 1, 10)) end, "decode_webp: WebP decoder:")
  check_error(function() vio.decode_webp(torch.zeros(0, {dtype = torch.uint8})) end, "decode_webp")
  check_error(function() vio.decode_webp(vio.encode_png(torch.zeros(3, 2, 2, {dtype = torch.uint8}))) end,
    "decode_webp: WebP decoder:")
  check_error(function() vio.decode_webp(data:float()) end, "decode_webp: data must be a 1-D uint8 CPU tensor")
  check_error(function() vio.decode_webp(data, {bogus = 1}) end, "decode_webp")
  -- a damaged payload: flip bytes past the header
  local bad = data:clone()
  for i = 31, 60 do bad[i] = 255 - bad[i]:item() end
  local ok, err = pcall(vio.decode_webp, bad)
  check(ok or tostring(err):find("WebP decoder", 1, true), "a damaged payload decodes or errors cleanly")
  -- the format is sniffed: a truncated RIFF header is not WebP
  check_error(function() vio.decode_image(data:narrow(1, 1, 11)) end, "not a PNG, JPEG or WebP file")
end)

if io.open("/usr/bin/python3") and os.execute("/usr/bin/python3 -c 'import PIL.WebPImagePlugin' 2>/dev/null") then
  test("a WebP written live by PIL decodes to PIL's own pixels", function()
    local path = os.tmpname()
    local cmd = ([[/usr/bin/python3 -c "
from PIL import Image
img = Image.new('RGB', (9, 4))
img.putdata([((x * 29 + y * 3) %% 256, (x * y * 11) %% 256, 200 - x - y) for y in range(4) for x in range(9)])
img.save('%s', 'WEBP', lossless=True)
print(','.join(str(v) for b in img.split() for v in b.getdata()))"]]):format(path)
    local p = io.popen(cmd)
    local out = p:read("a")
    p:close()
    local want = {}
    for v in out:gmatch("%d+") do want[#want + 1] = tonumber(v) end
    local img = vio.read_image(path)
    os.remove(path)
    check_shape(img, {3, 4, 9})
    check_eq(img:flatten():long():totable(), want)
  end)
end
