-- torch.backends -- switches of the engine's backends. sdp_kernel turns the
-- scaled dot product attention backends on and off for this thread and
-- returns a guard that restores the previous setting when closed:
--   local g <close> = torch.backends.sdp_kernel{flash = false}
local torch = require "torch"
local U = require "torch.nn.util"

local M = {__help = "torch.backends: backend switches (sdp_kernel, sdp_selected)"}

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

local KNOWN = {flash = true, math = true, cudnn = true}

-- sdp_kernel{flash=, math=, cudnn=} -> a guard (call :close() or use <close>).
-- Absent keys keep their setting; cudnn is accepted and ignored on the CPU.
function M.sdp_kernel(opts)
  opts = opts or {}
  if type(opts) ~= "table" then
    error("torch.backends.sdp_kernel: expected a table {flash=, math=}, got " .. type(opts), 2)
  end
  for k, v in pairs(opts) do
    if not KNOWN[k] then
      error(("torch.backends.sdp_kernel: unknown backend '%s' (known: flash, math, cudnn)"):format(tostring(k)), 2)
    end
    if type(v) ~= "boolean" then
      error(("torch.backends.sdp_kernel: %s must be true or false, got %s"):format(k, type(v)), 2)
    end
  end
  local prev = torch._sdp_enabled{flash = opts.flash, math = opts.math}
  return setmetatable({prev = prev}, Guard)
end

-- The enabled backends as {flash=, math=}.
function M.sdp_enabled() return torch._sdp_enabled() end

-- sdp_selected(q, k, v[, opts]) -> "flash" or "math": the backend that
-- F.scaled_dot_product_attention would run for these inputs.
function M.sdp_selected(q, k, v, opts) return torch._sdp_selected(q, k, v, opts) end

U.doc(M, {
  sdp_kernel = "torch.backends.sdp_kernel{flash=, math=, cudnn=} -- enable/disable attention backends; returns a "
    .. "guard that restores them (local g <close> = ...)",
  sdp_enabled = "torch.backends.sdp_enabled() -- {flash=, math=}: the attention backends enabled on this thread",
  sdp_selected = "torch.backends.sdp_selected(q, k, v[, opts]) -- 'flash' or 'math': the attention backend that "
    .. "would run",
})

return M
