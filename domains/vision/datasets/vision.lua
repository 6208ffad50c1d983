-- torch.vision.datasets.vision -- what every dataset of torch.vision.datasets
-- shares, after torchvision's VisionDataset: reading the constructor's
-- arguments (positional in torchvision's order or by name in a trailing
-- table), the transform / target_transform / transforms options, and
-- finding files under root or root/<Name>/raw as torchvision lays them out.
local torch = require "torch"
local data = require "torch.utils.data"
local V = {}

-- a table given as options: not a tensor and not callable (a transform)
local function is_options(v)
  if type(v) ~= "table" or torch.is_tensor(v) then return false end
  local mt = getmetatable(v)
  return not (mt and mt.__call)
end

local function is_callable(v)
  if type(v) == "function" then return true end
  local mt = type(v) == "table" and getmetatable(v)
  return mt and mt.__call ~= nil or false
end

-- The arguments of Name(...) as one table: positionals (names in the order
-- of `order`, a space-separated list) and a trailing options table; unknown
-- option names are errors naming fname.
function V.args(fname, order, ...)
  local n, a = select("#", ...), {...}
  local o = {}
  if n > 0 and is_options(a[n]) then
    for k, v in pairs(a[n]) do o[k] = v end
    n = n - 1
  end
  local names = {}
  for w in order:gmatch("%S+") do names[#names + 1] = w end
  -- Name{root, ...}: positionals inside the table come first
  local pos = {}
  for i = 1, n do pos[#pos + 1] = a[i] end
  for i = 1, #o do pos[#pos + 1] = o[i]; o[i] = nil end
  if #pos > #names then
    error(("%s: too many arguments (%d; it takes %s)"):format(fname, #pos, order), 3)
  end
  for i, v in ipairs(pos) do
    if o[names[i]] ~= nil then error(("%s: %s given twice"):format(fname, names[i]), 3) end
    o[names[i]] = v
  end
  return torch._check_options(fname, o, order)
end

-- Sets self.transform, self.target_transform and self.transforms from o
-- (torchvision's rule: transforms, the joint one, or the other two).
function V.set_transforms(self, fname, o)
  for _, k in ipairs({"transform", "target_transform", "transforms"}) do
    local v = o[k]
    if v ~= nil and v ~= false and not is_callable(v) then
      error(("%s: %s must be a function or a callable object, got a %s"):format(fname, k, type(v)), 3)
    end
  end
  if o.transforms and (o.transform or o.target_transform) then
    error(fname .. ": give either transforms or transform/target_transform, not both", 3)
  end
  self.transform = o.transform or nil
  self.target_transform = o.target_transform or nil
  self.transforms = o.transforms or nil
end

-- the sample {img, target} after the dataset's transforms
function V.apply(self, img, target)
  if self.transforms then
    local a, b = self.transforms(img, target)
    if b == nil and is_options(a) and #a == 2 then a, b = a[1], a[2] end
    return {a, b}
  end
  if self.transform then img = self.transform(img) end
  if self.target_transform then target = self.target_transform(target) end
  return {img, target}
end

function V.has_transforms(self)
  return self.transform ~= nil or self.target_transform ~= nil or self.transforms ~= nil
end

-- root as a directory path (a string), else an error naming fname
function V.root(fname, root)
  if type(root) ~= "string" then
    error(("%s: root must be a directory path (a string), got %s"):format(fname, root == nil and "nothing" or type(root)), 3)
  end
  return (root:gsub("(.)/+$", "%1"))
end

function V.exists(path)
  local f = io.open(path, "rb")
  if f then f:close() end
  return f ~= nil
end

-- The first of root/<name>/raw/<file>, root/<file> (each also with .gz
-- when gz) that exists, or an error listing where it looked.
function V.find(fname, root, name, file, gz)
  local tried = {}
  for _, dir in ipairs({root .. "/" .. name .. "/raw", root}) do
    for _, f in ipairs(gz and {file, file .. ".gz"} or {file}) do
      local p = dir .. "/" .. f
      if V.exists(p) then return p end
      tried[#tried + 1] = p
    end
  end
  error(("%s: dataset file not found: looked for %s"):format(fname, table.concat(tried, ", ")), 4)
end

-- download=true cannot work here: say where the files go
function V.no_download(fname, o, where)
  if o.download then
    error(("%s: download is not supported; put the files in %s"):format(fname, where), 3)
  end
end

-- The 1-based sample index i checked against n.
function V.index(self, i)
  if math.type(i) ~= "integer" then
    if torch.is_tensor(i) and i:numel() == 1 then i = i:item() else
      error(("%s: index must be an integer, got %s"):format(self.__name, tostring(i)), 3)
    end
  end
  local n = self:__len()
  if i < 1 or i > n then error(("%s: index %d out of range (1..%d)"):format(self.__name, i, n), 3) end
  return i
end

-- {name = 1-based index} of a list of class names
function V.class_to_idx(classes)
  local m = {}
  for k, c in ipairs(classes) do m[c] = k end
  return m
end

-- A new dataset class under torch.utils.data.Dataset; its get(i) is a
-- public entry point (errors point at the caller's line), and ds[i] is
-- ds:get(i) for integers i, as Python's ds[i].
function V.class(name)
  local C = data.Dataset:extend(name)
  C.get = torch._public(function(self, i) return self:__getitem(i) end, name)
  C.__index = function(self, k)
    if math.type(k) == "integer" then return C.get(self, k) end
    return C[k]
  end
  return C
end

return V
