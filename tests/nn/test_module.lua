-- tests/nn/test_module.lua -- the nn.Module API: class helper and field
-- registration, parameter/buffer/child listing and naming, state_dict and
-- load_state_dict (strict errors), train/eval, to(dtype), zero_grad, apply,
-- printing like PyTorch's repr, input-shape errors, default initialisation
-- bounds, nn.init and nn.utils.
local nn = require "torch.nn"
local F = nn.functional

local Net = nn.Module:extend("Net")
function Net:__init(n)
  self.fc1 = nn.Linear(n, 4)
  self.act = nn.ReLU()
  self.fc2 = nn.Linear(4, 2, {bias = false})
  self.scale = nn.Parameter(torch.ones(1))
  self:register_buffer("steps", torch.zeros(1))
  self:register_buffer("cache", torch.zeros(2), false)
  self.plain = 3
end
function Net:forward(x) return self.fc2(self.act(self.fc1(x))) * self.scale end

local function names_of(iter)
  local r = {}
  for n in iter do r[#r + 1] = n end
  return r
end

test("a user module registers children, parameters and buffers by assignment, in order", function()
  local m = Net(3)
  check_eq(names_of(m:named_parameters()), {"scale", "fc1.weight", "fc1.bias", "fc2.weight"})
  check_eq(#m:parameters(), 4)
  check_eq(names_of(m:named_buffers()), {"steps", "cache"})
  check_eq(names_of(m:named_children()), {"fc1", "act", "fc2"})
  check_eq(names_of(m:named_modules()), {"", "fc1", "act", "fc2"})
  check_eq(#m:modules(), 4)
  check_eq(m.plain, 3)
  check(m.fc1.weight.requires_grad and m.fc1.weight.is_leaf)
  check_shape(m(torch.randn(5, 3)), {5, 2})
  check_eq(m:_get_name(), "Net")
end)

test("Sequential children are named 1, 2, ...; seq[i], seq[-1], #seq and ipairs work", function()
  local s = nn.Sequential(nn.Linear(2, 3), nn.Tanh(), nn.Linear(3, 1))
  check_eq(names_of(s:named_parameters()), {"1.weight", "1.bias", "3.weight", "3.bias"})
  check_eq(#s, 3)
  check_eq(s[-1], s[3])
  check_eq(s[2]:_get_name(), "Tanh")
  local n = 0
  for i, m in ipairs(s) do n = n + 1; check_eq(m, s[i]) end
  check_eq(n, 3)
  s:append(nn.Sigmoid())
  check_eq(#s, 4)
  local nested = nn.Sequential(nn.Sequential(nn.Linear(2, 2)), nn.Linear(2, 1))
  check_eq(names_of(nested:named_parameters()), {"1.1.weight", "1.1.bias", "2.weight", "2.bias"})
  check_eq(nested:get_submodule("1.1"):_get_name(), "Linear")
end)

test("ModuleList and ModuleDict register their modules", function()
  local l = nn.ModuleList({nn.Linear(2, 2), nn.Linear(2, 2)})
  l:append(nn.ReLU())
  check_eq(#l, 3)
  check_eq(names_of(l:named_parameters()), {"1.weight", "1.bias", "2.weight", "2.bias"})
  l:insert(1, nn.Tanh())
  check_eq(l[1]:_get_name(), "Tanh")
  check_eq(names_of(l:named_parameters())[1], "2.weight")
  local d = nn.ModuleDict({b = nn.Linear(1, 1), a = nn.ReLU()})
  check_eq(d:keys(), {"a", "b"})
  check_eq(d.b:_get_name(), "Linear")
  check(d:contains("a") and not d:contains("c"))
  check_eq(names_of(d:named_parameters()), {"b.weight", "b.bias"})
  check_error(function() l(torch.zeros(1)) end, "ModuleList has no forward")
end)

test("shared parameters are listed once", function()
  local lin = nn.Linear(2, 2)
  local s = nn.Sequential(lin, nn.ReLU(), lin)
  check_eq(#s:parameters(), 2)
end)

test("state_dict holds parameters and persistent buffers under dotted names; round trip", function()
  local a, b = Net(3), Net(3)
  local sd = a:state_dict()
  local keys = {}
  for k in pairs(sd) do keys[#keys + 1] = k end
  table.sort(keys)
  check_eq(keys, {"fc1.bias", "fc1.weight", "fc2.weight", "scale", "steps"})
  check_eq(a:state_dict_keys(), {"scale", "steps", "fc1.weight", "fc1.bias", "fc2.weight"})
  check(not sd["fc1.weight"].requires_grad, "state_dict values are detached")
  local r = b:load_state_dict(sd)
  check_eq(r.missing_keys, {})
  check_eq(r.unexpected_keys, {})
  check(torch.equal(a.fc1.weight, b.fc1.weight) and torch.equal(a.fc2.weight, b.fc2.weight))
  check(b.fc1.weight.requires_grad and b.fc1.weight.is_leaf, "loading keeps parameters trainable leaves")
  local bn = nn.BatchNorm2d(3)
  local bk = {}
  for k in pairs(bn:state_dict()) do bk[#bk + 1] = k end
  table.sort(bk)
  check_eq(bk, {"bias", "num_batches_tracked", "running_mean", "running_var", "weight"})
  check_eq(bn:state_dict().num_batches_tracked.dtype, torch.int64)
end)

test("strict loading reports all missing and unexpected keys and shape mismatches in one error", function()
  local m = Net(3)
  local sd = m:state_dict()
  sd["fc1.bias"] = nil
  sd["scale"] = nil
  sd["extra.weight"] = torch.zeros(1)
  sd["fc2.weight"] = torch.zeros(3, 4)
  local err = check_error(function() m:load_state_dict(sd) end, "Error(s) in loading state_dict for Net:")
  check(err:find('Missing key(s) in state_dict: "scale", "fc1.bias".', 1, true), err)
  check(err:find('Unexpected key(s) in state_dict: "extra.weight".', 1, true), err)
  check(err:find("size mismatch for fc2.weight: copying a param with shape 3x4 from checkpoint, the shape in "
                 .. "current model is 2x4.", 1, true), err)
  -- non-strict: missing and unexpected are returned, shape mismatches still fail
  check_error(function() m:load_state_dict(sd, {strict = false}) end, "size mismatch for fc2.weight")
  sd["fc2.weight"] = torch.ones(2, 4)
  local before = m.fc1.weight:clone()
  local r = m:load_state_dict(sd, false)
  check_eq(r.missing_keys, {"scale", "fc1.bias"})
  check_eq(r.unexpected_keys, {"extra.weight"})
  check(torch.equal(m.fc2.weight, torch.ones(2, 4)))
  check(torch.equal(m.fc1.weight, before))
end)

test("train/eval set training recursively; Dropout and BatchNorm follow it", function()
  local m = nn.Sequential(nn.Linear(2, 2), nn.Dropout(0.5), nn.BatchNorm1d(2))
  check(m.training and m[2].training)
  m:eval()
  check(not m.training and not m[2].training and not m[3].training)
  local x = torch.randn(4, 2)
  check(torch.equal(m(x), m(x)), "eval mode is deterministic")
  check_eq(m[3].num_batches_tracked:item(), 0)
  m:train()
  m(x)
  check_eq(m[3].num_batches_tracked:item(), 1)
end)

test("to(float64) converts parameters and floating buffers; zero_grad clears gradients", function()
  local m = nn.Sequential(nn.Linear(3, 2), nn.BatchNorm1d(2))
  m:to(torch.float64)
  check_eq(m[1].weight.dtype, torch.float64)
  check_eq(m[2].running_mean.dtype, torch.float64)
  check_eq(m[2].num_batches_tracked.dtype, torch.int64)
  check(m[1].weight.requires_grad)
  check_eq(m(torch.randn(4, 3, {dtype = torch.float64})).dtype, torch.float64)
  local y = m[1](torch.randn(4, 3, {dtype = torch.float64})):sum()
  y:backward()
  check(m[1].weight.grad ~= nil)
  m:zero_grad()
  check(m[1].weight.grad == nil)
  m:float()
  check_eq(m[1].weight.dtype, torch.float32)
end)

test("apply visits children first, then the module", function()
  local seen = {}
  local m = nn.Sequential(nn.Linear(1, 1), nn.Sequential(nn.ReLU()))
  m:apply(function(x) seen[#seen + 1] = x:_get_name() end)
  check_eq(seen, {"Linear", "ReLU", "Sequential", "Sequential"})
  m:apply(function(x) if x:_get_name() == "Linear" then nn.init.zeros_(x.weight) end end)
  check_eq(m[1].weight:sum():item(), 0.0)
end)

test("modules print like PyTorch's repr", function()
  local m = nn.Sequential(nn.Conv2d(1, 32, 3, {padding = 1}), nn.BatchNorm2d(32), nn.ReLU(), nn.MaxPool2d(2),
                          nn.Dropout(0.25), nn.Flatten(), nn.Linear(6272, 10, {bias = false}))
  check_eq(tostring(m), table.concat({
    "Sequential(",
    "  (1): Conv2d(1, 32, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1))",
    "  (2): BatchNorm2d(32, eps=1e-05, momentum=0.1, affine=true, track_running_stats=true)",
    "  (3): ReLU()",
    "  (4): MaxPool2d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=false)",
    "  (5): Dropout(p=0.25, inplace=false)",
    "  (6): Flatten(start_dim=2, end_dim=-1)",
    "  (7): Linear(in_features=6272, out_features=10, bias=false)",
    ")"}, "\n"))
  local n = Net(3)
  check_eq(tostring(n), table.concat({
    "Net(",
    "  (fc1): Linear(in_features=3, out_features=4, bias=true)",
    "  (act): ReLU()",
    "  (fc2): Linear(in_features=4, out_features=2, bias=false)",
    ")"}, "\n"))
  local nested = nn.Sequential(nn.Sequential(nn.GELU("tanh")), nn.LayerNorm(8), nn.Embedding(10, 3, {padding_idx = 1}))
  check_eq(tostring(nested), table.concat({
    "Sequential(",
    "  (1): Sequential(",
    "    (1): GELU(approximate='tanh')",
    "  )",
    "  (2): LayerNorm((8,), eps=1e-05, elementwise_affine=true)",
    "  (3): Embedding(10, 3, padding_idx=1)",
    ")"}, "\n"))
  check_eq(tostring(nn.Conv1d(2, 4, 3, {stride = 2, groups = 2, padding_mode = "circular", padding = 1})),
           "Conv1d(2, 4, kernel_size=(3,), stride=(2,), padding=(1,), groups=2, padding_mode=circular)")
  check_eq(tostring(nn.LSTM(10, 20, {num_layers = 2, batch_first = true})), "LSTM(10, 20, num_layers=2, batch_first=true)")
  check_eq(tostring(nn.CrossEntropyLoss()), "CrossEntropyLoss()")
end)

test("wrong input shapes raise errors naming the layer and the expected shape", function()
  check_error(function() nn.Linear(784, 256)(torch.zeros(32, 100)) end,
              "Linear(in_features=784, out_features=256): expected input with last dimension 784, got shape 32x100")
  check_error(function() nn.Conv2d(1, 32, 3)(torch.zeros(8, 3, 28, 28)) end,
              "Conv2d(1, 32, kernel_size=(3, 3), stride=(1, 1)): expected input of shape (N, 1, H, W) or (1, H, W), got 8x3x28x28")
  check_error(function() nn.BatchNorm2d(4)(torch.zeros(2, 4, 3)) end, "expected 4D input, got shape 2x4x3")
  check_error(function() nn.BatchNorm1d(4)(torch.zeros(2, 5)) end, "expected input with 4 channels (dim 2), got shape 2x5")
  check_error(function() nn.LayerNorm(5)(torch.zeros(2, 4)) end, "expected input with trailing dims 5, got shape 2x4")
  check_error(function() nn.MaxPool2d(2)(torch.zeros(4, 4)) end, "expected input of shape (N, C, H, W) or (C, H, W), got 4x4")
  check_error(function() nn.Embedding(4, 2)(torch.zeros(3)) end, "expected an integer (int64) tensor of 1-based indices")
  check_error(function() nn.Linear(2, 2, {bais = false}) end, "nn.Linear: unknown option 'bais'")
  check_error(function() nn.Module()(torch.zeros(1)) end, "Module: forward is not implemented")
end)

test("unbatched inputs to convolutions and pools work", function()
  local c = nn.Conv2d(2, 3, 3)
  check_shape(c(torch.randn(2, 5, 5)), {3, 3, 3})
  check_shape(nn.Conv1d(2, 3, 2)(torch.randn(2, 5)), {3, 4})
end)

test("default initialisation follows PyTorch's bounds", function()
  torch.manual_seed(0)
  local l = nn.Linear(400, 300)
  local bound = 1 / math.sqrt(400)
  check(l.weight:abs():max():item() <= bound and l.weight:abs():max():item() > 0.95 * bound)
  check(l.bias:abs():max():item() <= bound)
  check_close(l.weight:std(), bound / math.sqrt(3), {atol = 2e-3})
  local c = nn.Conv2d(16, 8, 3)
  local cb = 1 / math.sqrt(16 * 9)
  check(c.weight:abs():max():item() <= cb and c.bias:abs():max():item() <= cb)
  local ct = nn.ConvTranspose2d(16, 8, 3)
  local ctb = 1 / math.sqrt(8 * 9)
  check(ct.weight:abs():max():item() <= ctb and ct.weight:abs():max():item() > 0.9 * ctb)
  local e = nn.Embedding(1000, 50, {padding_idx = 3})
  check_close(e.weight:std(), 1.0, {atol = 0.03})
  check_eq(e.weight[3]:abs():sum():item(), 0.0)
  local bn = nn.BatchNorm1d(5)
  check(torch.equal(bn.weight, torch.ones(5)) and torch.equal(bn.running_var, torch.ones(5)))
end)

test("nn.init functions fill in place with the right statistics", function()
  torch.manual_seed(1)
  local I = nn.init
  local w = torch.empty(200, 300)
  check_eq(I.xavier_uniform_(w), w)
  local a = math.sqrt(6 / 500)
  check(w:abs():max():item() <= a and w:abs():max():item() > 0.95 * a)
  I.kaiming_normal_(w, {mode = "fan_out", nonlinearity = "relu"})
  check_close(w:std(), math.sqrt(2 / 200), {atol = 3e-3})
  I.kaiming_uniform_(w, 0, "fan_in", "relu")
  check(w:abs():max():item() <= math.sqrt(6 / 300))
  I.xavier_normal_(w, 2.0)
  check_close(w:std(), 2 * math.sqrt(2 / 500), {atol = 3e-3})
  I.trunc_normal_(w, {std = 2, a = -1, b = 3})
  check(w:min():item() >= -1 and w:max():item() <= 3)
  I.normal_(w, 3, 0.5)
  check_close(w:mean(), 3, {atol = 0.01})
  I.uniform_(w, -2, -1)
  check(w:max():item() <= -1 and w:min():item() >= -2)
  I.constant_(w, 0.5)
  check_eq(w:sum():item(), 0.5 * 60000)
  local q = torch.empty(4, 6)
  I.orthogonal_(q)
  check_close(q:matmul(q:t()), torch.eye(4), {atol = 1e-5})
  check_close(I.calculate_gain("leaky_relu", 0.2), math.sqrt(2 / 1.04), {atol = 1e-12})
  check_close(I.calculate_gain("tanh"), 5 / 3, {atol = 1e-12})
  local p = nn.Linear(2, 2).weight
  I.zeros_(p) -- parameters are filled under no_grad
  check(p.requires_grad and p:sum():item() == 0)
  check_error(function() I.xavier_uniform_(torch.empty(3)) end, "fewer than 2 dimensions")
end)

test("clip_grad_norm_ scales gradients to max_norm and returns the total norm; clip_grad_value_", function()
  local a = torch.tensor({3.0, 0.0}, {requires_grad = true})
  local b = torch.tensor({{0.0, 4.0}}, {requires_grad = true})
  local l = (a * torch.tensor({1.0, 1.0})):sum() * 0 -- gives a and b gradients
  l = (a * torch.tensor({3.0, 0.0})):sum() + (b * torch.tensor({{0.0, 4.0}})):sum()
  l:backward()
  local total = nn.utils.clip_grad_norm_({a, b}, 1.0)
  check_close(total, 5.0, {atol = 1e-6})
  check_close(a.grad, {3 / (5 + 1e-6), 0}, {atol = 1e-6})
  check_close(b.grad, {{0, 4 / (5 + 1e-6)}}, {atol = 1e-6})
  local t2 = nn.utils.clip_grad_norm_({a, b}, 10.0)
  check_close(t2, 1.0, {atol = 1e-5})
  check_close(a.grad, {0.6, 0}, {atol = 1e-5}, "no change below max_norm")
  check_close(nn.utils.clip_grad_norm_({a, b}, 1.0, math.huge), 0.8, {atol = 1e-5})
  nn.utils.clip_grad_value_({a, b}, 0.1)
  check_close(b.grad, {{0, 0.1}}, {atol = 1e-6})
  local v = nn.utils.parameters_to_vector({a, b})
  check_shape(v, {4})
  nn.utils.vector_to_parameters(torch.arange(4):float(), {a, b})
  check_close(b, {{2, 3}})
end)

test("nn, F, nn.init, nn.utils and optim are reachable as torch fields", function()
  check_eq(torch.nn, nn)
  check_eq(torch.nn.functional, F)
  check_eq(nn.init, require "torch.nn.initializers")
  check(type(nn.utils.clip_grad_norm_) == "function")
  check(type(torch.optim.SGD) == "table")
  check(torch._helptext(F.cross_entropy):find("F.cross_entropy", 1, true) ~= nil)
end)
