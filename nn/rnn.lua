-- torch.nn.rnn -- RNN, LSTM, GRU (multi-layer, bidirectional, batch_first,
-- dropout between layers) and RNNCell, LSTMCell, GRUCell. Weights are named
-- and initialised as in PyTorch (weight_ih_l0, bias_hh_l1_reverse, ...;
-- U(-1/sqrt(hidden), 1/sqrt(hidden))); gate order i,f,g,o (LSTM), r,z,n (GRU).
-- The input projection of a whole sequence is one matmul; the recurrence
-- runs one step per time step with recorded engine ops.
local torch = require "torch"
local U = require "torch.nn.util"
local M = require "torch.nn.module"
local F = require("torch.nn.functional")._unguarded -- the module call is the entry point
local init = require "torch.nn.initializers"

local Module, Parameter = M.Module, M.Parameter
local R = {}

local GATES = {RNN_TANH = 1, RNN_RELU = 1, LSTM = 4, GRU = 3}

-- One step: gi = x W_ih^T + b_ih (precomputed), h (and c) the state.
local function rnn_step(mode, gi, h, c, w_hh, b_hh)
  local gh = F.linear(h, w_hh, b_hh)
  if mode == "LSTM" then
    local g = gh + gi
    local i, f, gg, o = table.unpack(g:chunk(4, -1))
    i, f, gg, o = i:sigmoid(), f:sigmoid(), gg:tanh(), o:sigmoid()
    local cy = f * c + i * gg
    return o * cy:tanh(), cy
  elseif mode == "GRU" then
    local ir, iz, inn = table.unpack(gi:chunk(3, -1))
    local hr, hz, hn = table.unpack(gh:chunk(3, -1))
    local r = (hr + ir):sigmoid()
    local z = (hz + iz):sigmoid()
    local n = (inn + hn * r):tanh()
    return (h - n) * z + n
  elseif mode == "RNN_RELU" then
    return (gh + gi):relu()
  end
  return (gh + gi):tanh()
end

local function shape_eq(t, s)
  if t:dim() ~= #s then return false end
  for i = 1, #s do if t:size(i) ~= s[i] then return false end end
  return true
end

local RNN_ARGS = {"num_layers", "nonlinearity", "bias", "batch_first", "dropout", "bidirectional", "device", "dtype"}
-- LSTM and GRU take no nonlinearity: their 4th positional is bias, as in PyTorch
local GATED_ARGS = {"num_layers", "bias", "batch_first", "dropout", "bidirectional", "device", "dtype"}
local RNN_D = {num_layers = 1, nonlinearity = "tanh", bias = true, batch_first = false, dropout = 0.0,
               bidirectional = false}

local function base_init(self, name, mode, input_size, hidden_size, o)
  U.size("nn." .. name, "input_size", input_size)
  U.size("nn." .. name, "hidden_size", hidden_size, 1)
  if o.dropout < 0 or o.dropout > 1 then
    error(("nn.%s: dropout must be between 0 and 1, got %s"):format(name, tostring(o.dropout)), 4)
  end
  self.mode, self.input_size, self.hidden_size = mode, input_size, hidden_size
  self.num_layers, self.bias, self.batch_first = o.num_layers, o.bias, o.batch_first
  self.dropout, self.bidirectional = o.dropout, o.bidirectional
  local D = o.bidirectional and 2 or 1
  local G = GATES[mode] * hidden_size
  self._weights = {}
  for layer = 0, o.num_layers - 1 do
    for dir = 0, D - 1 do
      local in_size = layer == 0 and input_size or hidden_size * D
      local sfx = "_l" .. layer .. (dir == 1 and "_reverse" or "")
      local names = {"weight_ih" .. sfx, "weight_hh" .. sfx}
      self:register_parameter(names[1], Parameter(torch.empty(G, in_size, U.topts(o.dtype, o.device))))
      self:register_parameter(names[2], Parameter(torch.empty(G, hidden_size, U.topts(o.dtype, o.device))))
      if o.bias then
        names[3], names[4] = "bias_ih" .. sfx, "bias_hh" .. sfx
        self:register_parameter(names[3], Parameter(torch.empty(G, U.topts(o.dtype, o.device))))
        self:register_parameter(names[4], Parameter(torch.empty(G, U.topts(o.dtype, o.device))))
      end
      self._weights[#self._weights + 1] = names
    end
  end
  self:reset_parameters()
end

local function reset(self)
  local stdv = self.hidden_size > 0 and 1 / math.sqrt(self.hidden_size) or 0
  for _, p in ipairs(self:parameters()) do init.uniform_(p, -stdv, stdv) end
end

local function extra(self)
  local s = ("%d, %d"):format(self.input_size, self.hidden_size)
  if self.num_layers ~= 1 then s = s .. ", num_layers=" .. self.num_layers end
  if self.bias ~= true then s = s .. ", bias=" .. tostring(self.bias) end
  if self.batch_first then s = s .. ", batch_first=true" end
  if self.dropout ~= 0 then s = s .. ", dropout=" .. U.repr(self.dropout) end
  if self.bidirectional then s = s .. ", bidirectional=true" end
  return s
end

-- forward(input[, hx]): input (T, B, input_size) ((B, T, ...) if
-- batch_first; (T, input_size) unbatched). hx: h_0 (layers*dirs, B, hidden)
-- or, for LSTM, {h_0, c_0}. Returns output, h_n (LSTM: output, {h_n, c_n}).
local function base_forward(self, input, hx)
  local mode = self.mode
  local nd = input:dim()
  if (nd ~= 2 and nd ~= 3) or input:size(nd) ~= self.input_size then
    error(("%s: expected input of shape (seq_len, batch, %d)%s or (seq_len, %d), got %s"):format(self:_label(),
          self.input_size, self.batch_first and " with batch_first: (batch, seq_len, ...)" or "", self.input_size,
          U.shape_str(input)), 2)
  end
  local batched = nd == 3
  local x = input
  if not batched then x = x:unsqueeze(2)
  elseif self.batch_first then x = x:transpose(1, 2) end
  local T, B, H = x:size(1), x:size(2), self.hidden_size
  local D = self.bidirectional and 2 or 1
  local LD = self.num_layers * D
  local h0, c0 = hx, nil
  if mode == "LSTM" and hx ~= nil then
    if type(hx) ~= "table" then error(self:_label() .. ": hx must be a table {h_0, c_0}", 2) end
    h0, c0 = hx[1], hx[2]
  end
  local want = batched and {LD, B, H} or {LD, H}
  for _, st in ipairs{h0 or false, c0 or false} do
    if st and not shape_eq(st, want) then
      error(("%s: expected hidden state of shape %s, got %s"):format(self:_label(), U.shape_str(want),
            U.shape_str(st)), 2)
    end
  end
  if h0 ~= nil and not batched then h0 = h0:unsqueeze(2) end
  if c0 ~= nil and not batched then c0 = c0:unsqueeze(2) end
  if h0 == nil then h0 = torch.zeros(LD, B, H, {dtype = x.dtype}) end
  if mode == "LSTM" and c0 == nil then c0 = torch.zeros(LD, B, H, {dtype = x.dtype}) end
  local hn, cn = {}, {}
  local layer_input = x
  local training = rawget(self, "training")
  for layer = 1, self.num_layers do
    local outs = {}
    for dir = 1, D do
      local k = (layer - 1) * D + dir
      local names = self._weights[k]
      local w_ih, w_hh = self[names[1]], self[names[2]]
      local b_ih, b_hh
      if names[3] then b_ih, b_hh = self[names[3]], self[names[4]] end
      local xp = F.linear(layer_input, w_ih, b_ih)
      local h, c = h0[k], c0 and c0[k]
      local steps = {}
      local first, last, step = 1, T, 1
      if dir == 2 then first, last, step = T, 1, -1 end
      for t = first, last, step do
        h, c = rnn_step(mode, xp[t], h, c, w_hh, b_hh)
        steps[t] = h
      end
      outs[dir] = torch.stack(steps, 1)
      hn[k], cn[k] = h, c
    end
    local out = D == 2 and torch.cat(outs, 3) or outs[1]
    if self.dropout > 0 and training and layer < self.num_layers then out = F.dropout(out, self.dropout, true) end
    layer_input = out
  end
  local output = layer_input
  local h_n = torch.stack(hn, 1)
  local c_n = mode == "LSTM" and torch.stack(cn, 1) or nil
  if not batched then
    output, h_n = output:squeeze(2), h_n:squeeze(2)
    if c_n then c_n = c_n:squeeze(2) end
  elseif self.batch_first then
    output = output:transpose(1, 2)
  end
  if mode == "LSTM" then return output, {h_n, c_n} end
  return output, h_n
end

local function define(name, mode_of)
  local cls = Module:extend(name)
  function cls:__init(input_size, hidden_size, ...)
    local o = U.args("nn." .. name, name == "RNN" and RNN_ARGS or GATED_ARGS, RNN_D, ...)
    local mode = mode_of(o)
    base_init(self, name, mode, input_size, hidden_size, o)
    if name == "RNN" then self.nonlinearity = o.nonlinearity end
  end
  cls.reset_parameters, cls.extra_repr, cls.forward = reset, extra, base_forward
  function cls:flatten_parameters() end
  R[name] = cls
end

-- RNN(input_size, hidden_size[, num_layers=1, nonlinearity='tanh', bias=true,
-- batch_first=false, dropout=0, bidirectional=false])
define("RNN", function(o)
  if o.nonlinearity == "tanh" then return "RNN_TANH" elseif o.nonlinearity == "relu" then return "RNN_RELU" end
  U.choice("nn.RNN", "nonlinearity", o.nonlinearity, "tanh relu")
end)
-- LSTM(input_size, hidden_size[, num_layers, bias, batch_first, dropout, bidirectional])
define("LSTM", function() return "LSTM" end)
-- GRU(input_size, hidden_size[, num_layers, bias, batch_first, dropout, bidirectional])
define("GRU", function() return "GRU" end)

-- Cells: one time step, input (B, input_size) or (input_size).
local function define_cell(name, mode_fixed)
  local cls = Module:extend(name)
  function cls:__init(input_size, hidden_size, ...)
    local names = {"bias", "device", "dtype"}
    local defaults = {bias = true}
    if name == "RNNCell" then names, defaults.nonlinearity = {"bias", "nonlinearity", "device", "dtype"}, "tanh" end
    local o = U.args("nn." .. name, names, defaults, ...)
    self.input_size, self.hidden_size, self.bias = input_size, hidden_size, o.bias
    self.mode = mode_fixed or (o.nonlinearity == "relu" and "RNN_RELU" or "RNN_TANH")
    if name == "RNNCell" then self.nonlinearity = o.nonlinearity end
    local G = GATES[self.mode] * hidden_size
    self.weight_ih = Parameter(torch.empty(G, input_size, U.topts(o.dtype, o.device)))
    self.weight_hh = Parameter(torch.empty(G, hidden_size, U.topts(o.dtype, o.device)))
    if o.bias then
      self.bias_ih = Parameter(torch.empty(G, U.topts(o.dtype, o.device)))
      self.bias_hh = Parameter(torch.empty(G, U.topts(o.dtype, o.device)))
    else
      self:register_parameter("bias_ih", nil)
      self:register_parameter("bias_hh", nil)
    end
    self:reset_parameters()
  end
  cls.reset_parameters = reset
  function cls:extra_repr()
    local s = ("%d, %d"):format(self.input_size, self.hidden_size)
    if self.bias ~= true then s = s .. ", bias=false" end
    if self.nonlinearity and self.nonlinearity ~= "tanh" then s = s .. ", nonlinearity=" .. self.nonlinearity end
    return s
  end
  -- forward(input[, hx]) -> h' (LSTMCell: hx = {h, c}, returns {h', c'})
  function cls:forward(x, hx)
    if x:dim() < 1 or x:dim() > 2 or x:size(-1) ~= self.input_size then
      error(("%s: expected input of shape (batch, %d) or (%d), got %s"):format(self:_label(), self.input_size,
            self.input_size, U.shape_str(x)), 2)
    end
    local batched = x:dim() == 2
    if not batched then x = x:unsqueeze(1) end
    local B = x:size(1)
    local h, c
    if self.mode == "LSTM" then
      if hx ~= nil then h, c = hx[1], hx[2] end
    else
      h = hx
    end
    if h ~= nil and not batched then h = h:unsqueeze(1) end
    if c ~= nil and not batched then c = c:unsqueeze(1) end
    h = h or torch.zeros(B, self.hidden_size, {dtype = x.dtype})
    if self.mode == "LSTM" then c = c or torch.zeros(B, self.hidden_size, {dtype = x.dtype}) end
    local gi = F.linear(x, self.weight_ih, self.bias_ih)
    local h1, c1 = rnn_step(self.mode, gi, h, c, self.weight_hh, self.bias_hh)
    if not batched then
      h1 = h1:squeeze(1)
      if c1 then c1 = c1:squeeze(1) end
    end
    if self.mode == "LSTM" then return {h1, c1} end
    return h1
  end
  R[name] = cls
end

define_cell("RNNCell", nil)
define_cell("LSTMCell", "LSTM")
define_cell("GRUCell", "GRU")

return R
