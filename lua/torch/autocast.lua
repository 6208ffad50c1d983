-- torch.autocast -- see lua/torch/amp/autocast.lua.
return require "torch.amp.autocast"
