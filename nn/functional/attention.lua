-- torch.nn.functional attention: scaled_dot_product_attention with PyTorch's
-- argument names. The backend (cudnn, flash or math) is picked in C (graph/
-- attention.c) by the selection rule and torch.backends.sdp_kernel.
local torch = require "torch"

local F = {}

-- scaled_dot_product_attention(query, key, value[, attn_mask, dropout_p,
-- is_causal, scale, enable_gqa]) or with a trailing options table.
function F.scaled_dot_product_attention(q, k, v, ...)
  return torch.scaled_dot_product_attention(q, k, v, ...)
end

return F
