-- bench/gpt.lua -- training throughput of scripts/train_char_gpt.lua's
-- default model (4 layers, 4 heads, embed 128, block 128, batch 32, tied
-- head, vocabulary 114): one step of forward, backward, gradient clipping
-- and AdamW on random tokens, in tokens per second.
package.path = "bench/?.lua;" .. package.path
local torch = require "torch"
local nn = require "torch.nn"
local F = require "torch.nn.functional"
local optim = require "torch.optim"
local B = require "common"
local only = arg and arg[1]

if not only or only == "train_gpt" then
  local lib = assert(loadfile("scripts/train_char_gpt.lua"))("--lib")
  torch.manual_seed(0)
  local bs, T, V = 32, 128, 114
  local m = lib.GPT{vocab_size = V, block_size = T, n_layer = 4, n_head = 4, n_embd = 128, dropout = 0, tied = true}
  local opt = optim.AdamW(m:parameters(), {lr = 1e-3, betas = {0.9, 0.99}, weight_decay = 0.1})
  local x = torch.randint(1, V + 1, {bs, T}, {dtype = torch.int64})
  local y = torch.randint(1, V + 1, {bs, T}, {dtype = torch.int64})
  local s = B.time(function()
    local loss = F.cross_entropy(m(x):view(-1, V), y:reshape(-1))
    opt:zero_grad()
    loss:backward()
    nn.utils.clip_grad_norm_(m:parameters(), 1.0)
    opt:step()
  end, 3, 5)
  B.report("train_gpt", s, bs * T / s, "tokens/s")
end
