-- scripts/train_fashion_mnist.lua -- the main job: trains a CNN (or an MLP)
-- on Fashion-MNIST on the CPU, with a progress bar (loss, samples/s, ETA),
-- test accuracy after each epoch, a checkpoint per epoch, and --resume.
--
--   moontorch scripts/train_fashion_mnist.lua [--epochs 5] [--batch-size 64]
--       [--lr 0.001] [--model cnn|mlp] [--threads N] [--workers 2]
--       [--data DIR] [--checkpoint PATH] [--resume] [--seed 0] [--limit N]
--       [--schedule cosine|none] [--compile] [--device cpu|cuda]
--
-- --data takes any directory with the four MNIST-format idx files (gzip or
-- not), so real MNIST works too; the default is Debian's
-- dataset-fashion-mnist package. --limit trains on the first N samples
-- (quick checks). The learning rate follows a cosine from --lr down to 0
-- over all the steps of the run (--schedule none keeps it constant).
-- --compile runs each training step (forward, backward, optimizer update)
-- as one graph compiled by torch.compile. --device cuda trains on the GPU
-- (batches are made on the host and copied; see docs/cuda.md).
-- Run by `moontorch sweep`, it logs train_loss every tenth of an epoch and
-- test_loss / test_accuracy after each epoch through torch.experiment.log.
local torch = require "torch"
package.path = (arg and arg[0] and arg[0]:match("^(.*)/") or ".") .. "/?.lua;" .. package.path -- train_progress.lua, train_options.lua
local progress = require("train_progress").show
local options = require "train_options"
local nn = require "torch.nn"
local optim = require "torch.optim"
local data = require "torch.utils.data"
local datasets = require "torch.vision.datasets"
local experiment = require "torch.experiment"

local function parse(argv)
  local o = {epochs = 5, batch_size = 64, lr = 1e-3, model = "cnn", threads = nil, workers = 2,
    data = datasets.FASHION_MNIST_DIR, checkpoint = "fashion_mnist.ckpt", resume = false, seed = 0, limit = nil,
    schedule = "cosine", compile = false, device = "cpu"}
  local numeric = {epochs = "int", batch_size = "int", lr = "num", threads = "int", workers = "int", seed = "int",
    limit = "int"}
  options.parse(argv, o, numeric, {resume = true, compile = true})
  if o.model ~= "cnn" and o.model ~= "mlp" then error("--model must be cnn or mlp, got '" .. o.model .. "'", 0) end
  if o.schedule ~= "cosine" and o.schedule ~= "none" then
    error("--schedule must be cosine or none, got '" .. o.schedule .. "'", 0)
  end
  options.check_device(o)
  return o
end

local function build(kind)
  if kind == "mlp" then
    return nn.Sequential(nn.Flatten(), nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 10))
  end
  return nn.Sequential(
    nn.Conv2d(1, 32, 3, {padding = 1}), nn.ReLU(), nn.MaxPool2d(2),
    nn.Conv2d(32, 64, 3, {padding = 1}), nn.ReLU(), nn.MaxPool2d(2),
    nn.Flatten(), nn.Linear(64 * 7 * 7, 128), nn.ReLU(), nn.Linear(128, 10))
end

-- Accuracy and mean cross-entropy over the loader.
local function evaluate(model, loader, device)
  model:eval()
  local correct, n, loss = 0, 0, 0
  torch.no_grad(function()
    for b in loader:iter() do
      local x, y = b[1]:to(device), b[2]:to(device)
      local logits = model(x)
      correct = correct + logits:argmax(2):eq(y):sum():item()
      loss = loss + nn.functional.cross_entropy(logits, y, {reduction = "sum"}):item()
      n = n + b[2]:numel()
    end
  end)
  model:train()
  return correct / n, loss / n
end

local function main(argv)
  local o = parse(argv)
  if o.threads then torch.set_num_threads(o.threads) end
  torch.manual_seed(o.seed)
  local train_set = datasets.FashionMNIST{root = o.data, train = true}
  local test_set = datasets.FashionMNIST{root = o.data, train = false}
  if o.limit then train_set = data.Subset(train_set, torch.arange(1, math.min(o.limit, #train_set) + 1)) end
  local train = data.DataLoader(train_set, {batch_size = o.batch_size, shuffle = true, num_workers = o.workers})
  local test = data.DataLoader(test_set, {batch_size = 1000, num_workers = o.workers})
  local model = build(o.model):to(o.device)
  local opt = optim.Adam(model:parameters(), {lr = o.lr})
  local loss_fn = nn.CrossEntropyLoss()
  local sched = o.schedule == "cosine" and optim.lr_scheduler.CosineAnnealingLR(opt, o.epochs * #train) or nil
  local first_epoch = 1
  if o.resume then
    local ck = torch.load(o.checkpoint)
    model:load_state_dict(ck.model)
    opt:load_state_dict(ck.optimizer)
    if sched and ck.scheduler then sched:load_state_dict(ck.scheduler) end
    first_epoch = ck.epoch + 1
    print(("resumed from %s after epoch %d (test accuracy %.2f%%)"):format(o.checkpoint, ck.epoch, 100 * ck.accuracy))
  end
  local nparams = 0
  for _, p in ipairs(model:parameters()) do nparams = nparams + p:numel() end
  print(("Fashion-MNIST from %s: %d training, %d test samples; model %s, %d parameters, %d threads, device %s"):format(
    o.data, #train_set, #test_set, o.model, nparams, torch.get_num_threads(), o.device))
  local function train_step(x, y)
    local loss = loss_fn(model(x), y)
    opt:zero_grad()
    loss:backward()
    opt:step()
    return loss
  end
  local run_step = o.compile and torch.compile(train_step) or train_step
  for epoch = first_epoch, o.epochs do
    local t0, seen, total, running, last = torch.time(), 0, #train_set, nil, -1
    local step, logged_tenth = (epoch - 1) * #train, 0
    for b in train:iter() do
      local x, y = b[1]:to(o.device), b[2]:to(o.device)
      local loss = run_step(x, y)
      if sched then sched:step() end
      local l = loss:item()
      running = running and 0.98 * running + 0.02 * l or l
      seen = seen + y:numel()
      local dt = torch.time() - t0
      last = progress(epoch, o.epochs, seen, total, running, seen / dt, "samples/s", last)
      step = step + 1
      local tenth = math.floor(10 * seen / total)
      if tenth > logged_tenth and seen < total then
        experiment.log{step = step, epoch = epoch, train_loss = running}
        logged_tenth = tenth
      end
    end
    local acc, test_loss = evaluate(model, test, o.device)
    local secs = torch.time() - t0
    experiment.log{step = step, epoch = epoch, train_loss = running, test_loss = test_loss, test_accuracy = acc}
    print(("epoch %d: test accuracy %.2f%%, test loss %.4f, %.1f s (%.0f samples/s)"):format(epoch, 100 * acc,
      test_loss, secs, seen / secs))
    torch.save({model = model:state_dict(), optimizer = opt:state_dict(), scheduler = sched and sched:state_dict(),
      epoch = epoch, accuracy = acc}, o.checkpoint)
  end
end

local ok, err = pcall(main, arg or {})
if not ok then
  io.stderr:write("train_fashion_mnist: ", tostring(err), "\n")
  os.exit(1)
end
