-- tests/experiment/fake_train.lua -- a stand-in training script for the sweep
-- tests: logs loss = 1 / (1 + lr * step) (--lr) for --steps steps, sleeping --sleep
-- seconds after each; --fail-at K exits with an error at step K, --nan-at K
-- logs NaN from step K on. Mentions --threads and --checkpoint (which it
-- accepts) like the real scripts do.
local torch = require "torch"
local experiment = require "torch.experiment"

local o = {steps = 5, sleep = 0, lr = 0.1, fail_at = -1, nan_at = -1, seed = 0, threads = 1, checkpoint = ""}
local i = 1
while i <= #arg do
  local key = arg[i]:match("^%-%-([%w%-]+)$")
  if not key then error("fake_train: unknown argument " .. arg[i], 0) end
  key = key:gsub("%-", "_")
  if o[key] == nil then error("fake_train: unknown option --" .. key, 0) end
  o[key] = type(o[key]) == "number" and assert(tonumber(arg[i + 1]), "--" .. key .. " needs a number") or arg[i + 1]
  i = i + 2
end
for step = 1, o.steps do
  if step == o.fail_at then
    io.stderr:write("fake_train: failing at step ", step, " as asked\n")
    os.exit(1)
  end
  local loss = (o.nan_at > 0 and step >= o.nan_at) and 0 / 0 or 1 / (1 + o.lr * step) + o.seed * 0.01
  experiment.log{step = step, loss = loss, accuracy = 1 - loss}
  if o.sleep > 0 then require("torch.experiment._proc").sleep(o.sleep) end
end
if o.checkpoint ~= "" then
  local f = assert(io.open(o.checkpoint, "w"))
  f:write("fake checkpoint\n")
  f:close()
end
print(("fake_train: %d steps, lr %g, %d threads"):format(o.steps, o.lr, o.threads))
