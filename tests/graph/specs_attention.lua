-- tests/graph/specs_attention.lua -- gradcheck cases for the flash attention
-- op (see test_gradcheck.lua). Second order runs through the create_graph
-- derivative (recorded math ops). Small tiles (2 x 3) make several partial
-- tiles per row and column.
local G = require "gradlib"
local R, NC, C = G.R, G.NC, G.C

local f64 = {dtype = torch.float64}

-- the output of the flash backend (not its lse), with tile sizes bq x bk.
-- The flash backend is the CPU kernel (GPU kernels are another issue):
-- under a GPU test device it runs on CPU copies, and its result goes back.
local function flash(opts, bq, bk)
  return function(q, k, v)
    local dev = q.device
    if q.is_cuda then
      q, k, v = q:cpu(), k:cpu(), v:cpu()
      if opts and opts.attn_mask then
        local o = {}
        for key, val in pairs(opts) do o[key] = val end
        o.attn_mask = opts.attn_mask:cpu()
        opts = o
      end
    end
    local oq, ok = torch._sdpa_blocks(bq or 0, bk or 0)
    local good, y = pcall(function() return (torch._sdpa_flash(q, k, v, opts)):to(dev) end)
    torch._sdpa_blocks(oq, ok)
    if not good then error(y, 0) end
    return y
  end
end

return {
  -- cuDNN runs float16/bfloat16 only, where finite differences mean nothing:
  -- its gradients are checked against the float32 math backend on the GPU
  -- instead (tests/cuda/test_cuda_sdpa_cudnn.lua).
  sdpa_cudnn = {},
  sdpa_flash = {
    {fn = flash(), inputs = function() return {R(2, 2, 5, 3), R(2, 2, 6, 3), R(2, 2, 6, 4)} end, second_order = true},
    {fn = flash(nil, 2, 3), inputs = function() return {R(1, 2, 7, 3), R(1, 2, 8, 3), R(1, 2, 8, 2)} end},
    {fn = flash({is_causal = true}, 2, 3), inputs = function() return {R(2, 6, 3), R(2, 6, 3), R(2, 6, 2)} end,
     second_order = true},
    {fn = flash({is_causal = true}), inputs = function() return {R(1, 4, 3), R(1, 7, 3), R(1, 7, 3)} end},
    {fn = function(q, k, v)
       return flash({attn_mask = torch.tensor({{true, false, true, true}, {false, false, true, false},
                                              {true, true, true, true}})}, 2, 3)(q, k, v)
     end,
     inputs = function() return {R(2, 3, 3), R(2, 4, 3), R(2, 4, 2)} end, second_order = true},
    {fn = function(q, k, v, m) return flash({attn_mask = m}, 2, 2)(q, k, v) end,
     inputs = function() return {R(2, 2, 3, 3), R(2, 2, 5, 3), R(2, 2, 5, 2), C(torch.randn({2, 1, 5}, f64))} end,
     second_order = true},
    {fn = flash({enable_gqa = true, scale = 0.7}, 2, 2),
     inputs = function() return {R(1, 4, 3, 2), R(1, 2, 5, 2), R(1, 2, 5, 3)} end, second_order = true},
    {fn = flash(), inputs = function() return {NC(2, 4, 3), NC(2, 5, 3), R(2, 5, 2)} end},
  },
}
