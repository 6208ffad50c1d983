-- torch.nn.functional.vision -- pad, interpolate, grid_sample, affine_grid,
-- unfold/fold (im2col/col2im) and pixel_shuffle. Only recorded engine ops
-- touch tensor data (copies into views, index_select, gather, index_add,
-- matmul), so all of them are differentiable; Lua loops only build small
-- index or weight tables (cached), never visit tensor elements.
local torch = require "torch"
local U = require "torch.nn.util"

local F = {}
local floor, min, max = math.floor, math.min, math.max

local function long(list) return torch.tensor(list, {dtype = torch.int64}) end

-- Source positions (0-based) for one padded dim of size n by mode.
local function pad_index(mode, n, l, r)
  local idx = {}
  for j = -l, n - 1 + r do
    local p = j
    if mode == "reflect" then
      while p < 0 or p >= n do
        if p < 0 then p = -p end
        if p >= n then p = 2 * (n - 1) - p end
      end
    elseif mode == "replicate" then
      p = min(max(p, 0), n - 1)
    else -- circular
      p = p % n
    end
    idx[#idx + 1] = p + 1
  end
  return long(idx)
end

-- pad(input, pad[, mode='constant', value=0]): pad = {left, right, top,
-- bottom, ...} from the last dim backwards; negative amounts crop (constant
-- mode). Modes: 'constant', 'reflect', 'replicate', 'circular'.
function F.pad(x, pad, ...)
  local o = U.args("F.pad", {"mode", "value"}, {mode = "constant", value = 0}, ...)
  if type(pad) ~= "table" or #pad % 2 ~= 0 then error("F.pad: pad must be a list of even length", 2) end
  local nd = x:dim()
  if #pad // 2 > nd then
    error(("F.pad: pad of length %d is too long for a %d-dimensional input"):format(#pad, nd), 2)
  end
  local mode = o.mode
  if mode == "constant" then
    local shape = x:size()
    for i = 1, #pad // 2 do
      local d = nd - i + 1
      shape[d] = shape[d] + pad[2 * i - 1] + pad[2 * i]
      if shape[d] < 0 then
        error(("F.pad: padding %s of input shape %s gives a negative size"):format(U.repr(pad), U.shape_str(x)), 2)
      end
    end
    local out = torch.full(shape, o.value, {dtype = x.dtype, device = x.device})
    local src, dst = x, out
    for i = 1, #pad // 2 do
      local d, l, r = nd - i + 1, pad[2 * i - 1], pad[2 * i]
      local n = x:size(d)
      local len = n - max(-l, 0) - max(-r, 0)
      if len <= 0 then return out end
      src = src:narrow(d, 1 + max(-l, 0), len)
      dst = dst:narrow(d, 1 + max(l, 0), len)
    end
    dst:copy_(src)
    return out
  end
  if mode ~= "reflect" and mode ~= "replicate" and mode ~= "circular" then
    U.choice("F.pad", "mode", mode, "constant reflect replicate circular")
  end
  local y = x
  for i = 1, #pad // 2 do
    local d, l, r = nd - i + 1, pad[2 * i - 1], pad[2 * i]
    local n = x:size(d)
    if l < 0 or r < 0 then error("F.pad: negative padding is only supported in constant mode", 2) end
    if mode == "reflect" and (l >= n or r >= n) then
      error(("F.pad: reflect padding (%d, %d) must be less than the size %d of dim %d"):format(l, r, n, d), 2)
    end
    if mode == "circular" and (l > n or r > n) then
      error(("F.pad: circular padding (%d, %d) must be at most the size %d of dim %d"):format(l, r, n, d), 2)
    end
    if l > 0 or r > 0 then y = y:index_select(d, pad_index(mode, n, l, r):to(x.device)) end
  end
  return y
end

-- ---- interpolate ----

local function cubic1(x, A) return ((A + 2) * x - (A + 3)) * x * x + 1 end
local function cubic2(x, A) return ((A * x - 5 * A) * x + 8 * A) * x - 4 * A end

local function aa_linear(x) x = math.abs(x); return x < 1 and 1 - x or 0 end
local function aa_cubic(x)
  local a = -0.5
  x = math.abs(x)
  if x < 1 then return ((a + 2) * x - (a + 3)) * x * x + 1 end
  if x < 2 then return (((x - 5) * x + 8) * x - 4) * a end
  return 0
end

-- The scale PyTorch's kernels use between an input and an output dim.
local function coord_scale(n_in, n_out, align_corners, sf)
  if align_corners then return n_out > 1 and (n_in - 1) / (n_out - 1) or 0 end
  if sf and sf > 0 then return 1 / sf end
  return n_in / n_out
end

local function src_index(scale, dst, align_corners, cubic)
  if align_corners then return scale * dst end
  local s = scale * (dst + 0.5) - 0.5
  if not cubic and s < 0 then return 0 end
  return s
end

local MAT_CACHE, MAT_COUNT = {}, 0

-- The (n_out x n_in) interpolation matrix of one dim (cached).
local function interp_matrix(mode, n_in, n_out, align_corners, sf, antialias, dtype)
  local key = table.concat({mode, n_in, n_out, tostring(align_corners), tostring(sf), tostring(antialias),
                            tostring(dtype)}, ":")
  local m = MAT_CACHE[key]
  if m then return m end
  local W = {}
  for o = 1, n_out do
    local row = {}
    for i = 1, n_in do row[i] = 0 end
    W[o] = row
  end
  local scale = coord_scale(n_in, n_out, align_corners, sf)
  if antialias then
    local interp = mode == "bicubic" and 4 or 2
    local filter = mode == "bicubic" and aa_cubic or aa_linear
    local support = scale >= 1 and interp * 0.5 * scale or interp * 0.5
    local invscale = scale >= 1 and 1 / scale or 1
    for o = 0, n_out - 1 do
      local center = scale * (o + 0.5)
      local xmin = max(math.tointeger(floor(center - support + 0.5)) or 0, 0)
      local xmax = min(math.tointeger(floor(center + support + 0.5)) or 0, n_in)
      local total = 0
      for j = xmin, xmax - 1 do
        local w = filter((j - center + 0.5) * invscale)
        W[o + 1][j + 1] = w
        total = total + w
      end
      if total ~= 0 then
        for j = xmin, xmax - 1 do W[o + 1][j + 1] = W[o + 1][j + 1] / total end
      end
    end
  elseif mode == "bicubic" then
    local A = -0.75
    for o = 0, n_out - 1 do
      local real = src_index(scale, o, align_corners, true)
      local i0 = floor(real)
      local t = real - i0
      local c = {cubic2(t + 1, A), cubic1(t, A), cubic1(1 - t, A), cubic2(2 - t, A)}
      for k = 0, 3 do
        local j = min(max(i0 - 1 + k, 0), n_in - 1)
        W[o + 1][j + 1] = W[o + 1][j + 1] + c[k + 1]
      end
    end
  else -- linear
    for o = 0, n_out - 1 do
      local real = src_index(scale, o, align_corners, false)
      local i0 = floor(real)
      local l1 = min(max(real - i0, 0), 1)
      local i1 = i0 + ((i0 < n_in - 1) and 1 or 0)
      W[o + 1][i0 + 1] = W[o + 1][i0 + 1] + (1 - l1)
      W[o + 1][i1 + 1] = W[o + 1][i1 + 1] + l1
    end
  end
  m = torch.tensor(W, {dtype = dtype}):t():contiguous()
  if MAT_COUNT > 256 then MAT_CACHE, MAT_COUNT = {}, 0 end
  MAT_CACHE[key], MAT_COUNT = m, MAT_COUNT + 1
  return m
end

local function nearest_index(n_in, n_out, sf, exact)
  local scale = (sf and sf > 0) and 1 / sf or n_in / n_out
  local idx = {}
  for o = 0, n_out - 1 do
    local s
    if exact then s = floor((o + 0.5) * scale) else s = floor(o * scale) end
    if n_out == n_in then s = o end
    idx[o + 1] = min(s, n_in - 1) + 1
  end
  return long(idx)
end

local MODES = {nearest = true, ["nearest-exact"] = true, linear = true, bilinear = true, trilinear = true,
               bicubic = true, area = true}

-- interpolate(input, size, scale_factor[, mode='nearest', align_corners,
-- recompute_scale_factor, antialias=false]): resizes the spatial dims (3..)
-- of input; modes 'nearest', 'nearest-exact', 'linear'/'bilinear'/'trilinear',
-- 'bicubic', 'area'. antialias applies to (bi)linear and bicubic.
function F.interpolate(x, ...)
  local o = U.args("F.interpolate", {"size", "scale_factor", "mode", "align_corners", "recompute_scale_factor",
                                     "antialias"}, {mode = "nearest", antialias = false}, ...)
  local mode = o.mode
  if not MODES[mode] then
    U.choice("F.interpolate", "mode", mode, "nearest nearest-exact linear bilinear bicubic trilinear area")
  end
  local nd = x:dim()
  local nsp = nd - 2
  if nsp < 1 then error("F.interpolate: expected an input with batch and channel dims (N, C, ...), got shape "
                        .. U.shape_str(x), 2) end
  if (mode == "nearest" or mode == "nearest-exact" or mode == "area") and o.align_corners ~= nil then
    error("F.interpolate: align_corners can only be set with the linear, bilinear, bicubic or trilinear modes", 2)
  end
  local align = o.align_corners == true
  local sizes, sfs = {}, {}
  if o.size ~= nil and o.scale_factor ~= nil then error("F.interpolate: give only one of size or scale_factor", 2) end
  if o.size ~= nil then
    sizes = U.ntuple(o.size, nsp, "size")
  elseif o.scale_factor ~= nil then
    local sf = U.ntuple(o.scale_factor, nsp, "scale_factor")
    for i = 1, nsp do
      sizes[i] = floor(x:size(i + 2) * sf[i])
      if not o.recompute_scale_factor then sfs[i] = sf[i] end
    end
  else
    error("F.interpolate: either size or scale_factor must be given", 2)
  end
  for i = 1, nsp do
    if type(sizes[i]) ~= "number" or sizes[i] < 1 then
      local shape = x:size()
      error(("F.interpolate: input and output sizes should be greater than 0, got input %s and output %s"):format(
            table.concat(shape, "x", 3), table.concat(sizes, "x")), 2)
    end
  end
  if mode == "area" then
    local fn = ({torch.adaptive_avg_pool1d, torch.adaptive_avg_pool2d, torch.adaptive_avg_pool3d})[nsp]
    return fn(x, nsp == 1 and sizes[1] or sizes)
  end
  local y = x
  for i = nsp, 1, -1 do
    local d = i + 2
    local n_in, n_out = x:size(d), sizes[i]
    if mode == "nearest" or mode == "nearest-exact" then
      if n_in ~= n_out then y = y:index_select(d, nearest_index(n_in, n_out, sfs[i], mode == "nearest-exact")) end
    else
      local m = interp_matrix(mode == "bicubic" and "bicubic" or "linear", n_in, n_out, align, sfs[i],
                              o.antialias, x.dtype)
      if d == nd then y = y:matmul(m)
      else y = y:transpose(d, nd):matmul(m):transpose(d, nd) end
    end
  end
  return y:contiguous()
end

-- upsample(...) = interpolate(...); upsample_nearest / upsample_bilinear as in PyTorch.
F.upsample = F.interpolate

-- ---- grid_sample / affine_grid ----

local function reflect_coords(c, twice_low, twice_high)
  if twice_low == twice_high then return c * 0 end
  local mn, span = twice_low / 2, (twice_high - twice_low) / 2
  local a = (c - mn):abs()
  local extra = a:fmod(span)
  local flips = (a / span):floor()
  local even = flips:remainder(2):eq(0)
  return torch.where(even, extra + mn, (extra * -1) + span + mn)
end

local function source_coords(g, size, padding_mode, align)
  local c
  if align then c = (g + 1) / 2 * (size - 1) else c = ((g + 1) * size - 1) / 2 end
  if padding_mode == "border" then
    c = c:clamp(0, size - 1)
  elseif padding_mode == "reflection" then
    if align then c = reflect_coords(c, 0, 2 * (size - 1)) else c = reflect_coords(c, -1, 2 * size - 1) end
    c = c:clamp(0, size - 1)
  end
  return c
end

-- grid_sample(input, grid[, mode='bilinear', padding_mode='zeros',
-- align_corners=false]): samples a 4-D input (N, C, H, W) at grid (N, Ho,
-- Wo, 2) of (x, y) in [-1, 1]; modes 'bilinear', 'nearest'; padding modes
-- 'zeros', 'border', 'reflection'.
function F.grid_sample(input, grid, ...)
  local o = U.args("F.grid_sample", {"mode", "padding_mode", "align_corners"},
                   {mode = "bilinear", padding_mode = "zeros", align_corners = false}, ...)
  if input:dim() ~= 4 then error("F.grid_sample: only 4-D inputs (N, C, H, W) are supported, got shape "
                                 .. U.shape_str(input), 2) end
  if grid:dim() ~= 4 or grid:size(4) ~= 2 or grid:size(1) ~= input:size(1) then
    error(("F.grid_sample: grid must have shape (N, H_out, W_out, 2) with N = %d, got %s"):format(input:size(1),
          U.shape_str(grid)), 2)
  end
  if o.mode ~= "bilinear" and o.mode ~= "nearest" then
    error("F.grid_sample: mode must be 'bilinear' or 'nearest', got '" .. tostring(o.mode) .. "'", 2)
  end
  local N, C, H, W = input:size(1), input:size(2), input:size(3), input:size(4)
  local Ho, Wo = grid:size(2), grid:size(3)
  local L = Ho * Wo
  local ix = source_coords(grid:select(4, 1), W, o.padding_mode, o.align_corners):reshape(N, 1, L)
  local iy = source_coords(grid:select(4, 2), H, o.padding_mode, o.align_corners):reshape(N, 1, L)
  local flat = input:reshape(N, C, H * W)
  local function tap(xc, yc, w)
    local valid = xc:ge(0):logical_and(xc:le(W - 1)):logical_and(yc:ge(0)):logical_and(yc:le(H - 1))
    local idx = (yc:clamp(0, H - 1) * W + xc:clamp(0, W - 1)):long() + 1
    local v = flat:gather(3, idx:expand(N, C, L))
    return v * (w * valid:to(w.dtype))
  end
  local out
  if o.mode == "nearest" then
    local xn, yn = ix:detach():round(), iy:detach():round()
    out = tap(xn, yn, torch.ones_like(ix))
  else
    local x0, y0 = ix:detach():floor(), iy:detach():floor()
    local x1, y1 = x0 + 1, y0 + 1
    local wx1, wy1 = ix - x0, iy - y0
    local wx0, wy0 = x1 - ix, y1 - iy
    out = tap(x0, y0, wx0 * wy0) + tap(x1, y0, wx1 * wy0) + tap(x0, y1, wx0 * wy1) + tap(x1, y1, wx1 * wy1)
  end
  return out:view(N, C, Ho, Wo)
end

local function base_coords(n, align, dtype)
  if n <= 1 then return torch.zeros(1, {dtype = dtype}) end
  local r = torch.linspace(-1, 1, n, {dtype = dtype})
  if not align then r = r * ((n - 1) / n) end
  return r
end

-- affine_grid(theta, size[, align_corners=false]): the (N, H, W, 2) sampling
-- grid of the affine maps theta (N, 2, 3) for an output of size {N, C, H, W}.
function F.affine_grid(theta, size, align_corners)
  if U.opts("F.affine_grid", align_corners, "align_corners") then align_corners = align_corners.align_corners end
  align_corners = align_corners == true
  if #size ~= 4 then error("F.affine_grid: only 4-D sizes {N, C, H, W} are supported", 2) end
  local N, H, W = size[1], size[3], size[4]
  if theta:dim() ~= 3 or theta:size(1) ~= N or theta:size(2) ~= 2 or theta:size(3) ~= 3 then
    error(("F.affine_grid: expected theta of shape %dx2x3 for size %s, got %s"):format(N, U.repr(size),
          U.shape_str(theta)), 2)
  end
  local dt = theta.dtype
  local xs = base_coords(W, align_corners, dt):view(1, W, 1):expand(H, W, 1)
  local ys = base_coords(H, align_corners, dt):view(H, 1, 1):expand(H, W, 1)
  local base = torch.cat({xs, ys, torch.ones(H, W, 1, {dtype = dt})}, 3):view(1, H * W, 3)
  return base:matmul(theta:transpose(2, 3)):view(N, H, W, 2)
end

-- ---- unfold / fold ----

local function conv_params(fname, kernel_size, dilation, padding, stride)
  return U.ntuple(kernel_size, 2, fname .. ": kernel_size"), U.ntuple(dilation, 2, fname .. ": dilation"),
         U.ntuple(padding, 2, fname .. ": padding"), U.ntuple(stride, 2, fname .. ": stride")
end

-- unfold(input, kernel_size[, dilation=1, padding=0, stride=1]): im2col,
-- (N, C, H, W) -> (N, C*kh*kw, L) with L sliding-block positions.
function F.unfold(x, kernel_size, ...)
  local o = U.args("F.unfold", {"dilation", "padding", "stride"}, {dilation = 1, padding = 0, stride = 1}, ...)
  local k, d, p, s = conv_params("F.unfold", kernel_size, o.dilation, o.padding, o.stride)
  local batched = x:dim() == 4
  if not batched then
    if x:dim() ~= 3 then error("F.unfold: expected a 3-D or 4-D input, got shape " .. U.shape_str(x), 2) end
    x = x:unsqueeze(1)
  end
  local N, C = x:size(1), x:size(2)
  if p[1] > 0 or p[2] > 0 then x = F.pad(x, {p[2], p[2], p[1], p[1]}) end
  local sh, sw = (k[1] - 1) * d[1] + 1, (k[2] - 1) * d[2] + 1
  if x:size(3) < sh or x:size(4) < sw then
    error(("F.unfold: kernel of size %dx%d (with dilation) is larger than the padded input %dx%d"):format(sh, sw,
          x:size(3), x:size(4)), 2)
  end
  local u = x:unfold(3, sh, s[1]) -- N, C, oh, Wp, sh
  if d[1] > 1 then u = u[{{}, {}, {}, {}, {1, sh, d[1]}}] end
  u = u:unfold(4, sw, s[2]) -- N, C, oh, ow, kh, sw
  if d[2] > 1 then u = u[{{}, {}, {}, {}, {}, {1, sw, d[2]}}] end
  local oh, ow = u:size(3), u:size(4)
  local y = u:permute(1, 2, 5, 6, 3, 4):reshape(N, C * k[1] * k[2], oh * ow)
  if not batched then y = y:squeeze(1) end
  return y
end

-- fold(input, output_size, kernel_size[, dilation=1, padding=0, stride=1]):
-- col2im, the adjoint of unfold: sums overlapping blocks into (N, C, H, W).
function F.fold(x, output_size, kernel_size, ...)
  local o = U.args("F.fold", {"dilation", "padding", "stride"}, {dilation = 1, padding = 0, stride = 1}, ...)
  local k, d, p, s = conv_params("F.fold", kernel_size, o.dilation, o.padding, o.stride)
  local os = U.ntuple(output_size, 2, "F.fold: output_size")
  local batched = x:dim() == 3
  if not batched then x = x:unsqueeze(1) end
  local N, CK, L = x:size(1), x:size(2), x:size(3)
  local kk = k[1] * k[2]
  if CK % kk ~= 0 then
    error(("F.fold: expected size of input's dim 2 to be divisible by the kernel size %d, got %d"):format(kk, CK), 2)
  end
  local C = CK // kk
  local Hp, Wp = os[1] + 2 * p[1], os[2] + 2 * p[2]
  local oh = (Hp - (d[1] * (k[1] - 1) + 1)) // s[1] + 1
  local ow = (Wp - (d[2] * (k[2] - 1) + 1)) // s[2] + 1
  if oh * ow ~= L then
    error(("F.fold: expected %d blocks (%dx%d) for output_size %s, got %d"):format(oh * ow, oh, ow, U.repr(os), L), 2)
  end
  local ki = torch.arange(0, k[1], {dtype = torch.int64}):view(k[1], 1, 1, 1) * d[1]
  local kj = torch.arange(0, k[2], {dtype = torch.int64}):view(1, k[2], 1, 1) * d[2]
  local yi = torch.arange(0, oh, {dtype = torch.int64}):view(1, 1, oh, 1) * s[1]
  local xj = torch.arange(0, ow, {dtype = torch.int64}):view(1, 1, 1, ow) * s[2]
  local idx = ((ki + yi) * Wp + kj + xj + 1):reshape(-1)
  local out = torch.zeros(N, C, Hp * Wp, {dtype = x.dtype})
  out = out:index_add(3, idx, x:reshape(N, C, kk * L))
  local y = out:view(N, C, Hp, Wp)
  if p[1] > 0 then y = y:narrow(3, p[1] + 1, os[1]) end
  if p[2] > 0 then y = y:narrow(4, p[2] + 1, os[2]) end
  if not batched then y = y:squeeze(1) end
  return y
end

-- pixel_shuffle(input, r): (*, C r^2, H, W) -> (*, C, H r, W r).
function F.pixel_shuffle(x, r)
  local s = x:size()
  local nd = #s
  if nd < 3 then error("F.pixel_shuffle: expected an input of at least 3 dimensions, got " .. U.shape_str(x), 2) end
  local C, H, W = s[nd - 2], s[nd - 1], s[nd]
  if C % (r * r) ~= 0 then
    error(("F.pixel_shuffle: channels %d are not divisible by upscale_factor^2 = %d"):format(C, r * r), 2)
  end
  local lead = {table.unpack(s, 1, nd - 3)}
  local nl = #lead
  local v = {table.unpack(lead)}
  for _, n in ipairs{C // (r * r), r, r, H, W} do v[#v + 1] = n end
  local perm = {}
  for i = 1, nl do perm[i] = i end
  for _, i in ipairs{1, 4, 2, 5, 3} do perm[#perm + 1] = nl + i end
  local out = {table.unpack(lead)}
  for _, n in ipairs{C // (r * r), H * r, W * r} do out[#out + 1] = n end
  return x:reshape(v):permute(perm):reshape(out)
end

-- pixel_unshuffle(input, r): (*, C, H r, W r) -> (*, C r^2, H, W).
function F.pixel_unshuffle(x, r)
  local s = x:size()
  local nd = #s
  local C, H, W = s[nd - 2], s[nd - 1], s[nd]
  if H % r ~= 0 or W % r ~= 0 then
    error(("F.pixel_unshuffle: spatial size %dx%d is not divisible by downscale_factor %d"):format(H, W, r), 2)
  end
  local lead = {table.unpack(s, 1, nd - 3)}
  local nl = #lead
  local v = {table.unpack(lead)}
  for _, n in ipairs{C, H // r, r, W // r, r} do v[#v + 1] = n end
  local perm = {}
  for i = 1, nl do perm[i] = i end
  for _, i in ipairs{1, 3, 5, 2, 4} do perm[#perm + 1] = nl + i end
  local out = {table.unpack(lead)}
  for _, n in ipairs{C * r * r, H // r, W // r} do out[#out + 1] = n end
  return x:reshape(v):permute(perm):reshape(out)
end

return F
