-- tests/nn/test_functional.lua -- F.pad, interpolate, grid_sample,
-- affine_grid, unfold, fold, pixel_shuffle, normalize, cosine_similarity,
-- one_hot, embedding, ... against PyTorch 1.13 values and input gradients
-- (tests/ref/nn_functional.lua, gen_nn.py), float64; dims are 1-based.
local here = debug.getinfo(1, "S").source:match("^@(.*)/[^/]*$") or "tests/nn"
package.path = here .. "/?.lua;" .. package.path
local R = require "nnref"
R.use(_ENV)
local nn = require "torch.nn"
local F = nn.functional
local refs = ref("nn_functional")

local cases = {
  pad_constant = function(x) return F.pad(x, {1, 2, 0, 1}, {value = 0.5}) end,
  pad_negative = function(x) return F.pad(x, {-1, 2, 1, -1}) end,
  pad_reflect = function(x) return F.pad(x, {2, 1, 3, 1}, "reflect") end,
  pad_replicate = function(x) return F.pad(x, {2, 3, 1, 0}, {mode = "replicate"}) end,
  pad_circular = function(x) return F.pad(x, {1, 2, 2, 1}, "circular") end,
  interp_nearest = function(x) return F.interpolate(x, {size = {7, 3}}) end,
  interp_nearest_scale = function(x) return F.interpolate(x, {scale_factor = 2, mode = "nearest"}) end,
  interp_bilinear = function(x) return F.interpolate(x, {7, 8}, nil, "bilinear") end,
  interp_bilinear_ac = function(x) return F.interpolate(x, {size = {3, 8}, mode = "bilinear", align_corners = true}) end,
  interp_bilinear_down = function(x) return F.interpolate(x, {scale_factor = 0.6, mode = "bilinear"}) end,
  interp_bicubic = function(x) return F.interpolate(x, {size = {6, 7}, mode = "bicubic"}) end,
  interp_bicubic_ac = function(x) return F.interpolate(x, {size = {6, 3}, mode = "bicubic", align_corners = true}) end,
  interp_area = function(x) return F.interpolate(x, {size = {2, 3}, mode = "area"}) end,
  interp_linear_1d = function(x) return F.interpolate(x, {size = 9, mode = "linear"}) end,
  interp_bilinear_aa = function(x) return F.interpolate(x, {size = {4, 3}, mode = "bilinear", antialias = true}) end,
  interp_bicubic_aa = function(x) return F.interpolate(x, {size = {3, 5}, mode = "bicubic", antialias = true}) end,
  grid_sample = function(x, g) return F.grid_sample(x, g, {align_corners = false}) end,
  grid_sample_border_ac = function(x, g) return F.grid_sample(x, g, {padding_mode = "border", align_corners = true}) end,
  grid_sample_reflection = function(x, g) return F.grid_sample(x, g, {padding_mode = "reflection"}) end,
  grid_sample_nearest = function(x, g) return F.grid_sample(x, g, {mode = "nearest"}) end,
  affine_grid = function(th) return F.affine_grid(th, {2, 3, 4, 5}, false) end,
  affine_grid_ac = function(th) return F.affine_grid(th, {2, 3, 3, 2}, {align_corners = true}) end,
  unfold = function(x) return F.unfold(x, {2, 3}, {dilation = {1, 2}, padding = 1, stride = {2, 1}}) end,
  fold = function(x) return F.fold(x, {4, 5}, {2, 2}, {padding = 1, stride = {1, 2}}) end,
  pixel_shuffle = function(x) return F.pixel_shuffle(x, 2) end,
  pixel_unshuffle = function(x) return F.pixel_unshuffle(x, 2) end,
  normalize = function(x) return F.normalize(x, {dim = 2}) end,
  normalize_p1_dim0 = function(x) return F.normalize(x, 1, 1) end,
  cosine_similarity = function(a, b) return F.cosine_similarity(a, b) end,
  cosine_similarity_dim = function(a, b) return F.cosine_similarity(a, b, -1) end,
  one_hot = function(t) return F.one_hot(t, 5) end,
  embedding_fn = function(t, w) return F.embedding(t, w, {padding_idx = 3}) end,
  dropout_eval = function(x) return F.dropout(x, 0.3, false) end,
  adaptive_avg_pool2d_fn = function(x) return F.adaptive_avg_pool2d(x, 2) end,
  conv_transpose2d_fn = function(x, w) return F.conv_transpose2d(x, w, nil, 2) end,
  bilinear_fn = function(a, b, w) return F.bilinear(a, b, w) end,
}

local names = {}
for k in pairs(cases) do names[#names + 1] = k end
table.sort(names)
for _, name in ipairs(names) do R.fn_tests(refs, name, cases[name]) end

test("every reference case has a test", function()
  for k in pairs(refs) do check(cases[k] ~= nil, "no test for reference case " .. k) end
end)

test("dropout: zeroes about p of the elements, scales the rest by 1/(1-p), identity when p=0 or not training", function()
  torch.manual_seed(3)
  local x = torch.ones(100000)
  local y = F.dropout(x, 0.3)
  local zeros = y:eq(0):sum():item()
  check(math.abs(zeros / 100000 - 0.3) < 0.01, "fraction of zeros " .. zeros / 100000)
  check_close(y:max(), 1 / 0.7, {atol = 1e-6})
  check(torch.equal(F.dropout(x, 0.0), x))
  check(torch.equal(F.dropout(x, 0.5, {training = false}), x))
  check_eq(F.dropout(x, 1.0):sum():item(), 0.0)
  local d = nn.Dropout(0.5)
  d:eval()
  check(torch.equal(d(x), x))
  local m = F.dropout2d(torch.ones(4, 8, 3, 3), 0.5)
  local per = m:sum({3, 4})
  check(per:eq(0):logical_or(per:eq(18)):all():item(), "dropout2d drops whole channels")
  check_error(function() F.dropout(x, 1.5) end, "dropout probability has to be between 0 and 1, got 1.5")
end)

test("pad, interpolate, one_hot and fold argument errors are clear", function()
  local x = torch.zeros(1, 1, 3, 3)
  check_error(function() F.pad(x, {1, 2, 3}) end, "F.pad: pad must be a list of even length")
  check_error(function() F.pad(x, {3, 3}, "reflect") end, "must be less than the size 3 of dim 4")
  check_error(function() F.pad(x, {1, 1}, "wrap") end, "F.pad: unknown mode 'wrap'")
  check_error(function() F.interpolate(x, {size = {2, 2}, mode = "nearest", align_corners = true}) end,
              "align_corners can only be set")
  check_error(function() F.interpolate(x) end, "either size or scale_factor")
  check_error(function() F.one_hot(torch.tensor({0, 1})) end, "class values must be >= 1 (1-based), got 0")
  check_error(function() F.one_hot(torch.tensor({3, 1}), 2) end, "class value 3 is larger than num_classes=2")
  check_error(function() F.fold(torch.zeros(1, 4, 5), {3, 3}, 2) end, "expected 4 blocks (2x2) for output_size (3, 3), got 5")
end)
