-- torch.vision.datasets -- MNIST and Fashion-MNIST from their idx files
-- (gzip or plain), as read by torch.vision.io.read_idx. Samples are
-- {image, label}: the image a float tensor 1x28x28 scaled to [0, 1], the
-- label a 1-based class index (int64), following the project's rule that
-- index values are 1-based. Batches come out of DataLoader whole (the
-- dataset supports get_batch and background workers).
local torch = require "torch"
local data = require "torch.utils.data"
local datasets = {}

-- Debian's dataset-fashion-mnist package puts the files here
datasets.FASHION_MNIST_DIR = "/usr/share/datasets/fashion-mnist"

local function find(root, stem)
  for _, name in ipairs({stem .. ".gz", stem}) do
    local path = root .. "/" .. name
    local f = io.open(path, "rb")
    if f then
      f:close()
      return path
    end
  end
  error(("MNIST: no %s(.gz) in %s"):format(stem, root), 4)
end

local IdxImages = data.Dataset:extend("MNIST")

-- MNIST{root=, train=true}: root holds train-images-idx3-ubyte(.gz),
-- train-labels-idx1-ubyte(.gz), t10k-images-idx3-ubyte(.gz) and
-- t10k-labels-idx1-ubyte(.gz).
function IdxImages:__init(opts)
  if type(opts) == "string" then opts = {root = opts} end -- MNIST(root), as PyTorch
  opts = torch._check_options("MNIST", opts or {}, "root train")
  local root = opts.root or opts[1] or datasets.FASHION_MNIST_DIR
  local split = opts.train == false and "t10k" or "train"
  self.root, self.train = root, split == "train"
  self.images = torch.vision.io.read_idx(find(root, split .. "-images-idx3-ubyte"))
  self.labels = torch.vision.io.read_idx(find(root, split .. "-labels-idx1-ubyte"))
  if self.images:dim() ~= 3 or self.labels:dim() ~= 1 or self.images:size(1) ~= self.labels:size(1) then
    error(("MNIST: images of shape %s and labels of shape %s in %s do not match"):format(
      table.concat(self.images.shape, "x"), table.concat(self.labels.shape, "x"), root), 2)
  end
end

function IdxImages:__len() return self.labels:size(1) end

-- raw uint8 rows -> {float N x 1 x H x W in [0, 1], int64 1-based labels}
function IdxImages:transform_batch(b)
  local x = b[1]:float():div_(255):unsqueeze(2)
  return {x, b[2]:long() + 1}
end

function IdxImages:get_batch(idx)
  return self:transform_batch({self.images:index_select(1, idx), self.labels:index_select(1, idx)})
end

function IdxImages:__getitem(i)
  local b = self:get_batch(torch.tensor({i}))
  return {b[1][1], b[2][1]}
end

function IdxImages:tensors() return {self.images, self.labels} end

datasets.MNIST = IdxImages
datasets.FashionMNIST = IdxImages
datasets.FashionMNIST_classes = {"T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt",
  "Sneaker", "Bag", "Ankle boot"}

return datasets
