-- tests/nn/test_rnn.lua -- RNN, LSTM, GRU (layers, bidirectional,
-- batch_first, initial states, unbatched) and the cells against PyTorch 1.13
-- outputs, final states and gradients (tests/ref/nn_rnn.lua), float64.
local here = debug.getinfo(1, "S").source:match("^@(.*)/[^/]*$") or "tests/nn"
package.path = here .. "/?.lua;" .. package.path
local R = require "nnref"
R.use(_ENV)
local nn = require "torch.nn"
local refs = ref("nn_rnn")

local LSTMWithState = nn.Module:extend("LSTMWithState")
function LSTMWithState:__init() self.lstm = nn.LSTM(2, 3, {bias = false}) end
function LSTMWithState:forward(x, h, c) return self.lstm(x, {h, c}) end

local cases = {
  rnn_tanh = function() return nn.RNN(3, 4) end,
  rnn_relu_2layer_h0 = function() return nn.RNN(3, 4, {num_layers = 2, nonlinearity = "relu"}) end,
  lstm = function() return nn.LSTM(3, 4) end,
  lstm_bi_2layer_batch_first = function()
    return nn.LSTM(3, 2, {num_layers = 2, bidirectional = true, batch_first = true})
  end,
  lstm_state_nobias = function() return LSTMWithState() end,
  gru = function() return nn.GRU(3, 4) end,
  gru_bi_unbatched = function() return nn.GRU(3, 2, {bidirectional = true}) end,
  lstm_cell = function() return nn.LSTMCell(3, 4) end,
  gru_cell = function() return nn.GRUCell(3, 4) end,
  rnn_cell = function() return nn.RNNCell(3, 4, {nonlinearity = "relu"}) end,
}

local names = {}
for k in pairs(cases) do names[#names + 1] = k end
table.sort(names)
for _, name in ipairs(names) do R.module_tests(refs, name, cases[name]) end

test("parameter names, shapes and default initialisation bounds follow PyTorch", function()
  torch.manual_seed(0)
  local m = nn.GRU(5, 8, {num_layers = 2, bidirectional = true})
  local names = {}
  for n in m:named_parameters() do names[#names + 1] = n end
  check_eq(names[1], "weight_ih_l0")
  check_eq(names[5], "weight_ih_l0_reverse")
  check_eq(names[16], "bias_hh_l1_reverse")
  check_eq(#names, 16)
  check_shape(m.weight_ih_l0, {24, 5})
  check_shape(m.weight_ih_l1, {24, 16})
  local bound = 1 / math.sqrt(8)
  for _, p in ipairs(m:parameters()) do check(p:abs():max():item() <= bound) end
  check_eq(tostring(m), "GRU(5, 8, num_layers=2, bidirectional=true)")
end)

test("wrong input and state shapes raise errors naming the layer", function()
  local m = nn.LSTM(3, 4)
  check_error(function() m(torch.zeros(5, 2, 7)) end, "LSTM(3, 4): expected input of shape (seq_len, batch, 3)")
  check_error(function() m(torch.zeros(5, 2, 3), {torch.zeros(1, 3, 4), torch.zeros(1, 2, 4)}) end,
              "LSTM(3, 4): expected hidden state of shape 1x2x4, got 1x3x4")
end)

test("dropout between layers is active only in training", function()
  torch.manual_seed(1)
  local m = nn.GRU(3, 4, {num_layers = 2, dropout = 0.5})
  local x = torch.randn(6, 2, 3)
  m:eval()
  local a = m(x)
  local b = m(x)
  check(torch.equal(a, b))
  m:train()
  local c = m(x)
  check(not torch.equal(a, c))
end)

test("positional arguments follow PyTorch: LSTM and GRU have no nonlinearity", function()
  for _, cls in ipairs({nn.LSTM, nn.GRU}) do
    local m = cls(3, 4, 2, false, true, 0, true) -- num_layers, bias, batch_first, dropout, bidirectional
    check(m.num_layers == 2 and m.bias == false and m.batch_first == true and m.bidirectional == true,
          "positional options of " .. tostring(m))
    check(m.weight_ih_l0 and not m.bias_ih_l0, "bias=false leaves no bias parameters")
    local ok, err = pcall(cls, 3, 4, {nonlinearity = "relu"})
    check(not ok and tostring(err):find("unknown option 'nonlinearity'"), tostring(err))
  end
  local r = nn.RNN(3, 4, 1, "relu", false)
  check(r.nonlinearity == "relu" and r.bias == false, "RNN keeps nonlinearity 4th")
end)
