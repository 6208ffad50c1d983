-- tests/domains/vision/opsgen.lua -- the input generators of
-- tests/ref/gen_vision_ops.py, repeated (test_ops.lua and
-- tests/cuda/test_vision_ops.lua use them).
local f32, f64 = torch.float32, torch.float64
local G = {}

-- gen_vision_ops.py's gen(shape, seed)
function G.gen(shape, seed, dtype)
  local n = 1
  for _, s in ipairs(shape) do n = n * s end
  local flat = {}
  for k = 0, n - 1 do flat[k + 1] = ((37 * k + 11 * seed) % 101 - 50) / 32 end
  return torch.tensor(flat, {dtype = dtype or f64}):reshape(shape)
end

-- gen_vision_ops.py's Lcg
local function lcg(seed)
  local s = seed
  return function()
    s = (s * 1103515245 + 12345) % 2147483648
    return s / 2147483648
  end
end

-- gen_vision_ops.py's boxes(n, seed, span, size): boxes (n, 4) and scores (n)
function G.boxes(n, seed, dtype, span, size)
  span, size = span or 80, size or 30
  local u, b, s = lcg(seed), {}, {}
  for i = 1, n do
    local x1, y1 = math.floor(u() * span * 4) / 4, math.floor(u() * span * 4) / 4
    local w, h = 1 + math.floor(u() * size * 4) / 4, 1 + math.floor(u() * size * 4) / 4
    b[i] = {x1, y1, x1 + w, y1 + h}
    s[i] = math.floor(u() * 20) / 20
  end
  return torch.tensor(b, {dtype = dtype or f32}), torch.tensor(s, {dtype = dtype or f32})
end

function G.labels(n, seed, k)
  local u, out = lcg(seed), {}
  for i = 1, n do out[i] = math.floor(u() * k) end
  return torch.tensor(out, {dtype = torch.int64})
end

-- gen_vision_ops.py's rois(k, seed), the batch column 1-based
function G.rois(k, seed, dtype)
  local u, out = lcg(seed), {}
  for i = 0, k - 1 do
    local x1, y1 = u() * 14 - 2, u() * 12 - 2
    out[#out + 1] = {i % 2 + 1, x1, y1, x1 + u() * 9, y1 + u() * 8}
  end
  out[#out + 1] = {2, 3, 4, 3, 4}
  out[#out + 1] = {1, 5, 5, 4, 6}
  return torch.tensor(out, {dtype = dtype or f64})
end

-- gen_vision_ops.py's pyramid_boxes(n, seed): boxes of sizes 5..210
function G.pyramid_boxes(n, seed)
  local u, out = lcg(seed), {}
  for i = 1, n do
    local s = 8 + u() * 150
    local x1, y1 = u() * 100, u() * 90
    out[i] = {x1, y1, x1 + s * (0.6 + 0.8 * u()), y1 + s * (0.6 + 0.8 * u())}
  end
  return torch.tensor(out, {dtype = f64})
end

return G
