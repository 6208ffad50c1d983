-- tests/jit/jitlib.lua -- helpers of the JIT tests: running a snippet in a
-- child moontorch with a chosen environment (cache dir, CC, MOONTORCH_JIT)
-- and reading back what it printed; a model with a training step.
local M = {}

M.exe = (arg and arg[-1] and arg[-1]:match("moontorch$")) and arg[-1] or "build/moontorch"

function M.tmpdir()
  local p = io.popen("mktemp -d /tmp/mt-jit-test.XXXXXX")
  local d = p:read("l")
  p:close()
  return d
end

-- Runs lua code in a child with env (a string like "A=1 B=2"); returns stdout+stderr.
function M.child(env, code)
  local f = os.tmpname()
  local h = io.open(f, "w")
  h:write(code)
  h:close()
  local p = io.popen(env .. " '" .. M.exe .. "' '" .. f .. "' 2>&1")
  local out = p:read("a")
  p:close()
  os.remove(f)
  return out
end

-- A model from make(), its optimizer make_opt(params) and a training step
-- step(x, y) (cross entropy, backward, optimizer step; returns the loss);
-- seed fixes the weights. Returns m, opt, step.
function M.train_setup(make, make_opt, seed)
  local torch = require "torch"
  local nn = require "torch.nn"
  torch.manual_seed(seed)
  local m = make()
  local opt = make_opt(m:parameters())
  local lf = nn.CrossEntropyLoss()
  local function step(x, y)
    opt:zero_grad()
    local loss = lf(m(x), y)
    loss:backward()
    opt:step()
    return loss
  end
  return m, opt, step
end

return M
