-- torch.vision.datasets: CIFAR10 and CIFAR100 from the datasets' binary
-- version (torchvision reads the Python pickle version, which Lua cannot
-- unpickle): cifar-10-batches-bin/data_batch_1..5.bin and test_batch.bin,
-- rows of 1 label byte + 3072 pixel bytes (R, G, B planes of 32 x 32);
-- cifar-100-binary/train.bin and test.bin, rows of a coarse and a fine
-- label byte + 3072 pixel bytes. A sample is {image, target}: a float
-- 3 x 32 x 32 image in [0, 1] (what ToTensor() makes of torchvision's PIL
-- image) and the 1-based class index (CIFAR-100: the fine label).
local torch = require "torch"
local V = require "torch.vision.datasets.vision"
local M = {}

local ARGS = "root train transform target_transform transforms download"
local PIXELS = 3 * 32 * 32

local CIFAR10_CLASSES = {"airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse", "ship", "truck"}
local CIFAR100_CLASSES = {}
for w in ([[apple aquarium_fish baby bear beaver bed bee beetle bicycle bottle bowl boy bridge bus butterfly camel
  can castle caterpillar cattle chair chimpanzee clock cloud cockroach couch crab crocodile cup dinosaur dolphin
  elephant flatfish forest fox girl hamster house kangaroo keyboard lamp lawn_mower leopard lion lizard lobster man
  maple_tree motorcycle mountain mouse mushroom oak_tree orange orchid otter palm_tree pear pickup_truck pine_tree
  plain plate poppy porcupine possum rabbit raccoon ray road rocket rose sea seal shark shrew skunk skyscraper snail
  snake spider squirrel streetcar sunflower sweet_pepper table tank telephone television tiger tractor train trout
  tulip turtle wardrobe whale willow_tree wolf woman worm]]):gmatch("%S+") do
  CIFAR100_CLASSES[#CIFAR100_CLASSES + 1] = w
end
local CIFAR100_COARSE = {}
for w in ([[aquatic_mammals fish flowers food_containers fruit_and_vegetables household_electrical_devices
  household_furniture insects large_carnivores large_man-made_outdoor_things large_natural_outdoor_scenes
  large_omnivores_and_herbivores medium_mammals non-insect_invertebrates people reptiles small_mammals trees
  vehicles_1 vehicles_2]]):gmatch("%S+") do
  CIFAR100_COARSE[#CIFAR100_COARSE + 1] = w
end

-- the non-empty lines of a text file, or nil when it does not exist
local function lines(path)
  local f = io.open(path, "r")
  if not f then return nil end
  local out = {}
  for l in f:lines() do
    l = l:gsub("%s+$", "")
    if l ~= "" then out[#out + 1] = l end
  end
  f:close()
  return out
end

-- the rows of a binary batch file: a uint8 N x (labels + 3072) tensor
local function rows(fname, path, nlabels)
  if not V.exists(path) then error(("%s: dataset file not found: %s"):format(fname, path), 4) end
  local b = torch.vision.io.read_file(path)
  local width = nlabels + PIXELS
  if b:numel() == 0 or b:numel() % width ~= 0 then
    error(("%s: %s is not a CIFAR binary batch: %d bytes is not a multiple of %d-byte rows"):format(fname, path,
      b:numel(), width), 4)
  end
  return b:view(b:numel() // width, width)
end

local cifar = {}

function cifar:__len() return #self.targets end

function cifar:transform_batch(b)
  local x = b[1]:float():div_(255)
  if not V.has_transforms(self) then return {x, b[2]} end
  local samples = {}
  for j = 1, #x do samples[j] = V.apply(self, x[j], b[2][j]:item()) end
  return require("torch.utils.data").default_collate(samples)
end

function cifar:get_batch(ids)
  return self:transform_batch({self.data:index_select(1, ids), self.targets:index_select(1, ids)})
end

function cifar:__getitem(i)
  i = V.index(self, i)
  return V.apply(self, self.data[i]:float():div_(255), self.targets[i]:item())
end

function cifar:tensors() return {self.data, self.targets} end

-- name, folder, train files, test files, label bytes per row, classes,
-- the file naming the classes
local function define(name, folder, train_files, test_files, nlabels, classes, meta)
  local C = V.class(name)
  for k, f in pairs(cifar) do C[k] = f end
  function C:__init(...)
    local o = V.args(name, ARGS, ...)
    local root = V.root(name, o.root)
    V.no_download(name, o, root .. "/" .. folder)
    if o.train ~= nil and type(o.train) ~= "boolean" then
      error(("%s: train must be true or false, got %s"):format(name, tostring(o.train)), 2)
    end
    V.set_transforms(self, name, o)
    self.root, self.train = root, o.train ~= false
    local parts = {}
    for k, f in ipairs(self.train and train_files or test_files) do
      parts[k] = rows(name, root .. "/" .. folder .. "/" .. f, nlabels)
    end
    local all = #parts == 1 and parts[1] or torch.cat(parts, 1)
    self.data = all:narrow(2, nlabels + 1, PIXELS):contiguous():view(#all, 3, 32, 32)
    self.targets = all:select(2, nlabels):long() + 1
    if nlabels == 2 then self.coarse_targets = all:select(2, 1):long() + 1 end
    self.classes = lines(root .. "/" .. folder .. "/" .. meta) or classes
    local top = self.targets:max():item()
    if top > #self.classes then
      error(("%s: label %d in %s/%s exceeds its %d classes"):format(name, top - 1, root, folder, #self.classes), 2)
    end
    self.class_to_idx = V.class_to_idx(self.classes)
  end
  return C
end

M.CIFAR10 = define("CIFAR10", "cifar-10-batches-bin",
  {"data_batch_1.bin", "data_batch_2.bin", "data_batch_3.bin", "data_batch_4.bin", "data_batch_5.bin"},
  {"test_batch.bin"}, 1, CIFAR10_CLASSES, "batches.meta.txt")
M.CIFAR100 = define("CIFAR100", "cifar-100-binary", {"train.bin"}, {"test.bin"}, 2, CIFAR100_CLASSES,
  "fine_label_names.txt")
M.CIFAR100.coarse_classes = CIFAR100_COARSE

return M
