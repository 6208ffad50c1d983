-- bench/cuda_gpt.lua -- training throughput of the char GPT of issue 9 on
-- the GPU: scripts/train_char_gpt.lua's model with 6 layers, 6 heads,
-- width 384, block 256, batch 64, vocabulary 65, tied head, no dropout; one
-- step = forward, backward, gradient clipping, AdamW, on random tokens.
-- Rows: float32 (full-precision matmuls, 'highest') eager and compiled,
-- bfloat16 autocast eager and compiled; tokens/s over 20 timed steps after
-- warm-up, and the seconds of the first (compiling) step.
-- `cuda_gpt.lua profile_gpt_fp32_eager` (any row's name) prints the
-- profiler's table of 3 steps by GPU time instead.
-- Peer: bench/peers/cuda_gpt.py (run both in one call on the GPU machine).
local torch = require "torch"
local nn = require "torch.nn"
local F = require "torch.nn.functional"
local optim = require "torch.optim"
if not torch.cuda.is_available() then print("cuda_gpt: no CUDA GPU here; skipped") return end
local lib = assert(loadfile("scripts/train_char_gpt.lua"))("--lib")
local B, T, V = 64, 256, 65
local only = arg and arg[1]

local function run(name, compile, amp_dtype)
  local profile = only == "profile_" .. name -- prints where the GPU time of 3 steps goes
  if only and only ~= name and not profile then return end
  torch.manual_seed(0)
  torch.compiler.reset()
  local m = lib.GPT{vocab_size = V, block_size = T, n_layer = 6, n_head = 6, n_embd = 384, dropout = 0, tied = true}
  m:to("cuda")
  local opt = optim.AdamW(m:parameters(), {lr = 1e-3, betas = {0.9, 0.99}, weight_decay = 0.1})
  local x = torch.randint(1, V + 1, {B, T}, {dtype = torch.int64, device = "cuda"})
  local y = torch.randint(1, V + 1, {B, T}, {dtype = torch.int64, device = "cuda"})
  local function step(xb, yb)
    local loss
    do
      local ac <close> = amp_dtype and torch.autocast("cuda", amp_dtype) or nil
      local logits = m(xb)
      loss = F.cross_entropy(logits:view(-1, V), yb:reshape(-1))
    end
    opt:zero_grad()
    loss:backward()
    nn.utils.clip_grad_norm_(m:parameters(), 1.0)
    opt:step()
    return loss
  end
  local f = compile and torch.compile(step) or step
  if profile then
    for _ = 1, 3 do f(x, y) end
    -- once under a profile first: its marks send the waiting ops in other
    -- groups than a plain step does, and those groups compile once
    torch.profiler.profile({activities = {"cpu", "cuda"}}, function() for _ = 1, 2 do f(x, y) end end)
    local prof = torch.profiler.profile({activities = {"cpu", "cuda"}}, function() for _ = 1, 3 do f(x, y) end end)
    print(prof:key_averages():table{sort_by = "self_cuda_time_total", row_limit = 30})
    return
  end
  local ok, err = pcall(function()
    -- "first step": until the first step that ran compiled (a compiled
    -- step's first calls capture, and AdamW's first makes its state)
    local t0 = torch.time()
    local l0 = f(x, y):item()
    local calls, each = 1, {("%.2f"):format(torch.time() - t0)}
    while compile and torch.compiler.stats().compiled_calls == 0 and calls < 5 do
      local t1 = torch.time()
      f(x, y):item()
      calls = calls + 1
      each[calls] = ("%.2f"):format(torch.time() - t1)
    end
    local first = torch.time() - t0
    local ms = torch.cuda.memory_stats()
    local firsts = ("  first calls %s s; %d kernels compiled (%.1f s of compiler time), %d from the disk cache")
      :format(table.concat(each, ", "), ms.kernel_compiles, ms.kernel_compile_seconds, ms.kernel_disk_hits)
    for _ = calls + 1, 5 do f(x, y) end
    torch.cuda.synchronize()
    t0 = torch.time()
    local n = 20
    local l
    for _ = 1, n do l = f(x, y) end
    local last = l:item()
    local s = (torch.time() - t0) / n
    print(("%s %.0f tokens/s (%.2f ms/step, first step %.2f s%s, loss %.3f -> %.3f)"):format(name, B * T / s, s * 1e3,
      first, calls > 1 and (" over " .. calls .. " calls") or "", l0, last))
    print(firsts)
    if compile then
      local c = torch.compiler.stats()
      print(("  compiler: %d compiled calls, %d eager, %d fallbacks, %d graph breaks, %d recompiles, %d CUDA graph replays")
        :format(c.compiled_calls, c.eager_calls, c.fallbacks, c.graph_breaks, c.recompiles, c.cuda_graph_replays or 0))
    end
  end)
  if not ok then print(("%s failed: %s"):format(name, tostring(err))) end
end

run("gpt_fp32_eager", false, nil)
run("gpt_fp32_compiled", true, nil)
run("gpt_bf16_eager", false, torch.bfloat16)
run("gpt_bf16_compiled", true, torch.bfloat16)
