-- tests/lua/test_bad_input_user.lua -- a newcomer's mistakes, as PyTorch
-- users make them: misspelled options, bad sizes and values, calls into nn,
-- F, optim, data, compile, save/load, vision and tensorboard. Each error
-- names the public function and the facts (the key and the closest valid
-- name, shapes, dtypes, ranges) and is positioned at the line of this file
-- that made the call, never at a library file; the session goes on after
-- each. At least 60 bad calls.

local nn, F, optim = torch.nn, torch.nn.functional, torch.optim
local data = torch.utils.data
local src = debug.getinfo(1, "S").short_src
local base = torch.tensor({{1, 2, 3}, {4, 5, 6}}) -- made before any error; must stay usable
local calls = 0

-- bad(fn, needle...): fn() must raise an error positioned at the line of
-- this bad() call (fn is written on that line), whose message holds every
-- needle; then the session must go on.
local function bad(fn, ...)
  local line = debug.getinfo(2, "l").currentline
  local ok, err = pcall(fn)
  if ok then error("expected an error", 2) end
  err = tostring(err)
  local where = ("%s:%d: "):format(src, line)
  if err:sub(1, #where) ~= where then error(("message '%s' is not positioned at %s"):format(err, where), 2) end
  if err:find("%.lua:%d+:", #where) then error(("message '%s' names a second position"):format(err), 2) end
  for _, needle in ipairs({...}) do
    if not err:find(needle, 1, true) then error(("message '%s' lacks '%s'"):format(err, needle), 2) end
  end
  if base:sum():item() ~= 21 or (base + 1):sum():item() ~= 27 then error("the session is broken", 2) end
  calls = calls + 1
end

-- a small model, its optimizer and a dataset, made once
local function model() torch.manual_seed(0) return nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2)) end

test("misspelled options of core functions name the closest option", function()
  local x = torch.ones(2, 3)
  bad(function() return torch.zeros(2, 2, {dtyp = torch.float64}) end, "zeros: unknown option 'dtyp' (did you mean 'dtype'?)")
  bad(function() return torch.randn(2, 2, {requires_grd = true}) end, "randn: unknown option 'requires_grd' (did you mean 'requires_grad'?)")
  bad(function() return torch.sum(x, 1, {keepdm = true}) end, "sum: unknown option 'keepdm' (did you mean 'keepdim'?)")
  bad(function() return x:mean{dimm = 1} end, "mean: unknown option 'dimm' (did you mean 'dim'?)")
  bad(function() return torch.ones(3, {devise = "cpu"}) end, "ones: unknown option 'devise' (did you mean 'device'?)")
  bad(function() return torch.arange(0, 10, {stepp = 2}) end, "arange: unknown option 'stepp' (did you mean 'step'?)")
  bad(function() return torch.tensor({1, 2}, {dtpye = torch.int64}) end, "tensor: unknown option 'dtpye' (did you mean 'dtype'?)")
  bad(function() return x:add(x, {alpah = 2}) end, "add: unknown option 'alpah' (did you mean 'alpha'?)")
  bad(function() return x:div(x, {rounding = "floor"}) end, "div: unknown option 'rounding' (valid options: 'rounding_mode' or 'out')")
  bad(function() return x:t{dim = 1} end, "t: unknown option 'dim' (t takes no options)")
  bad(function() return torch.cat({x, x}, {dimension = 1}) end, "cat: unknown option 'dimension' (valid options: 'dim' or 'out')")
  bad(function() return torch.linalg.norm(x, {ord = 2, dims = 1}) end, "norm: unknown option 'dims' (did you mean 'dim'?)")
  bad(function() return x:to{dtype = torch.float64, non_blockng = true} end, "to: unknown option 'non_blockng' (did you mean 'non_blocking'?)")
  bad(function() return torch.randperm(5, {generater = torch.Generator()}) end, "randperm: unknown option 'generater' (did you mean 'generator'?)")
  local w = torch.ones(3, {requires_grad = true})
  bad(function() return torch.autograd.grad({(w * 2):sum()}, {w}, {retain_grph = true}) end, "grad: unknown option 'retain_grph' (did you mean 'retain_graph'?)")
  bad(function() return F.conv2d(torch.ones(1, 1, 4, 4), torch.ones(1, 1, 3, 3), {strde = 1}) end, "conv2d: unknown option 'strde' (did you mean 'stride'?)")
  bad(function() return x:sum(1, {keepdim = "yes"}) end, "sum: argument 'keepdim' must be a boolean, got string")
end)

test("misspelled options of Lua functions name the closest option", function()
  local m = model()
  local params = m:parameters()
  local ds = data.TensorDataset(torch.ones(8, 3), torch.zeros(8))
  bad(function() return nn.Linear(3, 4, {bais = false}) end, "nn.Linear: unknown option 'bais' (did you mean 'bias'?)")
  bad(function() return nn.Conv2d(1, 4, 3, {paddding = 1}) end, "nn.Conv2d: unknown option 'paddding' (did you mean 'padding'?)")
  bad(function() return nn.Dropout({prob = 0.5}) end, "nn.Dropout: unknown option 'prob' (valid options: 'p' or 'inplace')")
  bad(function() return F.dropout(base:float(), {trainig = false}) end, "F.dropout: unknown option 'trainig' (did you mean 'training'?)")
  bad(function() return F.cross_entropy(torch.zeros(2, 3), torch.tensor({1, 2}), {label_smothing = 0.1}) end,
      "F.cross_entropy: unknown option 'label_smothing' (did you mean 'label_smoothing'?)")
  bad(function() return F.mse_loss(torch.ones(2), torch.ones(2), {reduction = "meen"}) end,
      "F.mse_loss: unknown reduction 'meen' (did you mean 'mean'? expected 'mean', 'sum' or 'none')")
  bad(function() return nn.MSELoss{reducton = "sum"} end, "nn.MSELoss: unknown option 'reducton' (did you mean 'reduction'?)")
  bad(function() return optim.SGD(params, {lr = 0.1, momentun = 0.9}) end, "optim.SGD: unknown option 'momentun' (did you mean 'momentum'?)")
  bad(function() return optim.Adam(params, {learning_rate = 1e-3}) end, "optim.Adam: unknown option 'learning_rate' (valid options: 'lr', 'betas'")
  local opt = optim.SGD(params, {lr = 0.1})
  bad(function() return optim.lr_scheduler.StepLR(opt, 10, {gama = 0.5}) end, "lr_scheduler.StepLR: unknown option 'gama' (did you mean 'gamma'?)")
  bad(function() return data.DataLoader{ds, batchsize = 4} end, "DataLoader: unknown option 'batchsize' (did you mean 'batch_size'?)")
  bad(function() return data.DataLoader(ds, {shufle = true}) end, "DataLoader: unknown option 'shufle' (did you mean 'shuffle'?)")
  bad(function() return torch.autocast("cpu", {dtyp = torch.bfloat16}) end, "torch.autocast: unknown option 'dtyp' (did you mean 'dtype'?)")
  bad(function() return torch.amp.GradScaler{init_scal = 1024} end, "GradScaler: unknown option 'init_scal' (did you mean 'init_scale'?)")
  bad(function() return torch.backends.sdp_kernel{flsh = false} end, "torch.backends.sdp_kernel: unknown option 'flsh' (did you mean 'flash'?)")
  bad(function() return m:load_state_dict(m:state_dict(), {strct = false}) end,
      "nn.Sequential: load_state_dict: unknown option 'strct' (did you mean 'strict'?)")
  bad(function() return nn.init.kaiming_uniform_(torch.empty(3, 3), {nonlinearty = "relu"}) end,
      "nn.init.kaiming_uniform_: unknown option 'nonlinearty' (did you mean 'nonlinearity'?)")
  bad(function() return torch.autograd.gradcheck(function(a) return a * 2 end, {torch.ones(2, {dtype = torch.float64, requires_grad = true})}, {atoll = 1e-5}) end,
      "gradcheck: unknown option 'atoll' (did you mean 'atol'?)")
  bad(function() return torch.profiler.profile({recrd_shapes = true}, function() end) end,
      "torch.profiler.profile: unknown option 'recrd_shapes' (did you mean 'record_shapes'?)")
  bad(function() return torch.experiment.sweep("no-such-spec.lua", {job = 2}) end, "experiment.sweep: unknown option 'job' (did you mean 'jobs'?)")
end)

test("torch.compile: unknown modes and options, bad values", function()
  local f = function(a) return a * 2 end
  bad(function() return torch.compile(f, {mode = "bogus"}) end,
      "compile: unknown mode 'bogus' (expected 'default', 'reduce-overhead', 'max-autotune' or 'max-autotune-no-cudagraphs')")
  bad(function() return torch.compile(f, {mode = "max-autotun"}) end, "compile: unknown mode 'max-autotun' (did you mean 'max-autotune'?")
  bad(function() return torch.compile(f, {fullgrph = true}) end, "compile: unknown option 'fullgrph' (did you mean 'fullgraph'?)")
  bad(function() return torch.compile(f, {dynamic = "yes"}) end, "compile: argument 'dynamic' must be a boolean, got string")
  bad(function() return torch.compile(42) end, "torch.compile: expected a function or a module (a callable), got a number")
  check_eq(torch.compile(f, {mode = "reduce-overhead"})(torch.ones(2)):sum():item(), 4.0)
end)

test("dtypes, devices and sizes of core functions", function()
  local x = torch.ones(2, 3)
  bad(function() return torch.arange(1, 1e18) end, "arange: out of memory", "1000000000000000000")
  bad(function() return x:to("float77") end, "to: 'float77' is neither a dtype nor a device (did you mean 'float32'?)")
  bad(function() return x:to(torch.float77) end, "to: expected a dtype, a device or a tensor, got nil")
  bad(function() return x:to("cuda:x") end, "to: bad device 'cuda:x'")
  bad(function() return torch.zeros(2, {dtype = "flaot32"}) end, "zeros: unknown dtype 'flaot32' (did you mean 'float32'?)")
  bad(function() return torch.ones(2, {device = "gpu"}) end, "ones: unknown device 'gpu'")
  bad(function() return torch.eye(1e8) end, "eye: out of memory", "100000000x100000000")
  bad(function() return x:sum{dim = 5} end, "sum: dimension 5 out of range (tensor has 2 dimensions")
end)

test("nn constructors and forwards name the module, the sizes and the shapes", function()
  bad(function() return nn.Linear(-1, 3) end, "nn.Linear: in_features must be a non-negative integer, got -1")
  bad(function() return nn.Linear(3.5, 2) end, "nn.Linear: in_features must be a non-negative integer, got 3.5")
  bad(function() return nn.Linear(3, "4") end, "nn.Linear: out_features must be a non-negative integer, got string")
  bad(function() return nn.BatchNorm1d(-3) end, "nn.BatchNorm1d: num_features must be a non-negative integer, got -3")
  bad(function() return nn.Embedding(10, 3)(torch.tensor({11})) end, "nn.Embedding: index 11 is out of range for 10 embeddings")
  bad(function() return nn.Embedding(10, -3) end, "nn.Embedding: embedding_dim must be a non-negative integer, got -3")
  bad(function() return nn.RNN(4, 8, {nonlinearity = "sigmoid"}) end, "nn.RNN: unknown nonlinearity 'sigmoid' (expected 'tanh' or 'relu')")
  bad(function() return nn.Conv2d(1, 4, 3, {padding_mode = "reflct"}) end, "nn.Conv2d: unknown padding_mode 'reflct' (did you mean 'reflect'?")
  bad(function() return nn.CrossEntropyLoss{reduction = "avg"} end, "nn.CrossEntropyLoss: unknown reduction 'avg'")
  bad(function() return nn.Linear(3, 4)(torch.ones(2, 5)) end, "Linear(in_features=3, out_features=4): expected input with last dimension 3, got shape 2x5")
  local m = model()
  bad(function() return m(torch.ones(1, 5)) end, "expected input with last dimension 3, got shape 1x5")
  bad(function() return nn.L1Loss()(torch.ones(2, 3), torch.ones(3, 2)) end, "nn.L1Loss", "input of shape 2x3 and target of shape 3x2")
  bad(function() return nn.Conv2d(3, 4, 3)(torch.ones(1, 2, 8, 8)) end, "Conv2d(3, 4", "2")
end)

-- a user's own module: its errors keep their own file:line, even inside a container
local Mine = nn.Module:extend("Mine")
function Mine:forward(x)
  if x:dim() ~= 2 then error("Mine: expected a matrix") end
  return x
end
local mine_line = debug.getinfo(Mine.forward, "S").linedefined + 1

test("a user's module keeps its own error position, alone or in nn.Sequential", function()
  local where = ("%s:%d: Mine: expected a matrix"):format(src, mine_line)
  local ok, e = pcall(function() return Mine()(torch.ones(3)) end)
  check(not ok and e == where, tostring(e))
  ok, e = pcall(function() return nn.Sequential(nn.Identity(), Mine())(torch.ones(3)) end)
  check(not ok and e == where, tostring(e))
  calls = calls + 2
  check_eq(nn.Sequential(Mine(), nn.Linear(2, 1))(torch.ones(1, 2)):size(), {1, 1})
end)

test("F functions name themselves and the facts", function()
  local x4 = torch.ones(1, 1, 4, 4)
  local w = torch.randn(10, 3)
  bad(function() return F.mse_loss(torch.ones(3), torch.ones(4)) end,
      "F.mse_loss: input of shape 3 and target of shape 4 cannot be broadcast together (3 ~= 4")
  bad(function() return F.embedding(torch.tensor({0, 2}), w) end, "F.embedding: index 0 is out of range for 10 embeddings (indices are 1-based: 1..10)")
  bad(function() return F.embedding(torch.tensor({1.5}), w) end, "F.embedding: expected an integer (int64) tensor of 1-based indices, got torch.float32")
  bad(function() return F.interpolate(x4, {scale_factor = 0}) end, "F.interpolate: input and output sizes should be greater than 0, got input 4x4 and output 0x0")
  bad(function() return F.interpolate(x4, {size = 8, mode = "bilinera"}) end, "F.interpolate: unknown mode 'bilinera' (did you mean 'bilinear'?")
  bad(function() return F.softmax(torch.ones(2, 3)) end, "F.softmax: dim is required")
  bad(function() return F.one_hot(torch.tensor({0, 1})) end, "F.one_hot: class values must be >= 1 (1-based), got 0")
  bad(function() return F.cross_entropy(torch.zeros(2, 3), torch.tensor({1, 4})) end, "F.cross_entropy: target 4 is out of bounds", "3 classes")
  bad(function() return F.linear(torch.ones(2, 3), torch.ones(4, 5)) end, "F.linear", "2x3", "5x4")
  bad(function() return F.pad(torch.ones(2, 2), {1, 1}, {mode = "reflekt"}) end, "F.pad: unknown mode 'reflekt' (did you mean 'reflect'?")
end)

test("optimizers and schedulers name themselves and the bad value", function()
  local m = model()
  local params = m:parameters()
  bad(function() return optim.SGD(params, {lr = -0.1}) end, "optim.SGD: invalid learning rate -0.1")
  bad(function() return optim.SGD(params, {lr = "0.1"}) end, "optim.SGD: lr must be a number, got string")
  bad(function() return optim.Adam(params, {lr = "fast"}) end, "optim.Adam: lr must be a number, got string")
  bad(function() return optim.Adam(m, {lr = 1e-3}) end, "optim.Adam: pass model:parameters(), not the module itself")
  bad(function() return optim.SGD(nil, {lr = 0.1}) end, "optim.SGD: params must be a list, got nil")
  bad(function() return optim.SGD({}, {lr = 0.1}) end, "optim.SGD: got an empty parameter list")
  bad(function() return optim.SGD({torch.ones(2, {requires_grad = true}) * 2}, {lr = 0.1}) end, "optim.SGD: can't optimize a non-leaf tensor")
  local opt = optim.SGD(params, {lr = 0.1})
  bad(function() return opt:load_state_dict({param_groups = {}}) end, "loaded state dict has 0 parameter groups, the optimizer has 1")
  bad(function() return optim.lr_scheduler.StepLR(nil, 10) end, "lr_scheduler.StepLR: expected an optimizer as first argument, got nil")
  bad(function() return optim.lr_scheduler.StepLR(opt, 0) end, "lr_scheduler.StepLR: step_size must be a positive integer, got 0")
  bad(function() return optim.lr_scheduler.OneCycleLR(opt, 0.1, {total_steps = 10, anneal_strategy = "cosine"}) end,
      "lr_scheduler.OneCycleLR: unknown anneal_strategy 'cosine' (expected 'cos' or 'linear')")
  local sched = optim.lr_scheduler.OneCycleLR(opt, 0.1, {total_steps = 2})
  sched:step()
  sched:step()
  bad(function() sched:step() end, "lr_scheduler.OneCycleLR: tried to step 3 times")
  -- and training still works
  local loss = F.mse_loss(m(torch.ones(4, 3)), torch.zeros(4, 2))
  opt:zero_grad()
  loss:backward()
  opt:step()
end)

test("DataLoader and datasets name themselves", function()
  local ds = data.TensorDataset(torch.arange(1, 7):float():view(6, 1))
  bad(function() return data.DataLoader(nil) end, "DataLoader: expected DataLoader(dataset[, {batch_size=, ...}])", "got a nil")
  bad(function() return data.DataLoader{ds, batch_size = 0} end, "DataLoader: batch_size must be a positive integer, got 0")
  bad(function() return data.DataLoader(ds, 4) end, "DataLoader: expected DataLoader(dataset", "got a table and a number")
  bad(function() return data.TensorDataset(torch.ones(3, 2), torch.ones(4)) end, "TensorDataset: tensor 2 has 4 samples, tensor 1 has 3")
  bad(function() return data.random_split(ds, {2, 2}) end, "random_split: lengths sum to 4, the dataset has 6 samples")
  local Ragged = data.Dataset:extend("Ragged")
  function Ragged:__len() return 2 end
  function Ragged:__getitem(i) return i == 1 and {x = torch.ones(1)} or {y = torch.ones(1)} end
  local loader = data.DataLoader(Ragged(), {batch_size = 2})
  bad(function() for _ in loader:iter() do end end, "default_collate: sample 2 has no field x")
  local n = 0
  for b in data.DataLoader(ds, {batch_size = 4}):iter() do n = n + b[1]:size(1) end
  check_eq(n, 6)
end)

test("save and load name the path", function()
  local x = torch.ones(2)
  bad(function() return torch.save(x, "/nonexistent-dir/x.safetensors") end, "/nonexistent-dir/x.safetensors")
  bad(function() return torch.load("/nonexistent-dir/x.safetensors") end, "load", "/nonexistent-dir/x.safetensors")
  bad(function() return torch.load("x.safetensors", {map_locaton = "cpu"}) end, "load: unknown option 'map_locaton'")
end)

test("vision datasets, tensorboard and plots name themselves", function()
  bad(function() return torch.vision.datasets.MNIST{root = "/nonexistent", trian = false} end,
      "MNIST: unknown option 'trian' (did you mean 'train'?)")
  bad(function() return torch.vision.datasets.MNIST{root = "/nonexistent"} end, "MNIST: dataset file not found: looked for /nonexistent/MNIST/raw/train-images-idx3-ubyte")
  local dir = os.tmpname()
  os.remove(dir)
  local SummaryWriter = torch.utils.tensorboard.SummaryWriter
  bad(function() return SummaryWriter(dir, {flush_sec = 1}) end, "SummaryWriter: unknown option 'flush_sec' (did you mean 'flush_secs'?)")
  local w = SummaryWriter(dir)
  bad(function() w:add_scalar("loss", "x") end, "add_scalar: scalar_value must be a number")
  bad(function() w:add_scalar("loss", 1.0, 1.5) end, "add_scalar: global_step must be an integer, got 1.5")
  bad(function() w:add_image("img", torch.zeros(3, 4, 4), 0, {dataformat = "CHW"}) end,
      "add_image: unknown option 'dataformat' (did you mean 'dataformats'?)")
  w:add_scalar("loss", 1.0, 1)
  w:close()
  bad(function() w:add_scalar("loss", 1.0, 2) end, "add_scalar: the SummaryWriter is closed")
  os.execute("rm -rf '" .. dir .. "'")
  bad(function() return torch.plot({1, 2, 3}, {titel = "x", quiet = true}) end, "plot: unknown option 'titel' (did you mean 'title'?)")
  bad(function() return torch.plot{series = {{nmae = "a", y = {1, 2}}}, quiet = true} end,
      "plot: series[1]: unknown option 'nmae' (did you mean 'name'?)")
end)

test("at least 60 bad calls were made and the session still trains", function()
  check(calls >= 60, "only " .. calls .. " bad calls")
  local m = model()
  local opt = optim.Adam(m:parameters(), {lr = 1e-2})
  local x, y = torch.randn(16, 3), torch.randn(16, 2)
  local first
  for _ = 1, 20 do
    local loss = F.mse_loss(m(x), y)
    first = first or loss:item()
    opt:zero_grad()
    loss:backward()
    opt:step()
  end
  check(F.mse_loss(m(x), y):item() < first, "training did not reduce the loss")
end)
