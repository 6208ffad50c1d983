-- torch.rl.modules.models -- MLP, TorchRL's multi-layer perceptron: Linear
-- layers of num_cells units with an activation between them (and after
-- the last one when activate_last_layer). Several inputs are concatenated
-- along the last dim first (a Q(s, a) network takes observation, action).
local torch = require "torch"
local nn = require "torch.nn"
local U = require "torch.nn.util"

local M = {}
local FN = "torch.rl.modules.MLP"

local MLP = nn.Sequential:extend("MLP")
MLP.__prefix = "torch.rl.modules."
M.MLP = MLP

local function layer_sizes(o)
  local cells, depth = o.num_cells, o.depth
  if depth ~= nil then U.size(FN, "depth", depth) end
  if cells == nil then cells = 32 end
  if type(cells) == "number" then
    U.size(FN, "num_cells", cells, 1)
    local t = {}
    for i = 1, depth or 3 do t[i] = cells end
    return t
  end
  if type(cells) ~= "table" then error(FN .. ": num_cells must be an integer or a list of integers, got " .. type(cells), 3) end
  if depth ~= nil and depth ~= #cells then
    error(("%s: depth (%d) and the length of num_cells (%d) must match"):format(FN, depth, #cells), 3)
  end
  for i, c in ipairs(cells) do U.size(FN, "num_cells[" .. i .. "]", c, 1) end
  return cells
end

-- MLP{in_features=, out_features=, num_cells=32, depth=3 when num_cells is
-- a number, activation_class=nn.Tanh, activation_kwargs=, dropout=,
-- bias_last_layer=true, activate_last_layer=false, layer_class=nn.Linear,
-- device=}: in_features -> num_cells... -> out_features. out_features may
-- be a shape table ({2, 3}): the output is reshaped to [..., 2, 3].
function MLP:__init(...)
  local o = U.args(FN, {"in_features", "out_features", "depth", "num_cells", "activation_class", "activation_kwargs",
                        "norm_class", "norm_kwargs", "dropout", "bias_last_layer", "single_bias_last_layer",
                        "layer_class", "layer_kwargs", "activate_last_layer", "device"},
                   {activation_class = nn.Tanh, bias_last_layer = true, activate_last_layer = false,
                    layer_class = nn.Linear}, ...)
  if o.in_features == nil then
    error(FN .. ": in_features is required (lazy layers are not supported); pass the input size", 2)
  end
  U.size(FN, "in_features", o.in_features, 1)
  local out, out_shape = o.out_features, nil
  if type(out) == "table" then
    out_shape, out = out, 1
    for _, s in ipairs(out_shape) do out = out * U.size(FN, "out_features", s, 1) end
  else
    U.size(FN, "out_features", out, 1)
  end
  local cells = layer_sizes(o)
  local sizes = {o.in_features}
  for _, c in ipairs(cells) do sizes[#sizes + 1] = c end
  sizes[#sizes + 1] = out
  local mods = {}
  local function act()
    if o.activation_kwargs then return o.activation_class(o.activation_kwargs) end
    return o.activation_class()
  end
  for i = 1, #sizes - 1 do
    local last = i == #sizes - 1
    local bias = (not last) or o.bias_last_layer
    local kw = {bias = bias, device = o.device}
    if o.layer_kwargs then for k, v in pairs(o.layer_kwargs) do kw[k] = v end end
    mods[#mods + 1] = o.layer_class(sizes[i], sizes[i + 1], kw)
    if not last or o.activate_last_layer then
      if o.norm_class then mods[#mods + 1] = o.norm_class(sizes[i + 1], o.norm_kwargs) end
      mods[#mods + 1] = act()
      if o.dropout and not last then mods[#mods + 1] = nn.Dropout(o.dropout) end
    end
  end
  nn.Sequential.__init(self, table.unpack(mods))
  self.in_features, self.out_features, self.num_cells, self._out_shape = o.in_features, o.out_features, cells,
                                                                          out_shape
end

-- forward(x, ...) -> the network applied to x (several inputs are
-- concatenated along the last dim first).
function MLP:forward(x, ...)
  if select("#", ...) > 0 then x = torch.cat({x, ...}, -1) end
  if not torch.is_tensor(x) then error(FN .. ": the input must be a tensor, got " .. type(x), 2) end
  if x.shape[x:dim()] ~= self.in_features then
    error(("%s: the input's last dim must be in_features = %d, got shape %s"):format(FN, self.in_features,
          U.shape_str(x)), 2)
  end
  local y = nn.Sequential.forward(self, x)
  if self._out_shape then
    local shape = {}
    for i = 1, y:dim() - 1 do shape[i] = y.shape[i] end
    for _, s in ipairs(self._out_shape) do shape[#shape + 1] = s end
    y = y:reshape(shape)
  end
  return y
end

return M
