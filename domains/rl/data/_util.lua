-- torch.rl.data._util -- the small helpers the replay-buffer files share:
-- one class helper, option parsing, and rows/index conversions. No storage
-- or sampling logic here.
local torch = require "torch"
local TensorDict = require("torch.rl.tensordict").TensorDict

local M = {}

-- class(name[, parent]) -> a class table: Class(...) builds an object and
-- calls its __init(...); methods not found fall back to the parent.
function M.class(name, parent)
  local C = {__name = name}
  C.__index = C
  setmetatable(C, {__index = parent, __call = function(cls, ...)
    local o = setmetatable({}, cls)
    o:__init(...)
    return o
  end})
  C.__tostring = function(o) return o.__repr and o:__repr() or name .. "()" end
  if parent then C.__len = parent.__len end -- metamethods are not inherited through __index
  return C
end

-- opts(fname, o, names, defaults) -> a filled copy of the options table o
-- (unknown keys are errors naming fname and the closest valid name)
function M.opts(fname, o, names, defaults)
  o = o or {}
  if type(o) ~= "table" then error(("%s: expected an options table, got a %s"):format(fname, type(o)), 3) end
  torch._check_options(fname, o, names)
  local r = {}
  for k, v in pairs(defaults or {}) do r[k] = v end
  for k, v in pairs(o) do r[k] = v end
  return r
end

M.is_td = TensorDict.is_tensordict

-- The number of rows of a batch: tensor dim 1, TensorDict batch dim 1, or a list.
function M.rows(fname, data)
  if torch.is_tensor(data) then
    if data:dim() == 0 then error(fname .. ": a 0-dim tensor has no rows to extend with", 3) end
    return data:size(1)
  elseif M.is_td(data) then
    if #data.batch_size == 0 then error(fname .. ": a TensorDict with an empty batch size has no rows", 3) end
    return data.batch_size[1]
  elseif type(data) == "table" then
    return #data
  end
  error(("%s: expected a tensor, a TensorDict or a list, got a %s"):format(fname, type(data)), 3)
end

-- A 1-based index (number, table of numbers or integer tensor) -> int64 CPU tensor.
function M.index_tensor(fname, index)
  if math.type(index) == "integer" then return torch.tensor({index}) end
  if type(index) == "table" and not torch.is_tensor(index) then return torch.tensor(index, {dtype = torch.int64}) end
  if torch.is_tensor(index) then
    if index.dtype ~= torch.int64 then
      if index:is_floating_point() or index.dtype == torch.bool then
        error(("%s: index must hold integers, got a %s tensor"):format(fname, tostring(index.dtype)), 3)
      end
      index = index:long()
    end
    return index:cpu():contiguous():view(-1)
  end
  error(("%s: index must be an integer, a table of integers or an int64 tensor, got a %s"):format(fname, type(index)), 3)
end

return M
