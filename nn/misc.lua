-- torch.nn.misc -- Embedding, Dropout (1d/2d/3d), Flatten and Unflatten.
local torch = require "torch"
local U = require "torch.nn.util"
local M = require "torch.nn.module"
local F = require("torch.nn.functional")._unguarded -- the module call is the entry point
local init = require "torch.nn.initializers"

local Module, Parameter = M.Module, M.Parameter
local X = {}

local Embedding = Module:extend("Embedding")
-- Embedding(num_embeddings, embedding_dim[, padding_idx, max_norm,
-- norm_type=2, scale_grad_by_freq, sparse, _weight]): inputs are 1-based
-- int64 indices; weights start N(0, 1) with the padding_idx row zeroed.
function Embedding:__init(num_embeddings, embedding_dim, ...)
  local o = U.args("nn.Embedding", {"padding_idx", "max_norm", "norm_type", "scale_grad_by_freq", "sparse",
                                    "_weight", "device", "dtype"}, {norm_type = 2.0}, ...)
  U.size("nn.Embedding", "num_embeddings", num_embeddings)
  U.size("nn.Embedding", "embedding_dim", embedding_dim)
  local pidx = o.padding_idx
  if pidx ~= nil then
    if pidx < 0 then pidx = num_embeddings + pidx + 1 end
    if pidx < 1 or pidx > num_embeddings then
      error(("nn.Embedding: padding_idx must be within 1..%d (or negative from the end)"):format(num_embeddings), 2)
    end
  end
  self.num_embeddings, self.embedding_dim, self.padding_idx = num_embeddings, embedding_dim, pidx
  self.max_norm, self.norm_type = o.max_norm, o.norm_type
  self.scale_grad_by_freq, self.sparse = o.scale_grad_by_freq or false, o.sparse or false
  if o._weight ~= nil then
    self.weight = Parameter(o._weight)
  else
    self.weight = Parameter(torch.empty(num_embeddings, embedding_dim, U.topts(o.dtype, o.device)))
    self:reset_parameters()
  end
end
function Embedding:reset_parameters()
  init.normal_(self.weight)
  if self.padding_idx ~= nil then torch.no_grad(function() self.weight[self.padding_idx]:zero_() end) end
end
function Embedding:forward(x)
  return F._embedding("nn.Embedding", x, self.weight, self.padding_idx, self.max_norm, self.norm_type)
end
function Embedding:extra_repr()
  local s = ("%d, %d"):format(self.num_embeddings, self.embedding_dim)
  if self.padding_idx ~= nil then s = s .. ", padding_idx=" .. self.padding_idx end
  if self.max_norm ~= nil then s = s .. ", max_norm=" .. U.repr(self.max_norm) end
  if self.norm_type ~= 2 then s = s .. ", norm_type=" .. U.repr(self.norm_type) end
  return s
end
-- Embedding.from_pretrained(embeddings[, freeze=true, padding_idx, max_norm, norm_type])
function Embedding.from_pretrained(embeddings, ...)
  local o = U.args("nn.Embedding.from_pretrained", {"freeze", "padding_idx", "max_norm", "norm_type"},
                   {freeze = true, norm_type = 2.0}, ...)
  if embeddings:dim() ~= 2 then error("nn.Embedding.from_pretrained: embeddings must be 2-D", 2) end
  local e = Embedding(embeddings:size(1), embeddings:size(2), {_weight = embeddings, padding_idx = o.padding_idx,
                      max_norm = o.max_norm, norm_type = o.norm_type})
  e.weight:requires_grad_(not o.freeze)
  return e
end

local DROP = {Dropout = F.dropout, Dropout1d = F.dropout1d, Dropout2d = F.dropout2d, Dropout3d = F.dropout3d}
for name, fn in pairs(DROP) do
  local cls = Module:extend(name)
  -- DropoutX([p=0.5, inplace=false]): identity in eval mode.
  function cls:__init(...)
    local o = U.args("nn." .. name, {"p", "inplace"}, {p = 0.5, inplace = false}, ...)
    if type(o.p) ~= "number" or o.p < 0 or o.p > 1 then
      error(("nn.%s: dropout probability has to be between 0 and 1, got %s"):format(name, tostring(o.p)), 2)
    end
    self.p, self.inplace = o.p, o.inplace
  end
  function cls:forward(x) return fn(x, self.p, rawget(self, "training"), self.inplace) end
  function cls:extra_repr() return ("p=%s, inplace=%s"):format(U.repr(self.p + 0.0), tostring(self.inplace)) end
  X[name] = cls
end

local Flatten = Module:extend("Flatten")
-- Flatten([start_dim=2, end_dim=-1]): dims are 1-based, so the default keeps the batch dim.
function Flatten:__init(...)
  local o = U.args("nn.Flatten", {"start_dim", "end_dim"}, {start_dim = 2, end_dim = -1}, ...)
  self.start_dim, self.end_dim = o.start_dim, o.end_dim
end
function Flatten:forward(x) return x:flatten(self.start_dim, self.end_dim) end
function Flatten:extra_repr() return ("start_dim=%d, end_dim=%d"):format(self.start_dim, self.end_dim) end

local Unflatten = Module:extend("Unflatten")
-- Unflatten(dim, unflattened_size)
function Unflatten:__init(dim, unflattened_size)
  self.dim, self.unflattened_size = dim, unflattened_size
end
function Unflatten:forward(x)
  local s = x:size()
  local d = U.dim(self.dim, #s, "Unflatten")
  local shape = {}
  for i = 1, d - 1 do shape[#shape + 1] = s[i] end
  for _, n in ipairs(self.unflattened_size) do shape[#shape + 1] = n end
  for i = d + 1, #s do shape[#shape + 1] = s[i] end
  return x:reshape(shape)
end
function Unflatten:extra_repr() return ("dim=%d, unflattened_size=%s"):format(self.dim, U.repr(self.unflattened_size)) end

X.Embedding, X.Flatten, X.Unflatten = Embedding, Flatten, Unflatten
return X
