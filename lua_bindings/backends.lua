-- torch.backends -- switches of the engine's backends. sdp_kernel turns the
-- scaled dot product attention backends on and off for this thread and
-- returns a guard that restores the previous setting when closed:
--   local g <close> = torch.backends.sdp_kernel{flash = false}
local torch = require "torch"
local U = require "torch.nn.util"

local M = {__help = "torch.backends: backend switches (sdp_kernel, sdp_selected, cudnn)"}

local Guard = {}
Guard.__index = Guard
function Guard:close()
  if self.prev then
    torch._sdp_enabled(self.prev)
    self.prev = nil
  end
end
Guard.__close = Guard.close
Guard.__name = "torch.backends.SdpGuard"

-- sdp_kernel{flash=, math=, cudnn=} -> a guard (call :close() or use <close>).
-- Absent keys keep their setting; cudnn (cuDNN fused attention) only ever
-- runs CUDA float16/bfloat16 inputs.
function M.sdp_kernel(opts)
  opts = opts or {}
  if type(opts) ~= "table" then
    error("torch.backends.sdp_kernel: expected a table {flash=, math=}, got " .. type(opts), 2)
  end
  torch._check_options("torch.backends.sdp_kernel", opts, "flash math cudnn")
  for k, v in pairs(opts) do
    if type(v) ~= "boolean" then
      error(("torch.backends.sdp_kernel: %s must be true or false, got %s"):format(k, type(v)), 2)
    end
  end
  local prev = torch._sdp_enabled{flash = opts.flash, math = opts.math, cudnn = opts.cudnn}
  return setmetatable({prev = prev}, Guard)
end

-- The enabled backends as {flash=, math=, cudnn=}.
function M.sdp_enabled() return torch._sdp_enabled() end

-- sdp_selected(q, k, v[, opts]) -> "cudnn", "flash" or "math": the backend
-- that F.scaled_dot_product_attention would run for these inputs, and a list
-- of one-line notes "backend: why" for the backends preferred to it (on
-- CUDA cudnn, flash, math; on the CPU flash, math) that were passed over,
-- e.g. "cudnn: head dim 96 unsupported (64 and 128; 256 without grad)".
function M.sdp_selected(q, k, v, opts) return torch._sdp_selected(q, k, v, opts) end

-- torch.backends.cudnn: cuDNN for CUDA convolutions (tensor/cuda/cudnn.c),
-- 2-D pooling and batch norm (cudnn_ops.c). is_available(), version()
-- (e.g. 91900; nil without cuDNN), stats() (counters: convs, declined,
-- last_declined, load_error, pools, norms, ops_declined, route) and the
-- field `enabled` (true by default; false routes convolutions to im2col +
-- cuBLAS and pooling/batch norm to our kernels). torch._cudnn{route=
-- "auto"|"cudnn"|"native"} picks for pooling and batch norm (auto: cuDNN
-- where it measured faster).
-- Algorithms are always deterministic ones; `benchmark` and `deterministic`
-- may be set and are kept, as plain fields.
local cudnn = {}
function cudnn.is_available() return torch._cudnn().available end
function cudnn.version()
  local v = torch._cudnn().version
  return v > 0 and v or nil
end
function cudnn.stats() return torch._cudnn() end
setmetatable(cudnn, {
  __index = function(_, k) if k == "enabled" then return torch._cudnn().enabled end end,
  __newindex = function(t, k, v)
    if k == "enabled" then
      if type(v) ~= "boolean" then
        error("torch.backends.cudnn.enabled must be true or false, got " .. type(v), 2)
      end
      torch._cudnn{enabled = v}
    else
      rawset(t, k, v)
    end
  end,
})
M.cudnn = cudnn

-- public entry points: errors raised inside name the function at the caller's line
U.public_table(M, "torch.backends.")

U.doc(M, {
  sdp_kernel = "torch.backends.sdp_kernel{flash=, math=, cudnn=} -- enable/disable attention backends; returns a "
    .. "guard that restores them (local g <close> = ...)",
  sdp_enabled = "torch.backends.sdp_enabled() -- {flash=, math=, cudnn=}: the attention backends enabled on this "
    .. "thread",
  sdp_selected = "torch.backends.sdp_selected(q, k, v[, opts]) -- 'cudnn', 'flash' or 'math': the attention backend "
    .. "that would run, and {'backend: why', ...} for the backends passed over",
})

return M
