-- tests/cuda/test_vision_color.lua -- the v2 color, misc and augment
-- functionals and the per_sample transforms (domains/vision/transforms/v2/)
-- on CUDA against the CPU's results on the same images: uint8 within one
-- level, float within 1e-5, results on the GPU; per_sample draws made on
-- the host, so one seed gives the same parameters on both devices. Also
-- the compiled functionals (CUDA graphs) against eager. Skips without a GPU.

if not torch.cuda.is_available() then
  io.write("note: no CUDA GPU/driver here; GPU vision color tests skipped\n")
  return
end

torch.set_default_device("cpu")
local v2 = torch.vision.transforms.v2
local F2 = v2.functional
local tv = torch.vision.tv_tensors

local function imgs(dt, seed, ...)
  torch.manual_seed(seed)
  local x = torch.rand(...)
  if dt == torch.uint8 then return (x * 255):floor():to(torch.uint8) end
  return x:to(dt)
end

local function same(g, c, what)
  check(g.is_cuda, what .. ": the result stays on cuda")
  check_eq(g.dtype, c.dtype, what .. " dtype")
  local atol = c.dtype == torch.uint8 and 1 or (c.dtype == torch.float16 and 2e-3 or 1e-5)
  check_close(g:cpu():double(), c:double(), {atol = atol, rtol = 0})
end

local OPS = {
  {"adjust_brightness", 1.4}, {"adjust_contrast", 0.6}, {"adjust_saturation", 1.7}, {"adjust_hue", 0.23},
  {"adjust_hue", -0.41}, {"adjust_gamma", 0.6, 1.1}, {"adjust_sharpness", 2.2}, {"autocontrast"}, {"equalize"},
  {"invert"}, {"posterize", 3}, {"rgb_to_grayscale", 3}, {"permute_channels", {3, 1, 2}},
  {"gaussian_blur", {5, 3}, {1.2, 0.7}}, {"erase", 2, 3, 5, 4, 0.25},
}

test("functionals on CUDA equal the CPU (uint8, float32, float64; images, batches, videos)", function()
  for _, dt in ipairs({torch.uint8, torch.float32, torch.float64}) do
    for _, shape in ipairs({{3, 31, 29}, {4, 3, 64, 48}, {2, 3, 3, 17, 19}}) do
      local x = imgs(dt, 1, table.unpack(shape))
      for _, op in ipairs(OPS) do
        local args = {table.unpack(op, 2)}
        local c = F2[op[1]](x, table.unpack(args))
        local g = F2[op[1]](x:cuda(), table.unpack(args))
        same(g, c, ("%s %s %s"):format(op[1], tostring(dt), torch.pformat(shape)))
      end
      local sol = dt == torch.uint8 and 100 or 0.4
      same(F2.solarize(x:cuda(), sol), F2.solarize(x, sol), "solarize")
      if dt ~= torch.uint8 then
        same(F2.normalize(x:cuda(), {0.4, 0.5, 0.6}, {0.2, 0.3, 0.1}), F2.normalize(x, {0.4, 0.5, 0.6}, {0.2, 0.3, 0.1}),
          "normalize")
      end
      same(F2.to_dtype(x:cuda(), torch.uint8, true), F2.to_dtype(x, torch.uint8, true), "to_dtype uint8")
      same(F2.to_dtype(x:cuda(), torch.float32, true), F2.to_dtype(x, torch.float32, true), "to_dtype float32")
    end
  end
end)

test("per_sample transforms on CUDA equal the CPU for the same seed", function()
  local cases = {
    function() return v2.ColorJitter(0.4, 0.4, 0.4, 0.1, {per_sample = true}) end,
    function() return v2.RandomGrayscale({p = 0.5, per_sample = true}) end,
    function() return v2.RandomInvert({per_sample = true}) end,
    function() return v2.RandomPosterize(3, {per_sample = true}) end,
    function() return v2.RandomSolarize(0.5, {per_sample = true}) end,
    function() return v2.RandomAutocontrast({per_sample = true}) end,
    function() return v2.RandomEqualize({per_sample = true}) end,
    function() return v2.RandomAdjustSharpness(1.8, {per_sample = true}) end,
    function() return v2.GaussianBlur(5, {0.2, 2.0}, {per_sample = true}) end,
    function() return v2.RandomErasing({p = 0.8, value = {0.1, 0.2, 0.3}, per_sample = true}) end,
  }
  for _, dt in ipairs({torch.float32, torch.uint8}) do
    local x = imgs(dt, 2, 16, 3, 40, 36)
    for i, make in ipairs(cases) do
      if not (dt == torch.uint8 and i == 5) then
        local t = make()
        torch.manual_seed(5)
        local c = t(x)
        torch.manual_seed(5)
        local g = t(x:cuda())
        same(g, c, t:_get_name() .. " " .. tostring(dt))
      end
    end
  end
end)

test("MixUp, CutMix, AugMix-free color policies and JPEG on CUDA", function()
  local x = imgs(torch.float32, 3, 8, 3, 24, 24)
  local labels = torch.tensor({1, 2, 3, 4, 5, 1, 2, 3})
  for _, T in ipairs({v2.MixUp, v2.CutMix}) do
    local t = T{num_classes = 5}
    torch.manual_seed(3)
    local ci, cl = t(x, labels)
    torch.manual_seed(3)
    local gi, gl = t(x:cuda(), labels:cuda())
    same(gi, ci, T.__name or "mix")
    same(gl, cl, "labels")
  end
  local u = imgs(torch.uint8, 4, 2, 3, 32, 32)
  same(F2.jpeg(u:cuda(), 70), F2.jpeg(u, 70), "jpeg")
  local img = tv.Image(u:cuda())
  check_eq(tv.kind(v2.ColorJitter(0.3, 0.3)(img)), "Image")
end)

test("compiled functionals on CUDA equal eager", function()
  local x = imgs(torch.float32, 6, 4, 3, 64, 64):cuda()
  local u = (x * 255):floor():to(torch.uint8)
  local fns = {
    {function(t) return F2.normalize(F2.adjust_hue(F2.adjust_saturation(t, 0.7), 0.1), {0.5, 0.4, 0.3},
      {0.2, 0.2, 0.2}) end, x},
    {function(t) return F2.equalize(t) end, u},
    {function(t) return F2.gaussian_blur(t, 5, 1.1) end, x},
    {function(t) return F2.adjust_sharpness(F2.autocontrast(t), 1.9) end, u},
  }
  for i, c in ipairs(fns) do
    local cf = torch.compile(c[1])
    local want = c[1](c[2])
    for _ = 1, 3 do same(cf(c[2]), want, "compiled fn " .. i) end
  end
end)
