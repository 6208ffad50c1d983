-- torch.cuda.amp -- PyTorch's older names for CUDA mixed precision:
-- autocast([dtype][, opts][, fn]) is torch.autocast('cuda', ...) and
-- GradScaler([opts]) is torch.amp.GradScaler('cuda', opts).
local amp = require "torch.amp"

return {
  __help = "torch.cuda.amp: autocast([dtype][, opts][, fn]), GradScaler([opts]) -- torch.amp for 'cuda'",
  autocast = function(...) return amp.autocast("cuda", ...) end,
  GradScaler = function(opts) return amp.GradScaler("cuda", opts) end,
}
