-- torch.vision.transforms.v2.functional._dispatch -- the kernel registry of
-- the functional ops: each functional (F.resize, F.adjust_hue, ...) has a
-- kernel per kind of input (Image, Video, Mask, BoundingBoxes, KeyPoints;
-- a plain tensor is an Image). A call runs the kernel of its input's kind
-- and gives the result the input's kind back (a tv_tensor's metadata from
-- what the kernel returns); calling a functional on a kind it has no kernel
-- for is an error, except inside a transform, where such inputs pass
-- through unchanged (torchvision's rule).
local torch = require "torch"
local tv = require "torch.vision.tv_tensors"

local D = {}

local kernels = {} -- kernels[fname][kind] = fn

-- register(fname, kind, fn): fn(inpt, ...) is fname's kernel for kind. A
-- kernel of a tv_tensor kind receives the tv_tensor (metadata readable as
-- fields) and returns a plain tensor plus, for BoundingBoxes and KeyPoints,
-- the metadata of the result ({canvas_size=, format=}) when it changed.
-- kind "passthrough" after a kind name registers the identity.
function D.register(fname, kind, fn)
  if not tv._KINDS[kind] then
    error(("register_kernel: unknown kind '%s' (Image, Video, Mask, BoundingBoxes, KeyPoints)"):format(tostring(kind)), 2)
  end
  if type(fn) ~= "function" then error("register_kernel: the kernel must be a function", 2) end
  kernels[fname] = kernels[fname] or {}
  kernels[fname][kind] = fn
end

local function identity(x) return x end

-- passthrough(fname, kinds...): fname leaves inputs of these kinds unchanged
function D.passthrough(fname, ...)
  for _, kind in ipairs({...}) do D.register(fname, kind, identity) end
end

-- kernel(fname, inpt): the kernel for inpt's kind and the kind (a plain
-- tensor is an Image), or nil
function D.kernel(fname, inpt)
  local kind = tv.kind(inpt) or "Image"
  local k = kernels[fname]
  return k and k[kind], kind
end

-- rewrap(out, inpt, meta): out with inpt's kind and metadata, updated by
-- meta; plain when inpt is plain
local function rewrap(out, inpt, meta)
  if out == inpt or tv.kind(inpt) == nil or not torch.is_tensor(out) then return out end
  if meta then return tv.wrap(out, {like = inpt, canvas_size = meta.canvas_size, format = meta.format}) end
  return tv.wrap(out, {like = inpt})
end

-- call(fname, inpt, ...): runs fname's kernel for inpt (an error naming
-- fname and the kind when there is none)
function D.call(fname, inpt, ...)
  if not torch.is_tensor(inpt) then
    error(("F.%s: expected a tensor or a tv_tensor, got %s"):format(fname, type(inpt)), 3)
  end
  local k, kind = D.kernel(fname, inpt)
  if not k then
    error(("F.%s: not supported for %s inputs"):format(fname, kind), 3)
  end
  local out, meta = k(inpt, ...)
  return rewrap(out, inpt, meta)
end

-- call_or_pass(fname, inpt, ...): as call, but an input without a kernel
-- comes back unchanged (what transforms do)
function D.call_or_pass(fname, inpt, ...)
  local k = D.kernel(fname, inpt)
  if not k then return inpt end
  local out, meta = k(inpt, ...)
  return rewrap(out, inpt, meta)
end

-- define(F, fname, help): F[fname] as the dispatching functional
function D.define(F, fname)
  F[fname] = function(inpt, ...) return D.call(fname, inpt, ...) end
  return F[fname]
end

return D
