-- torch.vision.io -- reading files into tensors: read_idx (the idx format
-- of MNIST and Fashion-MNIST, plain or gzip). The readers are C
-- (domains/vision/l_io.c over idx.c).
local C = require "torch.vision._io"

return {
  __help = "torch.vision.io: read_idx(path)",
  read_idx = C.read_idx,
}
