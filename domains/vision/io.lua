-- torch.vision.io -- reading files into tensors: read_idx (the idx format
-- of MNIST and Fashion-MNIST, plain or gzip) and, as torchvision.io, PNG,
-- JPEG and WebP images as uint8 (16-bit PNGs: uint16) C x H x W tensors. The
-- readers and writers are C (domains/vision/l_io.c over idx.c; l_image.c
-- over image_decode.c, png.c, png_fast.c, png_decode.c, jpeg.c, jpeg_cuda.c,
-- webp.c).
local C = require "torch.vision._io"
local I = require "torch.vision._image"

-- torchvision.io.ImageReadMode: what decode_* and read_image convert to
local ImageReadMode = {UNCHANGED = 0, GRAY = 1, GRAY_ALPHA = 2, RGB = 3, RGB_ALPHA = 4}

return {
  __help = "torch.vision.io: read_idx(path); read_file, write_file, decode_png, decode_jpeg, decode_webp, decode_image, "
    .. "read_image, encode_png, write_png, encode_jpeg, write_jpeg; ImageReadMode",
  read_idx = C.read_idx,
  ImageReadMode = ImageReadMode,
  read_file = I.read_file,
  write_file = I.write_file,
  decode_png = I.decode_png,
  decode_jpeg = I.decode_jpeg,
  decode_webp = I.decode_webp,
  decode_image = I.decode_image,
  read_image = I.read_image,
  encode_png = I.encode_png,
  write_png = I.write_png,
  encode_jpeg = I.encode_jpeg,
  write_jpeg = I.write_jpeg,
  _jpeg_orientation = I._jpeg_orientation,
  _nvjpeg_version = I._nvjpeg_version,
  _decode_png_libpng = I._decode_png_libpng,
  _png_fast = I._png_fast,
}
