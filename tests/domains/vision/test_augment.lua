-- tests/domains/vision/test_augment.lua -- the v2 transform classes of
-- the color, misc, augment and auto-augment families
-- (domains/vision/transforms/v2/_color.lua, _misc.lua, _augment.lua,
-- _auto_augment.lua, _type_conversion.lua): parameters drawn within their
-- ranges, p=0 / p=1, per_sample batches equal to a per-image loop of the
-- functionals with the same drawn parameters, MixUp/CutMix label and pixel
-- arithmetic in closed form, the auto-augment op spaces, torch.compile.

local v2 = torch.vision.transforms.v2
local F2 = v2.functional
local tv = torch.vision.tv_tensors

local function batch(n, dtype, seed)
  torch.manual_seed(seed or 7)
  local x = torch.rand(n, 3, 12, 10)
  if dtype == torch.uint8 then x = (x * 255):floor():to(torch.uint8) end
  return x
end

local function same(a, b, atol) check_close(a:double(), b:double(), {atol = atol or 1e-5, rtol = 0}) end

local function flat1(x) return {n = 1, x} end

test("ColorJitter: factors within range, the order a permutation, and the result the functionals in that order", function()
  local t = v2.ColorJitter(0.4, {0.5, 0.9}, 0.3, 0.1)
  check_eq(t.brightness, {0.6, 1.4})
  check_eq(t.contrast, {0.5, 0.9})
  for seed = 1, 20 do
    torch.manual_seed(seed)
    local p = t:make_params(flat1(batch(1)))
    local sorted = {table.unpack(p.fn_idx)}
    table.sort(sorted)
    check_eq(sorted, {1, 2, 3, 4})
    check(p.adjust_brightness >= 0.6 and p.adjust_brightness <= 1.4)
    check(p.adjust_contrast >= 0.5 and p.adjust_contrast <= 0.9)
    check(p.adjust_saturation >= 0.7 and p.adjust_saturation <= 1.3)
    check(p.adjust_hue >= -0.1 and p.adjust_hue <= 0.1)
  end
  local x = batch(2, torch.uint8)
  torch.manual_seed(5)
  local p = t:make_params(flat1(x))
  local want = x
  local names = {"adjust_brightness", "adjust_contrast", "adjust_saturation", "adjust_hue"}
  for _, id in ipairs(p.fn_idx) do want = F2[names[id]](want, p[names[id]]) end
  torch.manual_seed(5)
  same(t(x), want, 0)
  check(v2.ColorJitter().brightness == nil)
  check(v2.ColorJitter(0, 0, 0, 0)(x) == x)
  check_error(function() v2.ColorJitter(-1) end, "non negative")
  check_error(function() v2.ColorJitter(nil, nil, nil, 0.6) end, "hue values should be between")
  check_error(function() v2.ColorJitter({1, 2, 3}) end, "single number or a list of two")
  check_error(function() v2.ColorJitter{brigthness = 1} end, "brigthness")
end)

test("ColorJitter per_sample: per-image factors and orders equal a loop of the functionals", function()
  for _, dt in ipairs({torch.float32, torch.uint8}) do
    local x = batch(9, dt, 3)
    local t = v2.ColorJitter(0.4, 0.4, 0.4, 0.1, {per_sample = true})
    torch.manual_seed(11)
    local p = t:make_params(flat1(x))
    local y = t:transform(x, p)
    local names = {"adjust_brightness", "adjust_contrast", "adjust_saturation", "adjust_hue"}
    local order = p.order:totable()
    local distinct = {}
    for i = 1, 9 do
      local want = x[i]
      distinct[table.concat(order[i], ",")] = true
      for _, id in ipairs(order[i]) do want = F2[names[id]](want, p[names[id]][i]:item()) end
      same(y[i], want, dt == torch.uint8 and 1 or 1e-5)
    end
    check(next(distinct, next(distinct)) ~= nil, "all images got the same order")
    local f = p.adjust_brightness
    check(f:min():item() >= 0.6 and f:max():item() <= 1.4 and f:std():item() > 0.01)
  end
end)

test("Random* transforms: p=0 leaves the sample, p=1 applies the functional", function()
  local x = batch(2, torch.uint8)
  local cases = {
    {v2.RandomInvert, {}, function(i) return F2.invert(i) end},
    {v2.RandomPosterize, {3}, function(i) return F2.posterize(i, 3) end},
    {v2.RandomSolarize, {100}, function(i) return F2.solarize(i, 100) end},
    {v2.RandomAdjustSharpness, {2}, function(i) return F2.adjust_sharpness(i, 2) end},
    {v2.RandomAutocontrast, {}, function(i) return F2.autocontrast(i) end},
    {v2.RandomEqualize, {}, function(i) return F2.equalize(i) end},
    {v2.RandomGrayscale, {}, function(i) return F2.rgb_to_grayscale(i, 3) end},
  }
  for _, c in ipairs(cases) do
    local args = {table.unpack(c[2])}
    args[#args + 1] = 0
    check(c[1](table.unpack(args))(x) == x)
    args[#args] = 1
    same(c[1](table.unpack(args))(x), c[3](x), 0)
  end
  local gray = v2.Grayscale()(x)
  check_eq(gray.shape, {2, 1, 12, 10})
  check_eq(v2.Grayscale(3)(x).shape, {2, 3, 12, 10})
  check_error(function() v2.RandomPosterize(9) end, "bits")
  check_error(function() v2.RandomInvert(2) end, "p should be")
  check_error(function() v2.Grayscale(2) end, "num_output_channels")
end)

test("Random* per_sample: one coin per image, the result per image as the functional", function()
  local x = batch(16, torch.uint8, 4)
  local cases = {
    {v2.RandomInvert({p = 0.5, per_sample = true}), function(i) return F2.invert(i) end},
    {v2.RandomPosterize(2, {p = 0.5, per_sample = true}), function(i) return F2.posterize(i, 2) end},
    {v2.RandomSolarize(128, {p = 0.5, per_sample = true}), function(i) return F2.solarize(i, 128) end},
    {v2.RandomAdjustSharpness(0.3, {p = 0.5, per_sample = true}), function(i) return F2.adjust_sharpness(i, 0.3) end},
    {v2.RandomAutocontrast({p = 0.5, per_sample = true}), function(i) return F2.autocontrast(i) end},
    {v2.RandomEqualize({p = 0.5, per_sample = true}), function(i) return F2.equalize(i) end},
    {v2.RandomGrayscale({p = 0.5, per_sample = true}), function(i) return F2.rgb_to_grayscale(i, 3) end},
  }
  for _, c in ipairs(cases) do
    torch.manual_seed(21)
    local p = c[1]:make_params(flat1(x))
    local y = c[1]:transform(x, p)
    local coins = p.coins:totable()
    local on = 0
    for i = 1, 16 do
      if coins[i] then on = on + 1; same(y[i], c[2](x[i]), 0) else same(y[i], x[i], 0) end
    end
    check(on > 0 and on < 16, c[1]:_get_name() .. ": coins all equal")
    -- through forward too
    check_eq(c[1](x).shape, x.shape)
  end
end)

test("GaussianBlur: sigma drawn in range; per_sample blurs each image with its own sigma", function()
  local t = v2.GaussianBlur(5, {0.5, 2.0})
  for s = 1, 10 do
    torch.manual_seed(s)
    local p = t:make_params(flat1(batch(1)))
    check(p.sigma[1] >= 0.5 and p.sigma[1] <= 2 and p.sigma[1] == p.sigma[2])
  end
  for _, dt in ipairs({torch.float32, torch.uint8}) do
    local x = batch(6, dt, 5)
    local tp = v2.GaussianBlur({5, 3}, {0.3, 2.5}, {per_sample = true})
    torch.manual_seed(9)
    local p = tp:make_params(flat1(x))
    local y = tp:transform(x, p)
    for i = 1, 6 do
      local s = p.sigmas[i]:item()
      same(y[i], F2.gaussian_blur(x[i], {5, 3}, {s, s}), dt == torch.uint8 and 1 or 1e-5)
    end
  end
  local vid = tv.Video(batch(4):view(2, 2, 3, 12, 10))
  local yv = v2.GaussianBlur(3, {1, 1}, {per_sample = true})(vid)
  check_eq(tv.kind(yv), "Video")
  same(yv, F2.gaussian_blur(vid, 3, 1))
  check_error(function() v2.GaussianBlur(4) end, "odd and positive")
  check_error(function() v2.GaussianBlur(3, {2, 1}) end, "sigma values")
end)

test("RandomErasing: the rectangle within the scale and ratio ranges; value, random, p=0", function()
  local x = torch.ones(3, 40, 50)
  local t = v2.RandomErasing({p = 1, scale = {0.05, 0.2}, ratio = {0.5, 2}, value = 0})
  for s = 1, 20 do
    torch.manual_seed(s)
    local p = t:make_params(flat1(x))
    local area = p.h * p.w / (40 * 50)
    check(area > 0.03 and area < 0.23, "area " .. area)
    check(p.h / p.w > 0.4 and p.h / p.w < 2.5)
    check(p.i >= 0 and p.i + p.h <= 40 and p.j >= 0 and p.j + p.w <= 50)
    torch.manual_seed(s)
    local y = t(x)
    check_eq((1 - y):sum():item(), 3 * p.h * p.w)
  end
  check(v2.RandomErasing(0)(x) == x)
  local y = v2.RandomErasing{p = 1, value = "random"}(x)
  check(y:ne(1):sum():item() > 0)
  local y3 = v2.RandomErasing{p = 1, value = {2, 3, 4}}(x)
  check_eq(y3[2]:max():item(), 3)
  local m = tv.Mask(torch.ones(40, 50))
  local s = v2.RandomErasing(1)({tv.Image(x), m})
  check(s[2] == m)
  check_error(function() v2.RandomErasing{value = "foo"} end, "'random'")
  check_error(function() v2.RandomErasing{scale = {0.1, 2}} end, "between 0 and 1")
  check_error(function() v2.RandomErasing{p = 1, value = {1, 2}}(x) end, "single value or 3")
end)

test("RandomErasing per_sample: one masked fill equals erase per image", function()
  local x = batch(12, torch.float32, 8)
  local t = v2.RandomErasing({p = 0.7, value = {0.1, 0.2, 0.3}, per_sample = true})
  torch.manual_seed(3)
  local p = t:make_params(flat1(x))
  local y = t:transform(x, p)
  local v = torch.tensor({0.1, 0.2, 0.3}):view(3, 1, 1)
  local erased = 0
  for i = 1, 12 do
    local h, w = p.h[i]:item(), p.w[i]:item()
    local ii, jj = math.tointeger(p.i[i]:item()), math.tointeger(p.j[i]:item())
    if h > 0 then
      erased = erased + 1
      same(y[i], F2.erase(x[i], ii, jj, math.tointeger(h), math.tointeger(w), v), 0)
    else
      same(y[i], x[i], 0)
    end
  end
  check(erased > 0 and erased < 12)
end)

test("MixUp: lam from Beta, images and one-hot labels mixed with the batch rolled by one", function()
  local x = batch(4)
  local labels = torch.tensor({1, 3, 2, 5})
  local t = v2.MixUp{alpha = 0.5, num_classes = 5}
  torch.manual_seed(2)
  local lam = t:make_params({n = 0}).lam
  check(lam >= 0 and lam <= 1)
  torch.manual_seed(2)
  local y, l = t(x, labels)
  same(y, x * lam + x:roll(1, 1) * (1 - lam))
  local oh = torch.zeros(4, 5)
  for i, c in ipairs({1, 3, 2, 5}) do oh[i][c] = 1 end
  same(l, oh * lam + oh:roll(1, 1) * (1 - lam))
  check_close(l:sum(2), {1, 1, 1, 1})
  -- Beta(alpha, alpha) has mean 1/2 and variance 1 / (4 (2 alpha + 1))
  torch.manual_seed(1)
  local s, s2, n = 0, 0, 2000
  for _ = 1, n do
    local v = t:make_params({n = 0}).lam
    s, s2 = s + v, s2 + v * v
  end
  local mean, var = s / n, s2 / n - (s / n) ^ 2
  check(math.abs(mean - 0.5) < 0.03, "mean " .. mean)
  check(math.abs(var - 1 / 8) < 0.015, "variance " .. var)
  local d = t({image = tv.Image(x), labels = labels})
  check_eq(tv.kind(d.image), "Image")
  check_eq(d.labels.shape, {4, 5})
  check_error(function() t(x, torch.tensor({0, 1, 2, 3})) end, "1-based")
  check_error(function() t(x[1], labels) end, "batched input with 4 dims")
  check_error(function() t(x, torch.tensor({1, 2})) end, "batch size")
  check_error(function() v2.MixUp()(x, labels) end, "num_classes")
  check_error(function() t({x, labels, tv.Mask(torch.zeros(4, 12, 10))}) end, "masks")
end)

test("CutMix: the box from the drawn center and lam, labels mixed by the box's true area", function()
  local x = batch(3)
  local labels = torch.tensor({{0.0, 1.0}, {1.0, 0.0}, {0.5, 0.5}})
  local t = v2.CutMix{num_classes = 2}
  for s = 1, 10 do
    torch.manual_seed(s)
    local p = t:make_params(flat1(x))
    local b = p.box
    check(b[1] >= 0 and b[3] <= 10 and b[2] >= 0 and b[4] <= 12 and b[1] <= b[3] and b[2] <= b[4])
    check_close(p.lam, 1 - (b[3] - b[1]) * (b[4] - b[2]) / 120, {atol = 1e-12})
    torch.manual_seed(s)
    local y, l = t(x, labels)
    local want = x:clone()
    local rolled = x:roll(1, 1)
    for r = b[2] + 1, b[4] do
      for c = b[1] + 1, b[3] do want[{{}, {}, r, c}] = rolled[{{}, {}, r, c}] end
    end
    same(y, want, 0)
    same(l, labels * p.lam + labels:roll(1, 1) * (1 - p.lam))
  end
end)

test("Normalize, ToDtype (dict form), ConvertImageDtype, ToImage, ToPureTensor, Identity, Lambda", function()
  local x = batch(2)
  same(v2.Normalize({0.5, 0.4, 0.3}, {0.2, 0.2, 0.1})(x), F2.normalize(x, {0.5, 0.4, 0.3}, {0.2, 0.2, 0.1}))
  local u = (x * 255):floor():to(torch.uint8)
  local img, mask = tv.Image(u), tv.Mask(torch.ones(12, 10, {dtype = torch.uint8}))
  local s = v2.ToDtype(torch.float32, {scale = true})({img, mask})
  check_eq(s[1].dtype, torch.float32)
  check(s[2] == mask)
  same(s[1], u:double() / 255)
  local s2 = v2.ToDtype({Image = torch.float64, Mask = torch.int64, others = false}, true)({img, mask, torch.ones(2)})
  check_eq(s2[1].dtype, torch.float64)
  check_eq(s2[2].dtype, torch.int64)
  check_eq(tv.kind(s2[2]), "Mask")
  check_error(function() v2.ToDtype({Image = torch.float32})({img, mask}) end, "no dtype was given for Mask")
  check_error(function() v2.ToDtype({Imgae = torch.float32}) end, "Imgae")
  check_eq(v2.ConvertImageDtype(torch.float64)(u).dtype, torch.float64)
  check_eq(tv.kind(v2.ToImage()(x[1])), "Image")
  check_eq(tv.kind(v2.ToPureTensor()({img})[1]), nil)
  check(v2.Identity()(x) == x)
  local l = v2.Lambda(function(v) return v * 2 end, "number")({3, x})
  check_eq(l[1], 6)
  check(l[2] == x)
  local m = torch.eye(3 * 2 * 2) * 2
  local lt = v2.LinearTransformation(m, torch.ones(12))
  local z = torch.rand(3, 2, 2)
  same(lt(z), (z - 1) * 2)
  check_error(function() v2.LinearTransformation(torch.eye(5), torch.ones(5))(z) end, "incompatible shape")
end)

test("GaussianNoise, JPEG, RandomChannelPermutation, RandomPhotometricDistort", function()
  local x = batch(2)
  torch.manual_seed(1)
  local y = v2.GaussianNoise(0, 0.05)(x)
  check(math.abs((y - x):std():item() - 0.05) < 0.01)
  local u = (x * 255):floor():to(torch.uint8)
  torch.manual_seed(1)
  local t = v2.JPEG({40, 60})
  local q = t:make_params(flat1(u)).quality
  check(q >= 40 and q <= 60)
  torch.manual_seed(1)
  same(t(u), F2.jpeg(u, q), 0)
  check_error(function() v2.JPEG(0) end, "quality")
  torch.manual_seed(2)
  local cp = v2.RandomChannelPermutation()
  local perm = cp:make_params(flat1(x)).permutation
  torch.manual_seed(2)
  same(cp(x), F2.permute_channels(x, perm), 0)
  local pd = v2.RandomPhotometricDistort{p = 1}
  torch.manual_seed(4)
  local p = pd:make_params(flat1(x))
  check(p.adjust_brightness >= 0.875 and p.adjust_brightness <= 1.125)
  check(p.adjust_hue >= -0.05 and p.adjust_hue <= 0.05)
  check(p.permutation ~= nil)
  check(v2.RandomPhotometricDistort{p = 0}(x) ~= nil)
  same(v2.RandomPhotometricDistort{p = 0}(x), x, 0)
end)

test("auto augment: op spaces and magnitude bins as torchvision's", function()
  local AA = require "torch.vision.transforms.v2._auto_augment"
  local sp = AA._spaces
  local names = {}
  for _, e in ipairs(sp.rand) do names[#names + 1] = e[1] end
  check_eq(names, {"Identity", "ShearX", "ShearY", "TranslateX", "TranslateY", "Rotate", "Brightness", "Color",
    "Contrast", "Sharpness", "Posterize", "Solarize", "AutoContrast", "Equalize"})
  check_eq(#sp.auto, 14)
  check_eq(#sp.wide, 14)
  check_eq(#sp.augmix, 13)
  check_eq(#sp.policies.imagenet, 25)
  check_eq(#sp.policies.cifar10, 25)
  check_eq(#sp.policies.svhn, 25)
  local function bins(space, name, n, h, w)
    for _, e in ipairs(space) do if e[1] == name then return e[2](n, h, w) end end
  end
  -- RandAugment's posterize bins: 8 - round(k / ((n - 1) / 4))
  check_close(bins(sp.rand, "Posterize", 31), (8 - (torch.arange(31) / 7.5):round()):totable())
  check_close(bins(sp.wide, "Posterize", 31):totable()[31], 2)
  check_close(bins(sp.augmix, "Posterize", 10):totable()[1], 4)
  check_close(bins(sp.auto, "TranslateX", 10, 331, 662):totable()[10], 300, {atol = 1e-4})
  check_close(bins(sp.auto, "Solarize", 10):totable()[1], 1)
  check_close(bins(sp.wide, "Rotate", 31):totable()[31], 135)
end)

-- records the calls of F.affine / F.rotate (the real ops, or the identity
-- where they are absent) while fn runs
local function with_geometry(fn)
  local real_affine, real_rotate = F2.affine, F2.rotate
  local calls = {}
  F2.affine = function(img, ...)
    calls[#calls + 1] = {"affine", ...}
    if real_affine then return real_affine(img, ...) end
    return img
  end
  F2.rotate = function(img, ...)
    calls[#calls + 1] = {"rotate", ...}
    if real_rotate then return real_rotate(img, ...) end
    return img
  end
  local ok, err = pcall(fn, calls, real_affine ~= nil)
  F2.affine, F2.rotate = real_affine, real_rotate
  if not ok then error(err, 0) end
end

test("AutoAugment, RandAugment, TrivialAugmentWide, AugMix run their ops on images and batches", function()
  with_geometry(function(calls)
    local u = (batch(2) * 255):floor():to(torch.uint8)
    for _, t in ipairs({v2.AutoAugment(), v2.AutoAugment("cifar10"), v2.AutoAugment(v2.AutoAugmentPolicy.SVHN),
                        v2.RandAugment(), v2.RandAugment{num_ops = 4, magnitude = 30}, v2.TrivialAugmentWide(),
                        v2.AugMix(), v2.AugMix{all_ops = false, chain_depth = 2, severity = 10}}) do
      for s = 1, 8 do
        torch.manual_seed(s)
        local y = t(u)
        check_eq(y.shape, u.shape)
        check_eq(y.dtype, torch.uint8)
        local yi = t(tv.Image(u[1]))
        check_eq(tv.kind(yi), "Image")
      end
      local yf = t(u:float() / 255)
      check_eq(yf.dtype, torch.float32)
    end
    check(#calls > 0, "no geometric op was drawn")
    check_error(function() v2.AutoAugment("foo") end, "policy")
    check_error(function() v2.RandAugment{num_ops = -1} end, "num_ops")
    check_error(function() v2.RandAugment{magnitude = 31} end, "magnitude")
    check_error(function() v2.AugMix{severity = 11} end, "severity")
    check_error(function() v2.AutoAugment()({tv.Image(u[1]), tv.Mask(torch.zeros(12, 10))}) end, "not supported")
    check_error(function() v2.RandAugment{interpolation = "linear"} end, "interpolation")
  end)
end)

test("RandAugment with one op: the drawn op and its magnitude bin applied by the functional", function()
  with_geometry(function(calls, real)
    local u = (batch(1) * 255):floor():to(torch.uint8)[1]
    local t = v2.RandAugment{num_ops = 1, magnitude = 9, num_magnitude_bins = 31}
    local seen = {}
    for s = 1, 60 do
      torch.manual_seed(s)
      local k = torch.randint(0, 14, {1}):item()
      local name = ({"Identity", "ShearX", "ShearY", "TranslateX", "TranslateY", "Rotate", "Brightness", "Color",
        "Contrast", "Sharpness", "Posterize", "Solarize", "AutoContrast", "Equalize"})[k + 1]
      local m = 9 / 30 * 0.9
      local neg = torch.rand(1):item() <= 0.5
      torch.manual_seed(s)
      local y = t(u)
      local want
      local signed = m * (neg and -1 or 1)
      if name == "Brightness" then want = F2.adjust_brightness(u, 1 + signed)
      elseif name == "Color" then want = F2.adjust_saturation(u, 1 + signed)
      elseif name == "Contrast" then want = F2.adjust_contrast(u, 1 + signed)
      elseif name == "Sharpness" then want = F2.adjust_sharpness(u, 1 + signed)
      elseif name == "Posterize" then want = F2.posterize(u, 7)
      elseif name == "Solarize" then want = F2.solarize(u, 255 * (1 - 9 / 30))
      elseif name == "AutoContrast" then want = F2.autocontrast(u)
      elseif name == "Equalize" then want = F2.equalize(u)
      elseif name == "Identity" then want = u end
      if want then
        seen[name] = true
        same(y, want, 1)
      end
    end
    check(seen.Brightness and seen.Equalize and seen.Posterize, "too few ops drawn")
  end)
end)

test("torch.compile: functionals with fixed parameters compile (no eager fallback) and give the eager result", function()
  local x = batch(2)
  local u = (x * 255):floor():to(torch.uint8)
  local fns = {
    {function(t) return F2.adjust_brightness(F2.adjust_contrast(t, 1.3), 0.8) end, x},
    {function(t) return F2.normalize(F2.adjust_saturation(t, 0.5), {0.5, 0.4, 0.3}, {0.2, 0.3, 0.2}) end, x},
    {function(t) return F2.invert(F2.posterize(F2.to_dtype(t, torch.uint8, true), 4)) end, x},
    {function(t) return F2.adjust_hue(t, 0.2) end, x},
    {function(t) return F2.adjust_hue(t, -0.4) end, u},
    {function(t) return F2.gaussian_blur(t, {5, 3}, 0.9) end, x},
    {function(t) return F2.gaussian_blur(t, 3) end, u},
    {function(t) return F2.erase(F2.autocontrast(t), 2, 3, 4, 5, 0.5) end, x},
    {function(t) return F2.equalize(t) end, u},
    {function(t) return F2.adjust_sharpness(F2.adjust_gamma(t, 0.8), 1.7) end, u},
    {function(t) return F2.permute_channels(F2.solarize(t, 0.4), {2, 3, 1}) end, x},
  }
  for i, c in ipairs(fns) do
    local fn, inp = c[1], c[2]
    local why = torch.compiler.explain(fn, inp):match("eagerly because:[^\n]*")
    check(why == nil, ("fn %d does not compile: %s"):format(i, tostring(why)))
    local cf = torch.compile(fn)
    local want = fn(inp)
    for _ = 1, 3 do
      local ok, got = pcall(cf, inp)
      check(ok, ("compiled fn %d failed: %s"):format(i, tostring(got)))
      same(got, want, want.dtype == torch.uint8 and 1 or 1e-5)
    end
  end
end)
