-- torch.nn -- the nn package: Module and every layer, container and loss.
-- nn.functional (F), nn.init and nn.utils load on first use. Module classes
-- live in lua/torch/nn/<group>.lua; this file only joins them.
local M = require "torch.nn.module"

local nn = {__help = "torch.nn: Module, layers, containers and losses; nn.functional, nn.init, nn.utils"}
nn.Module, nn.Parameter = M.Module, M.Parameter
nn.is_module = M.is_module

for _, group in ipairs{"container", "linear", "conv", "pooling", "normalization", "misc", "activation", "loss",
                       "rnn", "transformer"} do
  for k, v in pairs(require("torch.nn." .. group)) do nn[k] = v end
end

local LAZY = {functional = "torch.nn.functional", init = "torch.nn.initializers", utils = "torch.nn.utils"}
return setmetatable(nn, {__index = function(t, k)
  local path = LAZY[k]
  if path then
    local v = require(path)
    rawset(t, k, v)
    return v
  end
end})
