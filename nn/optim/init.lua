-- torch.optim -- optimizers (SGD, Adam, AdamW, RMSprop, Adagrad) and, on
-- first use, optim.lr_scheduler. Each optimizer lives in its own file.
local Optimizer = require "torch.optim.optimizer"
local adam = require "torch.optim.adam"
local rms = require "torch.optim.rmsprop"

local optim = {
  __help = "torch.optim: SGD, Adam, AdamW, RMSprop, Adagrad (step, zero_grad, state_dict); optim.lr_scheduler",
  Optimizer = Optimizer,
  SGD = require "torch.optim.sgd",
  Adam = adam.Adam,
  AdamW = adam.AdamW,
  RMSprop = rms.RMSprop,
  Adagrad = rms.Adagrad,
}

return setmetatable(optim, {__index = function(t, k)
  if k == "lr_scheduler" then
    local v = require "torch.optim.lr_scheduler"
    rawset(t, k, v)
    return v
  end
end})
