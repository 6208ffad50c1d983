-- torch.audio.functional._checks -- argument checks the functionals share,
-- each raising an error that names the function, at the level of the
-- functional's caller.
local torch = require "torch"
local U = require "torch.nn.util"

local C = {}

-- float_tensor(fname, name, x, min_dim, dims): x is a floating tensor of at
-- least min_dim dims (dims: the expected layout for the message, e.g.
-- "[..., time]"); called directly from the public function
function C.float_tensor(fname, name, x, min_dim, dims)
  if not torch.is_tensor(x) or x:dim() < min_dim or not x:is_floating_point() then
    error(("%s: %s must be a floating-point tensor %s, got %s"):format(fname, name, dims,
      torch.is_tensor(x) and tostring(x.dtype) .. " " .. U.shape_str(x) or type(x)), 3)
  end
end

-- positive_rate(fname, sample_rate): a positive number
function C.positive_rate(fname, sample_rate)
  U.number(fname, "sample_rate", sample_rate)
  if sample_rate <= 0 then error(("%s: sample_rate must be positive, got %g"):format(fname, sample_rate), 3) end
end

return C
