-- torch.vision.transforms.v2.functional._warp_geom -- the geometry behind
-- affine, rotate, perspective and elastic (functional/_warp.lua): the
-- affine matrices in torchvision's convention, the canvas of an expanding
-- rotation, perspective coefficients from four point pairs and sampling
-- grids (one per sample of a batch where parameters are tensors); the
-- sampling itself is _warp_sample.lua. Coordinates are pixels, 0-based and
-- continuous; angles are degrees. No dispatch and no kinds here.
local torch = require "torch"

local G = {}

-- f32(x): x rounded to the nearest float32 (torchvision computes some
-- geometry in float32; matching it keeps canvas sizes identical)
local function f32(x) return (string.unpack("f", string.pack("f", x))) end
G.f32 = f32

-- PIL's integer interpolation constants, as torchvision accepts them
local PIL_MODES = {[0] = "nearest", [1] = "lanczos", [2] = "bilinear", [3] = "bicubic", [4] = "box", [5] = "hamming"}

-- interpolation(fname, mode): "nearest" or "bilinear" (the modes the
-- tensor warps support); mode is a v2.InterpolationMode value (its
-- lowercase name) or a PIL integer constant
function G.interpolation(fname, mode)
  local m = mode
  if math.type(m) == "integer" then m = PIL_MODES[m] end
  if type(m) == "string" then m = m:lower() end
  if m == "nearest" or m == "bilinear" then return m end
  if type(m) == "string" then
    error(("%s: interpolation mode '%s' is not supported by warps of tensors (nearest, bilinear)"):format(fname, m), 0)
  end
  error(("%s: interpolation should be an InterpolationMode (\"nearest\", \"bilinear\") or a PIL integer, got %s")
    :format(fname, tostring(mode)), 0)
end

-- number_list(fname, what, v, n): v as a list of n numbers
local function number_list(fname, what, v, n)
  if type(v) ~= "table" or #v ~= n then
    error(("%s: %s should be a list of %d numbers, got %s"):format(fname, what, n, torch.pformat(v)), 0)
  end
  local out = {}
  for i = 1, n do
    if type(v[i]) ~= "number" then
      error(("%s: %s should be a list of %d numbers, got %s"):format(fname, what, n, torch.pformat(v)), 0)
    end
    out[i] = v[i] + 0.0
  end
  return out
end
G.number_list = number_list

-- affine_args(fname, angle, translate, scale, shear, center): the checked
-- arguments of affine as torchvision parses them (shear: a number s is
-- {s, 0}, a list of one {s, s}); center nil when absent
function G.affine_args(fname, angle, translate, scale, shear, center)
  if type(angle) ~= "number" then error(("%s: angle should be a number, got %s"):format(fname, type(angle)), 0) end
  translate = number_list(fname, "translate", translate, 2)
  if type(scale) ~= "number" or scale <= 0 then
    error(("%s: scale should be a positive number, got %s"):format(fname, tostring(scale)), 0)
  end
  if type(shear) == "number" then
    shear = {shear + 0.0, 0.0}
  elseif type(shear) == "table" and #shear == 1 then
    shear = {shear[1], shear[1]}
  end
  shear = number_list(fname, "shear", shear, 2)
  if center ~= nil and center ~= false then center = number_list(fname, "center", center, 2) else center = nil end
  return angle + 0.0, translate, scale + 0.0, shear, center
end

-- affine_matrix(center, angle, translate, scale, shear, inverted): the six
-- numbers {a, b, c, d, e, f} of the map (x, y) -> (a x + b y + c, d x + e y
-- + f) that rotates by angle (degrees, clockwise on screen), scales, shears
-- (degrees in x and y) about center and then translates; inverted (the
-- default) gives its inverse, which maps output pixels to input pixels
function G.affine_matrix(center, angle, translate, scale, shear, inverted)
  local rot, sx, sy = math.rad(angle), math.rad(shear[1]), math.rad(shear[2])
  local cx, cy = center[1], center[2]
  local tx, ty = translate[1], translate[2]
  local cos_sy, tan_sx = math.cos(sy), math.tan(sx)
  -- rotation and shear without the scale: [a b; c d], determinant 1
  local a = math.cos(rot - sy) / cos_sy
  local b = -(a * tan_sx + math.sin(rot))
  local c = math.sin(rot - sy) / cos_sy
  local d = math.cos(rot) - c * tan_sx
  local m
  if inverted ~= false then
    m = {d / scale, -b / scale, 0.0, -c / scale, a / scale, 0.0}
    m[3] = m[3] + cx - m[1] * (cx + tx) - m[2] * (cy + ty)
    m[6] = m[6] + cy - m[4] * (cx + tx) - m[5] * (cy + ty)
  else
    m = {a * scale, b * scale, 0.0, c * scale, d * scale, 0.0}
    m[3] = m[3] + (cx + tx) - m[1] * cx - m[2] * cy
    m[6] = m[6] + (cy + ty) - m[4] * cx - m[5] * cy
  end
  return m
end

-- affine_output_size(m, w, h): the {width, height} of the canvas that holds
-- the w x h image under the inverse matrix m (centered convention: (0, 0)
-- is the image center), computed in float32 as torchvision does, with its
-- 1e-4 truncation before rounding outwards
function G.affine_output_size(m, w, h)
  local hw, hh = f32(0.5 * w), f32(0.5 * h)
  local pts = {{-hw, -hh}, {-hw, hh}, {hw, hh}, {hw, -hh}}
  local a, b, c, d, e, f = f32(m[1]), f32(m[2]), f32(m[3]), f32(m[4]), f32(m[5]), f32(m[6])
  local lo, hi = {math.huge, math.huge}, {-math.huge, -math.huge}
  for _, p in ipairs(pts) do
    local nx = f32(f32(f32(p[1] * a) + f32(p[2] * b)) + c)
    local ny = f32(f32(f32(p[1] * d) + f32(p[2] * e)) + f)
    lo[1], hi[1] = math.min(lo[1], nx), math.max(hi[1], nx)
    lo[2], hi[2] = math.min(lo[2], ny), math.max(hi[2], ny)
  end
  -- trunc(v * 1e4) * 1e-4 in float32, then rounded outwards
  local function cut(v)
    local t = f32(v * f32(1e4))
    t = t >= 0 and math.floor(t) or math.ceil(t)
    return f32(t * f32(1e-4))
  end
  local size = {}
  for i, half in ipairs({hw, hh}) do
    local cmax = math.ceil(cut(f32(hi[i] + half)))
    local cmin = math.floor(cut(f32(lo[i] + half)))
    size[i] = math.tointeger(cmax - cmin)
  end
  return size[1], size[2]
end

-- affine_theta(angle, tx, ty, scale, shx, shy, cx, cy): the inverse
-- matrices [N, 2, 3] of N affine maps (parameters as tensors [N], float64;
-- the center cx, cy numbers in the centered convention), as affine_matrix
-- computes one: the per-sample form of the same formula
function G.affine_theta(angle, tx, ty, scale, shx, shy, cx, cy)
  local k = math.pi / 180
  local rot, sx, sy = angle * k, shx * k, shy * k
  local cos_sy, tan_sx = sy:cos(), sx:tan()
  local a = (rot - sy):cos() / cos_sy
  local b = -(a * tan_sx + rot:sin())
  local c = (rot - sy):sin() / cos_sy
  local d = rot:cos() - c * tan_sx
  local m1, m2, m4, m5 = d / scale, -b / scale, -c / scale, a / scale
  local px, py = tx + cx, ty + cy
  local m3 = -(m1 * px + m2 * py) + cx
  local m6 = -(m4 * px + m5 * py) + cy
  return torch.stack({torch.stack({m1, m2, m3}, 2), torch.stack({m4, m5, m6}, 2)}, 2)
end

-- solve(A, b): the solution of the n x n system A x = b (Gaussian
-- elimination with partial pivoting, in double precision); nil when singular
local function solve(A, b)
  local n = #b
  for col = 1, n do
    local piv = col
    for r = col + 1, n do
      if math.abs(A[r][col]) > math.abs(A[piv][col]) then piv = r end
    end
    if A[piv][col] == 0 then return nil end
    A[col], A[piv], b[col], b[piv] = A[piv], A[col], b[piv], b[col]
    for r = col + 1, n do
      local fct = A[r][col] / A[col][col]
      for k = col, n do A[r][k] = A[r][k] - fct * A[col][k] end
      b[r] = b[r] - fct * b[col]
    end
  end
  local x = {}
  for r = n, 1, -1 do
    local s = b[r]
    for k = r + 1, n do s = s - A[r][k] * x[k] end
    x[r] = s / A[r][r]
  end
  return x
end

-- perspective_coeffs(fname, startpoints, endpoints): the eight coefficients
-- {a, b, c, d, e, f, g, h} mapping an output pixel (x, y) (of endpoints'
-- frame) to the input ((a x + b y + c) / (g x + h y + 1), (d x + e y + f) /
-- (g x + h y + 1)); solved in double precision and rounded to float32, as
-- torchvision does
function G.perspective_coeffs(fname, startpoints, endpoints)
  local function points(what, p)
    if type(p) ~= "table" or #p ~= 4 then
      error(("%s: %s should be 4 points {{x, y}, ...}, got %s"):format(fname, what, torch.pformat(p)), 0)
    end
    local out = {}
    for i = 1, 4 do out[i] = number_list(fname, what .. "[" .. i .. "]", p[i], 2) end
    return out
  end
  local sp, ep = points("startpoints", startpoints), points("endpoints", endpoints)
  local A, b = {}, {}
  for i = 1, 4 do
    local e, s = ep[i], sp[i]
    A[2 * i - 1] = {e[1], e[2], 1, 0, 0, 0, -s[1] * e[1], -s[1] * e[2]}
    A[2 * i] = {0, 0, 0, e[1], e[2], 1, -s[2] * e[1], -s[2] * e[2]}
    b[2 * i - 1], b[2 * i] = s[1], s[2]
  end
  local x = solve(A, b)
  if not x then
    error(("%s: the points %s -> %s define no perspective transform (three of them are on a line)"):format(fname,
      torch.pformat(startpoints), torch.pformat(endpoints)), 0)
  end
  for i = 1, 8 do x[i] = f32(x[i]) end
  return x
end

-- coefficients(fname, startpoints, endpoints, coefficients): the eight
-- coefficients of perspective, given directly or as point pairs (not both)
function G.coefficients(fname, startpoints, endpoints, coefficients)
  if coefficients then
    if startpoints or endpoints then
      error(fname .. ": give either startpoints and endpoints or coefficients, not both", 0)
    end
    return number_list(fname, "coefficients", coefficients, 8)
  end
  if not (startpoints and endpoints) then
    error(fname .. ": give startpoints and endpoints, or coefficients", 0)
  end
  return G.perspective_coeffs(fname, startpoints, endpoints)
end

-- grid_dtype(img): the dtype grids and sampling use for img (its own for
-- float32/float64, float32 otherwise)
function G.grid_dtype(img)
  local dt = img.dtype
  if dt == torch.float32 or dt == torch.float64 then return dt end
  return torch.float32
end

-- centers(n, lo, dtype, device): the n pixel centers lo, lo + 1, ... as a
-- tensor (torchvision's base grids; arange, which torch.compile replays)
local function centers(n, lo, dtype, device)
  return torch.arange(n, {dtype = dtype, device = device}) + lo
end

-- pair(gx, gy): the grid [..., 2] of the coordinates gx, gy (by
-- broadcasting, not stack or cat, which torch.compile does not replay)
local function pair(gx, gy)
  local i = torch.arange(2, {dtype = gx.dtype, device = gx.device})
  return gx:unsqueeze(-1) * (1 - i) + gy:unsqueeze(-1) * i
end

-- rounder(dtype): f32 for float32 grids (torchvision rounds its matrix
-- entries to the grid's dtype), the identity otherwise
function G.rounder(dtype)
  if dtype == torch.float32 then return f32 end
  return function(x) return x end
end

-- affine_grid_m(m, w, h, ow, oh, dtype, device): the [1, oh, ow, 2]
-- sampling grid (normalized, align_corners=false) of the inverse matrix m
-- (six numbers, centered convention) for a w x h input and an ow x oh
-- output, computed as torchvision computes it
function G.affine_grid_m(m, w, h, ow, oh, dtype, device)
  local r = G.rounder(dtype)
  local hw, hh = r(0.5 * w), r(0.5 * h)
  local xs = centers(ow, (1.0 - ow) * 0.5, dtype, device):view(1, 1, ow)
  local ys = centers(oh, (1.0 - oh) * 0.5, dtype, device):view(1, oh, 1)
  local gx = xs * r(r(m[1]) / hw) + ys * r(r(m[2]) / hw) + r(r(m[3]) / hw)
  local gy = xs * r(r(m[4]) / hh) + ys * r(r(m[5]) / hh) + r(r(m[6]) / hh)
  return pair(gx, gy)
end

-- perspective_grid_c(c, ow, oh, dtype, device): the [1, oh, ow, 2] grid of
-- the eight perspective coefficients c (numbers)
function G.perspective_grid_c(c, ow, oh, dtype, device)
  local r = G.rounder(dtype)
  local hw, hh = r(0.5 * ow), r(0.5 * oh)
  local xs = centers(ow, 0.5, dtype, device):view(1, 1, ow)
  local ys = centers(oh, 0.5, dtype, device):view(1, oh, 1)
  local den = xs * r(c[7]) + ys * r(c[8]) + 1
  local gx = (xs * r(r(c[1]) / hw) + ys * r(r(c[2]) / hw) + r(r(c[3]) / hw)) / den - 1
  local gy = (xs * r(r(c[4]) / hh) + ys * r(r(c[5]) / hh) + r(r(c[6]) / hh)) / den - 1
  return pair(gx, gy)
end

-- affine_grid(theta, w, h, ow, oh): as affine_grid_m for N inverse
-- matrices theta [N, 2, 3] (a tensor of the grid's dtype): [N, oh, ow, 2]
function G.affine_grid(theta, w, h, ow, oh)
  local dt, dev = theta.dtype, theta.device
  local N = theta:size(1)
  local xs = centers(ow, (1.0 - ow) * 0.5, dt, dev):view(1, 1, ow)
  local ys = centers(oh, (1.0 - oh) * 0.5, dt, dev):view(1, oh, 1)
  local function k(row, col, half) return (theta:select(2, row):narrow(2, col, 1) / half):view(N, 1, 1) end
  local gx = xs * k(1, 1, 0.5 * w) + ys * k(1, 2, 0.5 * w) + k(1, 3, 0.5 * w)
  local gy = xs * k(2, 1, 0.5 * h) + ys * k(2, 2, 0.5 * h) + k(2, 3, 0.5 * h)
  return pair(gx, gy)
end

-- perspective_grid(coeffs, ow, oh): as perspective_grid_c for N sets of
-- coefficients coeffs [N, 8] (a tensor of the grid's dtype)
function G.perspective_grid(coeffs, ow, oh)
  local dt, dev = coeffs.dtype, coeffs.device
  local N = coeffs:size(1)
  local xs = centers(ow, 0.5, dt, dev):view(1, 1, ow)
  local ys = centers(oh, 0.5, dt, dev):view(1, oh, 1)
  local function k(i) return coeffs:narrow(2, i, 1):view(N, 1, 1) end
  local den = xs * k(7) + ys * k(8) + 1
  local gx = (xs * (k(1) / (0.5 * ow)) + ys * (k(2) / (0.5 * ow)) + k(3) / (0.5 * ow)) / den - 1
  local gy = (xs * (k(4) / (0.5 * oh)) + ys * (k(5) / (0.5 * oh)) + k(6) / (0.5 * oh)) / den - 1
  return pair(gx, gy)
end

-- identity_grid(h, w, dtype, device): the [1, h, w, 2] grid that samples
-- every pixel at its center: (2 i + 1 - n) / n along each axis
function G.identity_grid(h, w, dtype, device)
  local xs = (torch.arange(w, {dtype = dtype, device = device}) * 2 + (1 - w)) / w
  local ys = (torch.arange(h, {dtype = dtype, device = device}) * 2 + (1 - h)) / h
  return pair(xs:view(1, 1, w), ys:view(1, h, 1))
end

-- check_fill(fname, fill, channels): fill as nil (none), or a list of
-- numbers of length 1 or channels
function G.check_fill(fname, fill, channels)
  if fill == nil or fill == false then return nil end
  if type(fill) == "number" then return {fill + 0.0} end
  if torch.is_tensor(fill) then fill = fill:reshape(-1):totable() end
  if type(fill) ~= "table" or #fill == 0 then
    error(("%s: fill should be a number or a list of numbers, got %s"):format(fname, torch.pformat(fill)), 0)
  end
  local out = number_list(fname, "fill", fill, #fill)
  if #out > 1 and #out ~= channels then
    error(("%s: fill has %d values, which does not match the %d channels of the image"):format(fname, #out,
      channels), 0)
  end
  return out
end

-- check_image(fname, img): img must be a tensor [..., C, H, W] of a
-- numeric dtype; returns C, H, W
function G.check_image(fname, img)
  if img:dim() < 3 then
    error(("%s: expected an image [..., C, H, W], got shape %s"):format(fname, torch.pformat(img.shape)), 0)
  end
  if img.dtype == torch.bool then error(fname .. ": bool images are not supported (use uint8)", 0) end
  return img:size(-3), img:size(-2), img:size(-1)
end

return G
