-- torch.vision.datasets.FakeData -- random images for trying a pipeline:
-- sample i is drawn from a generator seeded with (i - 1) + random_offset,
-- as torchvision seeds with the 0-based index, so a sample is the same on
-- every call (the values differ from torchvision's: moontorch's RNG is
-- Philox). The image is uint8 C x H x W: randn * 255 wrapped to 0..255 as
-- torchvision's ToPILImage does; the target a 1-based class index.
local torch = require "torch"
local V = require "torch.vision.datasets.vision"

local FakeData = V.class("FakeData")

function FakeData:__init(...)
  local o = V.args("FakeData", "size image_size num_classes transform target_transform random_offset transforms", ...)
  self.size = o.size or 1000
  self.image_size = o.image_size or {3, 224, 224}
  self.num_classes = o.num_classes or 10
  self.random_offset = o.random_offset or 0
  if math.type(self.size) ~= "integer" or self.size < 0 then
    error("FakeData: size must be a non-negative integer, got " .. tostring(self.size), 2)
  end
  if type(self.image_size) ~= "table" or #self.image_size ~= 3 then
    error("FakeData: image_size must be a table {C, H, W}, got " .. tostring(self.image_size), 2)
  end
  for _, s in ipairs(self.image_size) do
    if math.type(s) ~= "integer" or s < 1 then
      error("FakeData: image_size must hold positive integers, got {" .. table.concat(self.image_size, ", ") .. "}", 2)
    end
  end
  if math.type(self.num_classes) ~= "integer" or self.num_classes < 1 then
    error("FakeData: num_classes must be a positive integer, got " .. tostring(self.num_classes), 2)
  end
  if math.type(self.random_offset) ~= "integer" then
    error("FakeData: random_offset must be an integer, got " .. tostring(self.random_offset), 2)
  end
  V.set_transforms(self, "FakeData", o)
  self.classes = {}
  for k = 1, self.num_classes do self.classes[k] = tostring(k - 1) end
  self.class_to_idx = V.class_to_idx(self.classes)
end

function FakeData:__len() return self.size end

function FakeData:__getitem(i)
  i = V.index(self, i)
  local g = torch.Generator():manual_seed(i - 1 + self.random_offset)
  local c, h, w = table.unpack(self.image_size)
  local x = torch.randn({c, h, w}, {generator = g, device = "cpu"})
  local target = torch.randint(0, self.num_classes, {1}, {generator = g, device = "cpu"})[1]:item() + 1
  local img = x:mul(255):long():remainder(256):to(torch.uint8)
  return V.apply(self, img, target)
end

return FakeData
