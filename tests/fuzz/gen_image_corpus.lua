-- tests/fuzz/gen_image_corpus.lua -- writes the seed corpora of fuzz_png and
-- fuzz_jpeg (tests/fuzz/corpus_png/, corpus_jpeg/) with moontorch's own
-- encoders: small smooth images at every channel count, plus a JPEG with an
-- EXIF orientation. tests/io/test_fuzz_replay.lua replays them.
-- Run: build/moontorch tests/fuzz/gen_image_corpus.lua   (from the repository root)
local vio = torch.vision.io

local function image(c, h, w)
  local t = torch.zeros(c, h, w)
  for k = 1, c do
    t[k] = torch.arange(0, h):reshape(h, 1):float() * (3 + k) + torch.arange(0, w):reshape(1, w):float() * (7 - k)
  end
  return t:clamp(0, 255):to(torch.uint8)
end

for c = 1, 4 do
  vio.write_png(image(c, 8, 8), ("tests/fuzz/corpus_png/c%d_8x8.png"):format(c))
  vio.write_png(image(c, 3, 17), ("tests/fuzz/corpus_png/c%d_3x17.png"):format(c), 9)
end
for _, c in ipairs{1, 3} do
  vio.write_jpeg(image(c, 16, 16), ("tests/fuzz/corpus_jpeg/c%d_q50.jpg"):format(c), 50)
  vio.write_jpeg(image(c, 9, 23), ("tests/fuzz/corpus_jpeg/c%d_q95.jpg"):format(c), 95)
end
-- an APP1 Exif segment (orientation 6) after SOI
local f = assert(io.open("tests/fuzz/corpus_jpeg/c3_q50.jpg", "rb"))
local s = f:read("a")
f:close()
local app1 = "Exif\0\0MM\0\42" .. string.pack(">I4I2I2I2I4I2I2I4", 8, 1, 0x0112, 3, 1, 6, 0, 0)
f = assert(io.open("tests/fuzz/corpus_jpeg/exif6.jpg", "wb"))
f:write(s:sub(1, 2) .. "\xFF\xE1" .. string.pack(">I2", #app1 + 2) .. app1 .. s:sub(3))
f:close()
