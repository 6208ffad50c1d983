-- bench/train.lua -- training throughput: the Fashion-MNIST CNN (batch 64,
-- Adam) and a 784-256-10 MLP (batch 128, SGD with momentum), on random data
-- of the right shapes, samples per second over a fixed number of steps.
package.path = "bench/?.lua;" .. package.path
local torch = require "torch"
local nn = require "torch.nn"
local optim = require "torch.optim"
local B = require "common"
local only = arg and arg[1]
local function want(name) return not only or only == name end

local function bench(name, model, opt, bs, shape, steps)
  local x = torch.randn(shape)
  local y = torch.randint(1, 11, {bs})
  local loss_fn = nn.CrossEntropyLoss()
  local s = B.time(function()
    local loss = loss_fn(model(x), y)
    opt:zero_grad()
    loss:backward()
    opt:step()
  end, steps, 5)
  B.report(name, s, bs / s, "samples/s")
end

if want("train_cnn") then
  local m = B.fmnist_cnn()
  bench("train_cnn", m, optim.Adam(m:parameters(), {lr = 1e-3}), 64, {64, 1, 28, 28}, 20)
end

if want("train_mlp") then
  torch.manual_seed(0)
  local m = nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 10))
  bench("train_mlp", m, optim.SGD(m:parameters(), {lr = 0.01, momentum = 0.9}), 128, {128, 784}, 50)
end

-- Times a compiled step against the eager one in this process, interleaved
-- (5 rounds of 10 steps each, medians); the eager figure is the row's peer.
local function against_eager(name, eager, compiled, bs)
  local te, tc = {}, {}
  for r = 1, 5 do
    te[r] = B.time(eager, 10, 1)
    tc[r] = B.time(compiled, 10, 1)
  end
  table.sort(te)
  table.sort(tc)
  B.report(name, tc[3], bs / tc[3], "samples/s")
  print(("SELFPEER %s %.9g %.6g samples/s"):format(name, te[3], bs / te[3]))
end

-- The compiled training step (torch.compile of forward + backward + Adam)
-- against our own eager step, both timed in this process, interleaved; the
-- peer column of this row is our eager step (SELFPEER), not PyTorch.
if want("train_cnn_compiled") then
  local m = B.fmnist_cnn()
  local opt = optim.Adam(m:parameters(), {lr = 1e-3})
  local x, y = torch.randn(64, 1, 28, 28), torch.randint(1, 11, {64})
  local loss_fn = nn.CrossEntropyLoss()
  local function step()
    opt:zero_grad()
    local loss = loss_fn(m(x), y)
    loss:backward()
    opt:step()
    return loss
  end
  against_eager("train_cnn_compiled", step, torch.compile(step), 64)
end

-- torch.compile(model) in an eager training loop: the forward and its
-- backward compiled (two graphs, one autograd node), loss, backward call
-- and Adam eager; against the same loop on the uncompiled model (SELFPEER).
if want("train_cnn_compiled_model") then
  local m = B.fmnist_cnn()
  local cm = torch.compile(m)
  local opt = optim.Adam(m:parameters(), {lr = 1e-3})
  local x, y = torch.randn(64, 1, 28, 28), torch.randint(1, 11, {64})
  local loss_fn = nn.CrossEntropyLoss()
  local function step_with(model)
    return function()
      opt:zero_grad()
      local loss = loss_fn(model(x), y)
      loss:backward()
      opt:step()
    end
  end
  against_eager("train_cnn_compiled_model", step_with(m), step_with(cm), 64)
end
