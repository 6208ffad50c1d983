-- tests/cuda/convlib.lua -- comparison helpers of the GPU convolution tests
-- (test_cuda_conv.lua, test_cuda_cudnn.lua). new(t, rel) takes the test
-- file's check and check_eq (t) and a relative tolerance per dtype, and
-- returns:
--   same(g, c, dt, what): g on CUDA, c's dtype, and max |g - c| <=
--     rel[dt] * max(1, max |c|) (convolution algorithms differ from the
--     CPU's sums by a fraction of the largest value, not of each value);
--   compare(f, xs, ws, bs, dt, what): f(x, w, b) on the CPU and on CUDA
--     with gradients for all three (the upstream gradient random too),
--     outputs and gradients compared by same;
--   worst(): the largest float32 error over scale seen so far.
local torch = require "torch"
local M = {}

function M.new(t, rel)
  local worst = 0
  local function same(g, c, dt, what)
    t.check(g.is_cuda, what .. " stays on cuda")
    t.check_eq(g.dtype, c.dtype, what .. " dtype")
    local gd, cd = g:cpu():double(), c:double()
    local err, scale = (gd - cd):abs():max():item(), math.max(1, cd:abs():max():item())
    if dt == torch.float32 then worst = math.max(worst, err / scale) end
    t.check(err <= rel[dt] * scale, ("%s: max error %.3g over scale %.3g (allowed %.1g relative)"):format(what, err,
      scale, rel[dt]))
  end
  local function compare(f, xs, ws, bs, dt, what)
    local x, w = torch.randn(table.unpack(xs)):to(dt), torch.randn(table.unpack(ws)):to(dt)
    local b = bs and torch.randn(bs):to(dt) or nil
    local function run(dev)
      local xd, wd = x:to(dev):requires_grad_(), w:to(dev):requires_grad_()
      local bd = b and b:to(dev):requires_grad_() or nil
      local y = f(xd, wd, bd)
      local g = torch.randn(table.unpack(y:size())):to(dt):to(dev)
      ;(y * g):sum():backward()
      return y, xd.grad, wd.grad, bd and bd.grad
    end
    torch.manual_seed(7)
    local yc, gxc, gwc, gbc = run("cpu")
    torch.manual_seed(7)
    local yg, gxg, gwg, gbg = run("cuda")
    same(yg, yc, dt, what .. " output")
    same(gxg, gxc, dt, what .. " grad input")
    same(gwg, gwc, dt, what .. " grad weight")
    if b then same(gbg, gbc, dt, what .. " grad bias") end
  end
  return same, compare, function() return worst end
end

return M
