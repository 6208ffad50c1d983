-- torch.vision.datasets: MNIST, FashionMNIST, KMNIST and EMNIST -- the idx
-- files of these datasets (plain or .gz) read by torch.vision.io.read_idx.
-- A sample is {image, target}: the image a float 1 x 28 x 28 tensor in
-- [0, 1] (what torchvision's ToTensor() makes of its PIL image), the target
-- a 1-based class index. Batches come out of DataLoader whole (get_batch,
-- and tensors() for background workers).
local torch = require "torch"
local V = require "torch.vision.datasets.vision"
local M = {}

-- Debian's dataset-fashion-mnist package puts the files here
M.FASHION_MNIST_DIR = "/usr/share/datasets/fashion-mnist"

local ARGS = "root train transform target_transform transforms download"

-- the methods every idx dataset shares
local idx = {}

-- reads the images/labels pair of file stem `split` (e.g. "train", "t10k")
local function load(self, fname, root, name, images, labels)
  local vio = torch.vision.io
  local x = vio.read_idx(V.find(fname, root, name, images, true))
  local y = vio.read_idx(V.find(fname, root, name, labels, true))
  if x.dtype ~= torch.uint8 or y.dtype ~= torch.uint8 or x:dim() ~= 3 or y:dim() ~= 1 or #x ~= #y then
    error(("%s: images of shape %s (%s) and labels of shape %s (%s) in %s do not match"):format(fname,
      table.concat(x.shape, "x"), tostring(x.dtype), table.concat(y.shape, "x"), tostring(y.dtype), root), 3)
  end
  self.data, self.targets = x, y:long() + 1
end

function idx:__len() return #self.targets end

-- {uint8 N x H x W images, 1-based targets} -> the batch of those samples
function idx:transform_batch(b)
  local x = b[1]:float():div_(255):unsqueeze(2)
  if not V.has_transforms(self) then return {x, b[2]} end
  local samples = {}
  for j = 1, #x do samples[j] = V.apply(self, x[j], b[2][j]:item()) end
  return require("torch.utils.data").default_collate(samples)
end

function idx:get_batch(ids)
  return self:transform_batch({self.data:index_select(1, ids), self.targets:index_select(1, ids)})
end

function idx:__getitem(i)
  i = V.index(self, i)
  local img = self.data[i]:float():div_(255):unsqueeze(1)
  return V.apply(self, img, self.targets[i]:item())
end

function idx:tensors() return {self.data, self.targets} end


-- A class of the MNIST family: name, its classes, and how its files are
-- found (files(self, o) -> images file, labels file).
local function family(name, classes, files, extra)
  local C = V.class(name)
  for k, f in pairs(idx) do C[k] = f end
  C.classes = classes
  function C:__init(...)
    local o = V.args(name, extra and ("root " .. extra .. " " .. ARGS:sub(6)) or ARGS, ...)
    if name == "FashionMNIST" and o.root == nil then o.root = M.FASHION_MNIST_DIR end
    local root = V.root(name, o.root)
    V.no_download(name, o, root .. "/" .. name .. "/raw or " .. root)
    if o.train ~= nil and type(o.train) ~= "boolean" then
      error(("%s: train must be true or false, got %s"):format(name, tostring(o.train)), 2)
    end
    V.set_transforms(self, name, o)
    self.root, self.train = root, o.train ~= false
    local images, labels = files(self, o)
    load(self, name, root, name, images, labels)
    if self._fix then self:_fix() end
    self.class_to_idx = V.class_to_idx(self.classes)
  end
  return C
end

local function mnist_files(self)
  local s = self.train and "train" or "t10k"
  return s .. "-images-idx3-ubyte", s .. "-labels-idx1-ubyte"
end

M.MNIST = family("MNIST", {"0 - zero", "1 - one", "2 - two", "3 - three", "4 - four", "5 - five", "6 - six",
  "7 - seven", "8 - eight", "9 - nine"}, mnist_files)
M.FashionMNIST = family("FashionMNIST", {"T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt",
  "Sneaker", "Bag", "Ankle boot"}, mnist_files)
M.FashionMNIST_classes = M.FashionMNIST.classes
M.KMNIST = family("KMNIST", {"o", "ki", "su", "tsu", "na", "ha", "ma", "ya", "re", "wo"}, mnist_files)

-- EMNIST's classes per split, as torchvision lists them
local digits, upper, lower = {}, {}, {}
for c = 0, 9 do digits[#digits + 1] = tostring(c) end
for c = ("A"):byte(), ("Z"):byte() do upper[#upper + 1] = string.char(c) end
for c = ("a"):byte(), ("z"):byte() do lower[#lower + 1] = string.char(c) end
local function concat(...)
  local out = {}
  for _, t in ipairs({...}) do for _, v in ipairs(t) do out[#out + 1] = v end end
  return out
end
local merged = {} -- lowercase letters EMNIST merges into their capitals
for c in ("cijklmopsuvwxyz"):gmatch(".") do merged[c] = true end
local unmerged = {}
for _, c in ipairs(lower) do if not merged[c] then unmerged[#unmerged + 1] = c end end
local EMNIST_CLASSES = {
  byclass = concat(digits, upper, lower),
  bymerge = concat(digits, upper, unmerged),
  balanced = concat(digits, upper, unmerged),
  letters = concat({"N/A"}, lower),
  digits = digits,
  mnist = digits,
}
local SPLITS = "byclass bymerge balanced letters digits mnist"

M.EMNIST = family("EMNIST", nil, function(self, o)
  if type(o.split) ~= "string" or not EMNIST_CLASSES[o.split] then
    error(("EMNIST: split must be one of %s, got %s"):format(SPLITS, tostring(o.split)), 4)
  end
  self.split = o.split
  self.classes = EMNIST_CLASSES[o.split]
  local p = ("emnist-%s-%s"):format(o.split, self.train and "train" or "test")
  return p .. "-images-idx3-ubyte", p .. "-labels-idx1-ubyte"
end, "split")
M.EMNIST.splits = {"byclass", "bymerge", "balanced", "letters", "digits", "mnist"}
-- The files store each image transposed (column-major); as torchvision,
-- the samples keep the files' orientation (x:transpose(-1, -2) turns one
-- upright).

return M
