-- torch.vision.transforms.v2.functional._warp_sample -- the sampling of
-- images under a warp with torchvision's fill rule: zeros outside, or the
-- fill painted through the sampled mask of ones. Two paths give the same
-- values: one C pass (domains/vision/warp.c) for CPU tensors outside
-- autograd and torch.compile, computing the positions from the matrix or
-- coefficients directly; otherwise a grid (_warp_geom.lua) and
-- nn.functional.grid_sample (engine ops: CUDA, autograd and the JIT see
-- them).
local torch = require "torch"
local nnF = require "torch.nn.functional"
local Wc = require "torch.vision._warp"
local G = require "torch.vision.transforms.v2.functional._warp_geom"

local S = {}

-- _use_c: take the C pass where it applies (the tests turn it off to
-- compare the two paths)
S._use_c = true
-- _c_ref: the C pass through its plain scalar reference loop (the tests
-- compare it with the fast one)
S._c_ref = false

-- fill_tensor(fill, dtype, device): the fill values as a [1, #fill, 1, 1]
-- tensor (made by full, arange and where, which torch.compile replays)
local function fill_tensor(fill, dtype, device)
  local f = torch.full({1, 1, 1, 1}, fill[1], {dtype = dtype, device = device})
  if #fill == 1 then return f end
  local ch = torch.arange(#fill, {dtype = dtype, device = device}):view(1, #fill, 1, 1)
  f = f:expand(1, #fill, 1, 1)
  for i = 2, #fill do f = torch.where(ch:eq(i - 1), fill[i], f) end
  return f
end

-- grid_of(spec, dtype, device): the sampling grid [G, oh, ow, 2] of a warp
-- spec (see S.warp)
local function grid_of(spec, dtype, device)
  if spec.grid then return spec.grid:to({dtype = dtype, device = device}) end
  if spec.m then return G.affine_grid_m(spec.m, spec.w, spec.h, spec.ow, spec.oh, dtype, device) end
  if spec.c then return G.perspective_grid_c(spec.c, spec.ow, spec.oh, dtype, device) end
  if spec.theta then
    return G.affine_grid(spec.theta:to({dtype = dtype, device = device}), spec.w, spec.h, spec.ow, spec.oh)
  end
  return G.perspective_grid(spec.coeffs:to({dtype = dtype, device = device}), spec.ow, spec.oh)
end

-- engine_sample(x, grid, mode, fill, C): x [B, C, H, W] sampled at grid
-- through nn.functional.grid_sample
local function engine_sample(x, grid, mode, fill, C)
  local B, H, W = x:size(1), x:size(3), x:size(4)
  local oh, ow = grid:size(2), grid:size(3)
  local dt = grid.dtype
  local fx = x.dtype == dt and x or x:to(dt)
  local G_ = grid:size(1)
  if G_ == 1 then
    grid = grid:expand(B, oh, ow, 2)
  elseif G_ ~= B then
    -- one grid per sample of the first dim: repeat it over the inner dims
    local inner = B // G_
    grid = grid:unsqueeze(2):expand(G_, inner, oh, ow, 2):reshape(B, oh, ow, 2)
  end
  local opts = {mode = mode, padding_mode = "zeros", align_corners = false}
  local out = nnF.grid_sample(fx, grid, opts)
  if fill then
    -- the sampled mask of ones: 1 inside, 0 outside, blended at the border
    local mask = nnF.grid_sample(torch.ones(B, 1, H, W, {dtype = dt, device = x.device}), grid, opts)
    local f = fill_tensor(fill, dt, x.device)
    if mode == "nearest" then
      out = torch.where(mask:lt(0.5), f:expand(B, C, oh, ow), out)
    else
      out = (out - f) * mask + f
    end
  end
  if out.dtype ~= x.dtype then
    if x:is_floating_point() then out = out:to(x.dtype) else out = out:round():to(x.dtype) end
  end
  return out
end

-- coef_rows(spec, dtype): the positions of spec for the C sampler: the kind
-- ("grid", "affine", "perspective") and a contiguous tensor of rows (warp.h)
local function coef_rows(spec, dtype)
  if spec.grid then return "grid", spec.grid:to(dtype):contiguous() end -- (CPU: fast_sample checked)
  local r = G.rounder(dtype)
  if spec.m then
    local m, hw, hh = spec.m, r(0.5 * spec.w), r(0.5 * spec.h)
    return "affine", torch.tensor({{r(r(m[1]) / hw), r(r(m[2]) / hw), r(r(m[3]) / hw), r(r(m[4]) / hh),
      r(r(m[5]) / hh), r(r(m[6]) / hh)}}, {dtype = dtype, device = "cpu"})
  end
  if spec.c then
    local c, hw, hh = spec.c, r(0.5 * spec.ow), r(0.5 * spec.oh)
    return "perspective", torch.tensor({{r(r(c[1]) / hw), r(r(c[2]) / hw), r(r(c[3]) / hw), r(r(c[4]) / hh),
      r(r(c[5]) / hh), r(r(c[6]) / hh), r(c[7]), r(c[8])}}, {dtype = dtype, device = "cpu"})
  end
  if spec.theta then
    local t = spec.theta:to(dtype):reshape(-1, 6)
    local half = torch.tensor({0.5 * spec.w, 0.5 * spec.w, 0.5 * spec.w, 0.5 * spec.h, 0.5 * spec.h, 0.5 * spec.h},
      {dtype = dtype, device = "cpu"})
    return "affine", (t / half):contiguous()
  end
  local c = spec.coeffs:to(dtype)
  local half = torch.tensor({0.5 * spec.ow, 0.5 * spec.ow, 0.5 * spec.ow, 0.5 * spec.oh, 0.5 * spec.oh, 0.5 * spec.oh,
    1, 1}, {dtype = dtype, device = "cpu"})
  return "perspective", (c / half):contiguous()
end

-- the dtypes the C sampler takes directly, and those it takes through float32
local FAST = {[torch.uint8] = true, [torch.float32] = true, [torch.float64] = true}
local VIA_F32 = {[torch.float16] = true, [torch.bfloat16] = true}

-- fast_sample(x, spec, mode, fill, C): the same values in one C pass for
-- CPU tensors outside autograd and torch.compile; nil when it does not apply
local function fast_sample(x, spec, mode, fill, C)
  local t = spec.grid or spec.theta or spec.coeffs
  if not S._use_c or x.is_cuda or (t and (t.is_cuda or t.requires_grad)) or x.requires_grad or torch.compiler.is_compiling() then
    return nil
  end
  local via = VIA_F32[x.dtype]
  if not (FAST[x.dtype] or via) then return nil end
  local fx = via and x:float() or x:contiguous()
  local kind, rows = coef_rows(spec, fx.dtype == torch.float64 and torch.float64 or torch.float32)
  local fl
  if fill then
    fl = {}
    for c = 1, C do fl[c] = fill[#fill == 1 and 1 or c] end
  end
  local out = (S._c_ref and Wc.sample_ref or Wc.sample)(fx, rows, mode == "bilinear", fl, kind, spec.oh, spec.ow)
  if via then out = out:to(x.dtype) end
  return out
end

-- warp(img, spec, mode, fill): img [..., C, H, W] sampled under the warp
-- spec -- {grid=[G, oh, ow, 2]}, {m=inverse matrix, w=, h=, ow=, oh=},
-- {c=perspective coefficients, ow=, oh=}, or per sample {theta=[G, 2, 3],
-- w=, h=, ow=, oh=} / {coeffs=[G, 8], ow=, oh=} -- where G = 1 serves
-- every image and G = the size of img's first dim gives one warp per
-- sample; mode "nearest" or "bilinear"; fill nil or a list of 1 or C
-- numbers (torchvision's rule). Integer images are sampled in float32 and
-- rounded back; the result has img's dtype and device.
function S.warp(img, spec, mode, fill)
  local shape = img.shape
  local nd = #shape
  local C, H, W = shape[nd - 2], shape[nd - 1], shape[nd]
  if spec.grid then spec.oh, spec.ow = spec.grid:size(2), spec.grid:size(3) end
  local out_shape = {table.unpack(shape, 1, nd - 2)}
  out_shape[nd - 1], out_shape[nd] = spec.oh, spec.ow
  if img:numel() == 0 then return torch.empty(out_shape, {dtype = img.dtype, device = img.device}) end
  local x = img:reshape(-1, C, H, W)
  local out = fast_sample(x, spec, mode, fill, C)
    or engine_sample(x, grid_of(spec, G.grid_dtype(x), x.device), mode, fill, C)
  return out:reshape(out_shape)
end

return S
