-- torch.amp -- automatic mixed precision: autocast regions (autocast.lua)
-- and loss scaling for float16 training (grad_scaler.lua). torch.autocast
-- and torch.cuda.amp are the same objects under PyTorch's other names.
return {
  __help = "torch.amp: autocast(device_type, dtype|{dtype=, enabled=, cache_enabled=}[, fn]), "
           .. "GradScaler([device][, {init_scale=, growth_factor=, backoff_factor=, growth_interval=, enabled=}])",
  autocast = require "torch.amp.autocast",
  GradScaler = require "torch.amp.grad_scaler",
}
