-- torch.vision: datasets for vision (torch.vision.datasets).
local vision = {}
return setmetatable(vision, {__index = function(t, k)
  if k == "datasets" then
    local m = require "torch.vision.datasets"
    rawset(t, k, m)
    return m
  end
end})
