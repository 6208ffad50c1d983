-- torch.utils: utilities (torch.utils.data).
local utils = {}
return setmetatable(utils, {__index = function(t, k)
  if k == "data" then
    local m = require "torch.utils.data"
    rawset(t, k, m)
    return m
  end
end})
