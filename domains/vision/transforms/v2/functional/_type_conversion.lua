-- torch.vision.transforms.v2.functional._type_conversion -- to_image and
-- to_pure_tensor: tensors in and out of the tv_tensors kinds (there are no
-- PIL images in Lua; a numeric table or an H x W x C tensor is the array
-- form torchvision takes from numpy).
local torch = require "torch"
local tv = require "torch.vision.tv_tensors"

local M = {}

-- to_image(inpt): an Image [..., C, H, W]; a tensor is taken as it is (an
-- H x W tensor gets one channel), nested tables of numbers as an H x W x C
-- array (numpy's layout, as torchvision does with ndarrays)
function M.to_image(inpt)
  if torch.is_tensor(inpt) then return tv.Image(inpt) end
  if type(inpt) == "table" then
    local t = torch.tensor(inpt)
    if t:dim() == 2 then t = t:unsqueeze(3) end
    if t:dim() ~= 3 then
      error(("F.to_image: a table must hold an H x W or H x W x C array, got shape %s"):format(
        torch.pformat(t.shape)), 2)
    end
    return tv.Image(t:permute(3, 1, 2):contiguous())
  end
  error(("F.to_image: expected a tensor or a table of numbers, got %s"):format(type(inpt)), 2)
end

-- to_pure_tensor(inpt): the tensor without its tv_tensor kind
function M.to_pure_tensor(inpt)
  if not torch.is_tensor(inpt) then error(("F.to_pure_tensor: expected a tensor, got %s"):format(type(inpt)), 2) end
  if tv.kind(inpt) == nil then return inpt end
  return inpt:view(inpt.shape)
end

return M
