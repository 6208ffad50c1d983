-- scripts/train_vision.lua -- trains a ResNet of torch.vision.models on
-- Fashion-MNIST with transforms v2 augmentation (a random 28x28 crop of the
-- image padded by 4, a random horizontal flip, each image of a batch drawn
-- on its own: per_sample=true, applied to the whole batch on its device),
-- SGD with Nesterov momentum and a cosine learning rate, a progress bar
-- (loss, images/s, ETA), test accuracy after each epoch, a checkpoint per
-- epoch and --resume.
--
--   moontorch scripts/train_vision.lua [--arch resnet18] [--epochs 15]
--       [--batch-size 128] [--lr 0.1] [--weight-decay 5e-4] [--device cpu|cuda]
--       [--compile] [--threads N] [--workers 2] [--data DIR]
--       [--checkpoint PATH] [--resume] [--seed 0] [--limit N] [--no-augment]
--
-- --arch is any ResNet builder of torch.vision.models (resnet18, resnet34,
-- resnet50, ...); its stem is made for 28x28 gray images (a 3x3 convolution
-- of stride 1 from one channel, no max pool). --limit trains on the first N
-- images (quick checks). --compile runs each training step (forward,
-- backward, optimizer update) as one graph compiled by torch.compile.
-- The PyTorch peer with the same model, augmentation and schedule is
-- bench/peers/train_vision.py.
local torch = require "torch"
package.path = (arg and arg[0] and arg[0]:match("^(.*)/") or ".") .. "/?.lua;" .. package.path -- train_progress.lua, train_options.lua
local progress = require("train_progress").show
local options = require "train_options"
local nn = require "torch.nn"
local optim = require "torch.optim"
local data = require "torch.utils.data"
local vision = require "torch.vision"

local MEAN, STD = 0.2860, 0.3530 -- Fashion-MNIST's training pixels

local function parse(argv)
  local o = {arch = "resnet18", epochs = 15, batch_size = 128, lr = 0.1, weight_decay = 5e-4, device = "cpu",
    compile = false, threads = nil, workers = 2, data = vision.datasets.FASHION_MNIST_DIR,
    checkpoint = "train_vision.ckpt", resume = false, seed = 0, limit = nil, no_augment = false}
  local numeric = {epochs = "int", batch_size = "int", lr = "num", weight_decay = "num", threads = "int",
    workers = "int", seed = "int", limit = "int"}
  local flags = {resume = true, compile = true, no_augment = true}
  options.parse(argv, o, numeric, flags)
  if not o.arch:match("^resn") and not o.arch:match("^wide_resnet") then
    error("--arch must be a ResNet of torch.vision.models (resnet18, resnet50, ...), got '" .. o.arch .. "'", 0)
  end
  options.check_device(o)
  return o
end

-- torchvision's ResNet with a stem for 28x28 gray images
local function build(arch)
  local model = vision.models[arch]({num_classes = 10})
  model.conv1 = nn.Conv2d(1, 64, 3, {padding = 1, bias = false})
  model.maxpool = nn.Identity()
  return model
end

-- the batch augmentation: every image gets its own crop offset and coin
local function augmentation(no_augment)
  local v2 = vision.transforms.v2
  local norm = v2.Normalize({MEAN}, {STD})
  if no_augment then return norm end
  return v2.Compose({v2.RandomCrop(28, {padding = 4, per_sample = true}),
    v2.RandomHorizontalFlip({per_sample = true}), norm})
end

-- accuracy and mean cross-entropy over the loader
local function evaluate(model, loader, device)
  model:eval()
  local correct, n, loss = 0, 0, 0
  torch.no_grad(function()
    for b in loader:iter() do
      local x, y = b[1]:to(device):sub(MEAN):div(STD), b[2]:to(device)
      local logits = model(x)
      correct = correct + logits:argmax(2):eq(y):sum():item()
      loss = loss + nn.functional.cross_entropy(logits, y, {reduction = "sum"}):item()
      n = n + y:numel()
    end
  end)
  model:train()
  return correct / n, loss / n
end

local function main(argv)
  local o = parse(argv)
  if o.threads then torch.set_num_threads(o.threads) end
  torch.manual_seed(o.seed)
  local train_set = vision.datasets.FashionMNIST({root = o.data, train = true})
  local test_set = vision.datasets.FashionMNIST({root = o.data, train = false})
  if o.limit then train_set = data.Subset(train_set, torch.arange(1, math.min(o.limit, #train_set) + 1)) end
  local train = data.DataLoader(train_set, {batch_size = o.batch_size, shuffle = true, num_workers = o.workers})
  local test = data.DataLoader(test_set, {batch_size = 1000, num_workers = o.workers})
  local model = build(o.arch):to(o.device)
  local opt = optim.SGD(model:parameters(), {lr = o.lr, momentum = 0.9, nesterov = true,
    weight_decay = o.weight_decay})
  local sched = optim.lr_scheduler.CosineAnnealingLR(opt, o.epochs * #train)
  local augment = augmentation(o.no_augment)
  local loss_fn = nn.CrossEntropyLoss()
  local first_epoch = 1
  if o.resume then
    local ck = torch.load(o.checkpoint)
    model:load_state_dict(ck.model)
    opt:load_state_dict(ck.optimizer)
    sched:load_state_dict(ck.scheduler)
    first_epoch = ck.epoch + 1
    print(("resumed from %s after epoch %d (test accuracy %.2f%%)"):format(o.checkpoint, ck.epoch, 100 * ck.accuracy))
  end
  local nparams = 0
  for _, p in ipairs(model:parameters()) do nparams = nparams + p:numel() end
  print(("Fashion-MNIST from %s: %d training, %d test images; %s (%d parameters), %s, %d threads, device %s%s"):format(
    o.data, #train_set, #test_set, o.arch, nparams, o.no_augment and "no augmentation" or "crop+flip per image",
    torch.get_num_threads(), o.device, o.compile and ", compiled steps" or ""))
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
    for b in train:iter() do
      local x, y = augment(b[1]:to(o.device)), b[2]:to(o.device)
      local loss = run_step(x, y)
      sched:step()
      local l = loss:item()
      running = running and 0.98 * running + 0.02 * l or l
      seen = seen + y:numel()
      last = progress(epoch, o.epochs, seen, total, running, seen / (torch.time() - t0), "images/s", last)
    end
    local train_secs = torch.time() - t0
    local acc, test_loss = evaluate(model, test, o.device)
    print(("epoch %d: test accuracy %.2f%%, test loss %.4f, train %.1f s (%.0f images/s), with test %.1f s"):format(
      epoch, 100 * acc, test_loss, train_secs, seen / train_secs, torch.time() - t0))
    torch.save({model = model:state_dict(), optimizer = opt:state_dict(), scheduler = sched:state_dict(),
      epoch = epoch, accuracy = acc}, o.checkpoint)
  end
end

local ok, err = pcall(main, arg or {})
if not ok then
  io.stderr:write("train_vision: ", tostring(err), "\n")
  os.exit(1)
end
