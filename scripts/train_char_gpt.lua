-- scripts/train_char_gpt.lua -- a character-level GPT trained on English
-- text on the CPU: token + position embeddings, pre-norm blocks (causal
-- self-attention through F.scaled_dot_product_attention, GELU MLP), a head
-- tied to the token embedding. Progress bar (loss, tokens/s, ETA), validation
-- loss and a checkpoint every --eval-every steps, --resume, and sampling
-- through a key/value cache.
--
--   moontorch scripts/train_char_gpt.lua [--steps 1000] [--batch-size 32]
--       [--block-size 128] [--layers 4] [--heads 4] [--embed 128]
--       [--dropout 0] [--lr 0.001] [--min-lr 0.0001] [--warmup 50]
--       [--schedule cosine|constant] [--weight-decay 0.1] [--grad-clip 1]
--       [--eval-every 100] [--eval-iters 20] [--checkpoint char_gpt.ckpt]
--       [--resume] [--seed 0] [--threads N] [--untied] [--data FILE]
--       [--time-limit SECONDS] [--sample N] [--prompt TEXT]
--       [--temperature 0.8] [--top-k 20] [--compile] [--device cpu|cuda]
--       [--amp none|bf16|fp16]
--
-- The corpus is every plain fortune file in /usr/share/games/fortunes
-- (Debian's fortunes package; .dat/.u8 index files and subdirectories are
-- skipped) or --data FILE. Characters are bytes; the vocabulary is the set
-- of bytes that occur. The first 90% is the training split, the rest the
-- validation split. Training batches are random contiguous blocks (torch's
-- RNG); the validation loss is the mean over --eval-iters fixed batches of
-- evenly spaced blocks, so runs (and the PyTorch peer,
-- bench/peers/train_char_gpt.py) are measured on the same tokens.
-- The learning rate warms up linearly for --warmup steps, then follows a
-- cosine from --lr down to --min-lr at --steps (or stays at --lr with
-- --schedule constant). AdamW decays every parameter by --weight-decay.
-- --resume takes the architecture, vocabulary, step and RNG state from the
-- checkpoint (so --seed has no effect then).
-- --time-limit stops training after that many seconds (then evaluates,
-- saves and samples). Run by `moontorch sweep`, it logs train_loss (and lr)
-- ten times per --eval-every steps and val_loss at each evaluation through
-- torch.experiment.log. --sample N (with --steps 0 and --resume: sample only)
-- prints N generated characters after --prompt (default a newline).
-- --device cuda trains on the GPU (the corpus stays on the host; each batch
-- is copied up). --amp bf16 or fp16 runs the forward under torch.autocast
-- on the model's device (fp16 with a GradScaler); parameters, optimizer
-- state and the loss stay float32.
local torch = require "torch"
local nn = require "torch.nn"
local F = require "torch.nn.functional"
local optim = require "torch.optim"
local experiment = require "torch.experiment"

local DEFAULT_DIR = "/usr/share/games/fortunes"

package.path = (debug.getinfo(1, "S").source:match("^@(.*)/") or ".") .. "/?.lua;" .. package.path -- train_options.lua
local options = require "train_options"

local function parse(argv)
  local o = {steps = 1000, batch_size = 32, block_size = 128, layers = 4, heads = 4, embed = 128, dropout = 0.0,
    lr = 1e-3, min_lr = 1e-4, warmup = 50, schedule = "cosine", weight_decay = 0.1, grad_clip = 1.0,
    eval_every = 100, eval_iters = 20, checkpoint = "char_gpt.ckpt", resume = false, seed = 0, threads = nil,
    untied = false, data = nil, time_limit = nil, sample = 0, prompt = "\n", temperature = 0.8, top_k = 20,
    compile = false, device = "cpu", amp = "none"}
  local numeric = {steps = "int", batch_size = "int", block_size = "int", layers = "int", heads = "int",
    embed = "int", dropout = "num", lr = "num", min_lr = "num", warmup = "int", weight_decay = "num",
    grad_clip = "num", eval_every = "int", eval_iters = "int", seed = "int", threads = "int", time_limit = "num",
    sample = "int", temperature = "num", top_k = "int"}
  local flags = {resume = true, untied = true, compile = true}
  local strings = {schedule = true, checkpoint = true, data = true, prompt = true, device = true, amp = true}
  options.parse(argv, o, numeric, flags, strings)
  for _, k in ipairs{"batch_size", "block_size", "layers", "heads", "embed", "eval_every", "eval_iters"} do
    if o[k] < 1 then error("--" .. k:gsub("_", "-") .. " must be at least 1, got " .. o[k], 0) end
  end
  if o.steps < 0 or o.sample < 0 or o.warmup < 0 then error("--steps, --warmup and --sample must not be negative", 0) end
  if o.embed % o.heads ~= 0 then
    error(("--embed (%d) must be divisible by --heads (%d)"):format(o.embed, o.heads), 0)
  end
  if o.schedule ~= "cosine" and o.schedule ~= "constant" then
    error("--schedule must be cosine or constant, got '" .. o.schedule .. "'", 0)
  end
  if o.temperature <= 0 then error("--temperature must be positive, got " .. o.temperature, 0) end
  if o.top_k < 0 then error("--top-k must be 0 (off) or positive, got " .. o.top_k, 0) end
  if o.dropout < 0 or o.dropout >= 1 then error("--dropout must be in [0, 1), got " .. o.dropout, 0) end
  options.check_device(o)
  if o.amp ~= "none" and o.amp ~= "bf16" and o.amp ~= "fp16" then
    error("--amp must be none, bf16 or fp16, got '" .. o.amp .. "'", 0)
  end
  return o
end

------------------------------------------------------------------------
-- data
------------------------------------------------------------------------

-- The plain fortune files of dir, sorted (no index files, no subdirectories).
local function fortune_files(dir)
  local p = io.popen(("find '%s' -maxdepth 1 -type f 2>/dev/null | sort"):format(dir))
  local files = {}
  for f in p:lines() do
    if not f:match("%.dat$") and not f:match("%.u8$") then files[#files + 1] = f end
  end
  p:close()
  if #files == 0 then
    error(("no fortune files in %s (install Debian's fortunes package, or pass --data FILE)"):format(dir), 0)
  end
  return files
end

local function read_text(o)
  local files = o.data and {o.data} or fortune_files(DEFAULT_DIR)
  local parts = {}
  for _, f in ipairs(files) do
    local h, err = io.open(f, "rb")
    if not h then error("cannot read " .. f .. ": " .. tostring(err), 0) end
    parts[#parts + 1] = h:read("a")
    h:close()
  end
  return table.concat(parts), (o.data or DEFAULT_DIR), #files
end

-- The bytes of s as a 1-D int64 tensor.
local function bytes_tensor(s)
  local chunks, CH = {}, 1 << 15
  for i = 1, #s, CH do
    chunks[#chunks + 1] = torch.tensor({s:byte(i, math.min(i + CH - 1, #s))}, {dtype = torch.int64})
  end
  return torch.cat(chunks)
end

-- Vocabulary: the sorted byte values present. Returns the token ids
-- (1-based), the list of byte values and a 256-entry byte -> id table.
local function encode(text, vocab)
  local raw = bytes_tensor(text)
  if not vocab then
    local seen = torch.zeros(256, {dtype = torch.int64})
    seen:index_fill_(1, raw + 1, 1)
    vocab = {}
    for b = 0, 255 do if seen[b + 1]:item() == 1 then vocab[#vocab + 1] = b end end
  end
  local lut = torch.zeros(256, {dtype = torch.int64})
  for id, b in ipairs(vocab) do lut[b + 1] = id end
  local ids = lut:index_select(1, raw + 1)
  if ids:eq(0):any():item() then error("the text has characters outside the checkpoint's vocabulary", 0) end
  return ids, vocab, lut
end

-- x, y (B x T): blocks of the split starting at 1-based offsets `starts`.
local arange_cache = {}
local function blocks(split, starts, T)
  local ar = arange_cache[T] or torch.arange(0, T + 1, {dtype = torch.int64})
  arange_cache[T] = ar
  local idx = starts:view(-1, 1) + ar:view(1, -1)
  local b = split:index_select(1, idx:reshape(-1)):view(starts:size(1), T + 1)
  return b:narrow(2, 1, T), b:narrow(2, 2, T)
end

local function random_batch(split, B, T)
  return blocks(split, torch.randint(1, split:size(1) - T + 1, {B}, {dtype = torch.int64}), T)
end

-- The fixed validation batches: n*B evenly spaced blocks.
local function eval_starts(split, n, B, T)
  local total, last = n * B, split:size(1) - T
  local s = {}
  for i = 0, total - 1 do s[i + 1] = 1 + (i * (last - 1)) // math.max(total - 1, 1) end
  return torch.tensor(s, {dtype = torch.int64})
end

------------------------------------------------------------------------
-- model
------------------------------------------------------------------------

local Attention = nn.Module:extend("CausalSelfAttention")
function Attention:__init(E, H, dropout)
  self.c_attn = nn.Linear(E, 3 * E)
  self.c_proj = nn.Linear(E, E)
  self.resid_dropout = nn.Dropout(dropout)
  self.n_head, self.n_embd = H, E
end
-- x: B x T x E. With cache = {k, v} (B x H x t x hd each, or empty), the new
-- keys/values are appended and the queries attend to all cached positions
-- (x holds the positions after them); without, plain causal attention.
function Attention:forward(x, cache)
  local B, T, E = x:size(1), x:size(2), x:size(3)
  local H = self.n_head
  -- one unbind (not three selects): its backward takes dq, dk, dv as the
  -- fused attention writes them, into one (B, T, 3, H, hd) buffer, unchanged
  local q, k, v = table.unpack(self.c_attn(x):view(B, T, 3, H, E // H):permute(3, 1, 4, 2, 5):unbind(1))
  local causal = true
  if cache then
    if cache.k then
      k, v = torch.cat({cache.k, k}, 3), torch.cat({cache.v, v}, 3)
      causal = T > 1
      if causal then error("CausalSelfAttention: feed one token at a time after the prompt", 2) end
    end
    cache.k, cache.v = k, v
  end
  local y = F.scaled_dot_product_attention(q, k, v, {is_causal = causal})
  return self.resid_dropout(self.c_proj(y:transpose(2, 3):reshape(B, T, E)))
end

local MLP = nn.Module:extend("MLP")
function MLP:__init(E, dropout)
  self.c_fc = nn.Linear(E, 4 * E)
  self.c_proj = nn.Linear(4 * E, E)
  self.dropout = nn.Dropout(dropout)
end
function MLP:forward(x) return self.dropout(self.c_proj(F.gelu(self.c_fc(x)))) end

local Block = nn.Module:extend("Block")
function Block:__init(E, H, dropout)
  self.ln_1 = nn.LayerNorm(E)
  self.attn = Attention(E, H, dropout)
  self.ln_2 = nn.LayerNorm(E)
  self.mlp = MLP(E, dropout)
end
function Block:forward(x, cache)
  x = x + self.attn(self.ln_1(x), cache)
  return x + self.mlp(self.ln_2(x))
end

local GPT = nn.Module:extend("GPT")
-- GPT{vocab_size, block_size, n_layer, n_head, n_embd, dropout, tied}
function GPT:__init(c)
  self.config = c
  self.wte = nn.Embedding(c.vocab_size, c.n_embd)
  self.wpe = nn.Embedding(c.block_size, c.n_embd)
  self.drop = nn.Dropout(c.dropout)
  local blocks_ = {}
  for i = 1, c.n_layer do blocks_[i] = Block(c.n_embd, c.n_head, c.dropout) end
  self.h = nn.ModuleList(blocks_)
  self.ln_f = nn.LayerNorm(c.n_embd)
  -- positions 1..block_size, moved with the model (not saved); forward takes
  -- a slice, so a compiled step reads it like a parameter
  self:register_buffer("pos_ids", torch.arange(1, c.block_size + 1, {dtype = torch.int64}), false)
  if not c.tied then self.lm_head = nn.Linear(c.n_embd, c.vocab_size, {bias = false}) end
  -- GPT-2's initialisation: N(0, 0.02), residual projections scaled by
  -- 1/sqrt(2 n_layer), zero biases
  torch.no_grad(function()
    for name, p in self:named_parameters() do
      if name:match("bias$") then p:zero_()
      elseif name:match("c_proj%.weight$") then p:normal_(0, 0.02 / math.sqrt(2 * c.n_layer))
      elseif not name:match("ln_") then p:normal_(0, 0.02) end
    end
  end)
end
-- idx: B x T token ids (1-based); pos0: the position of idx's first token
-- (0-based, for cached decoding); caches: one table per block, or nil.
-- Returns logits B x T x V.
function GPT:forward(idx, pos0, caches)
  local T = idx:size(2)
  pos0 = pos0 or 0
  if pos0 + T > self.config.block_size then
    error(("GPT: sequence of %d positions exceeds the block size %d"):format(pos0 + T, self.config.block_size), 2)
  end
  local pos = self.pos_ids:narrow(1, pos0 + 1, T)
  local x = self.drop(self.wte(idx) + self.wpe(pos))
  for i, b in ipairs(self.h) do x = b(x, caches and caches[i]) end
  x = self.ln_f(x)
  return F.linear(x, self.lm_head and self.lm_head.weight or self.wte.weight)
end

-- amp: nil, or {device_type, dtype} to run the forward under torch.autocast
local function loss_of(model, x, y, amp)
  local ac <close> = amp and torch.autocast(amp[1], amp[2]) or nil
  local logits = model(x)
  local V = logits:size(3)
  return F.cross_entropy(logits:view(-1, V), y:reshape(-1))
end

------------------------------------------------------------------------
-- sampling with a key/value cache
------------------------------------------------------------------------

local function pick(logits, temperature, top_k)
  logits = logits / temperature
  if top_k > 0 and top_k < logits:size(1) then
    local v = logits:topk(top_k)
    logits = logits:masked_fill(logits:lt(v[top_k]), -math.huge)
  end
  return torch.multinomial(logits:softmax(1), 1):item()
end

-- Generates n tokens after the prompt ids (a Lua list). Each step feeds only
-- the new token and attends to the cached keys and values; when the cache
-- reaches the block size it is rebuilt from the last block_size/2 tokens.
local function generate(model, prompt, n, temperature, top_k)
  local bs = model.config.block_size
  local ids = {table.unpack(prompt)}
  local out = {}
  model:eval()
  local g <close> = torch.no_grad()
  local dev = model.wte.weight.device
  local caches, pos, logits
  local function prefill()
    local ctx = {table.unpack(ids, math.max(1, #ids - bs // 2 + 1))}
    caches = {}
    for i = 1, #model.h do caches[i] = {} end
    logits = model(torch.tensor({ctx}, {dtype = torch.int64, device = dev}), 0, caches)
    pos = #ctx
    return logits[1][-1]
  end
  local last = prefill()
  for _ = 1, n do
    local id = pick(last, temperature, top_k)
    ids[#ids + 1], out[#out + 1] = id, id
    if pos >= bs then
      last = prefill()
    else
      last = model(torch.tensor({{id}}, {dtype = torch.int64, device = dev}), pos, caches)[1][1]
      pos = pos + 1
    end
  end
  model:train()
  return out
end

------------------------------------------------------------------------
-- training
------------------------------------------------------------------------

local tty = os.getenv("TERM") and os.execute("test -t 1") or false
local function fmt_time(s)
  if s >= 3600 then return ("%dh%02dm"):format(s // 3600, math.floor(s % 3600 / 60)) end
  if s >= 60 then return ("%dm%02ds"):format(s // 60, math.floor(s % 60)) end
  return ("%.0fs"):format(s)
end
local function progress(step, steps, loss, rate, eta, force)
  local frac = steps > 0 and step / steps or 1
  local w = 30
  local bar = string.rep("=", math.floor(frac * w)) .. string.rep(" ", w - math.floor(frac * w))
  local line = ("step %d/%d [%s] %5.1f%%  loss %.4f  %7.0f tok/s  ETA %s"):format(step, steps, bar, 100 * frac, loss,
    rate, fmt_time(eta))
  if tty then io.write("\r", line, "   ", force and "\n" or ""); io.flush()
  elseif force then print(line) end
end

local function lr_at(o, step)
  if step < o.warmup then return o.lr * (step + 1) / o.warmup end
  if o.schedule == "constant" then return o.lr end
  local t = math.min(1, (step - o.warmup) / math.max(1, o.steps - o.warmup))
  return o.min_lr + 0.5 * (o.lr - o.min_lr) * (1 + math.cos(math.pi * t))
end

local function evaluate(model, val, starts, B, T, amp)
  model:eval()
  local total, n = 0, 0
  local dev = model.wte.weight.device
  torch.no_grad(function()
    for i = 1, starts:size(1), B do
      local x, y = blocks(val, starts:narrow(1, i, math.min(B, starts:size(1) - i + 1)), T)
      total = total + loss_of(model, x:to(dev), y:to(dev), amp):item()
      n = n + 1
    end
  end)
  model:train()
  return total / n
end

local function decode(ids, vocab)
  local bytes = {}
  for i, id in ipairs(ids) do bytes[i] = string.char(vocab[id]) end
  return table.concat(bytes)
end

local function main(argv)
  local o = parse(argv)
  if o.threads then torch.set_num_threads(o.threads) end
  torch.manual_seed(o.seed)
  local ck
  if o.resume then
    local ok, r = pcall(torch.load, o.checkpoint)
    if not ok then error("--resume: cannot load " .. o.checkpoint .. ": " .. tostring(r), 0) end
    ck = r
    -- the architecture comes from the checkpoint
    for _, k in ipairs{"block_size", "layers", "heads", "embed", "untied"} do o[k] = ck.options[k] end
  end
  local text, source, nfiles = read_text(o)
  local ids, vocab = encode(text, ck and ck.vocab:totable() or nil)
  local n = ids:size(1)
  local ntrain = math.floor(n * 0.9)
  if ntrain <= o.block_size + 1 or n - ntrain <= o.block_size + 1 then
    error(("the text is too short (%d characters) for --block-size %d: each split needs more than a block"):format(
          n, o.block_size), 0)
  end
  local train, val = ids:narrow(1, 1, ntrain), ids:narrow(1, ntrain + 1, n - ntrain)
  local model = GPT{vocab_size = #vocab, block_size = o.block_size, n_layer = o.layers, n_head = o.heads,
                    n_embd = o.embed, dropout = o.dropout, tied = not o.untied}
  model:to(o.device)
  local amp = o.amp ~= "none" and {o.device:match("^%a+"), o.amp == "bf16" and torch.bfloat16 or torch.float16}
    or nil
  local scaler = o.amp == "fp16" and torch.amp.GradScaler(o.device:match("^%a+")) or nil
  local opt = optim.AdamW(model:parameters(), {lr = o.lr, betas = {0.9, 0.99}, weight_decay = o.weight_decay})
  local step = 0
  if ck then
    model:load_state_dict(ck.model)
    opt:load_state_dict(ck.optimizer)
    step = ck.step
    if ck.rng then torch.set_rng_state(ck.rng) end
    print(("resumed from %s at step %d (val loss %.4f)"):format(o.checkpoint, step, ck.val_loss or 0 / 0))
  end
  local nparams = 0
  for _, p in ipairs(model:parameters()) do nparams = nparams + p:numel() end
  print(("corpus %s (%d file%s): %d characters, vocabulary %d; train %d, val %d"):format(source, nfiles,
    nfiles == 1 and "" or "s", n, #vocab, ntrain, n - ntrain))
  print(("GPT: %d layers, %d heads, embed %d, block %d, %s head; %d parameters; batch %d; %s%s"):format(
    o.layers, o.heads, o.embed, o.block_size, o.untied and "untied" or "tied", nparams, o.batch_size,
    o.device == "cpu" and torch.get_num_threads() .. " threads" or "device " .. o.device,
    amp and ", autocast " .. o.amp or ""))
  local starts = eval_starts(val, o.eval_iters, o.batch_size, o.block_size)
  local tokens = o.batch_size * o.block_size
  local t0, t_train, trained, running = torch.time(), 0, 0, nil
  local last_val = ck and ck.val_loss
  local function checkpoint(vl)
    torch.save({model = model:state_dict(), optimizer = opt:state_dict(), step = step, val_loss = vl,
      vocab = torch.tensor(vocab, {dtype = torch.int64}), rng = torch.get_rng_state(),
      options = {block_size = o.block_size, layers = o.layers, heads = o.heads, embed = o.embed,
                 untied = o.untied}}, o.checkpoint)
  end
  -- one training step: forward, backward, clipping, AdamW; --compile runs it
  -- as one graph (the learning rate set on the groups below is a runtime
  -- scalar of that graph, so the schedule needs no recompile)
  local function train_step(x, y)
    local loss = loss_of(model, x, y, amp)
    opt:zero_grad()
    if scaler then
      scaler:scale(loss):backward()
      if o.grad_clip > 0 then
        scaler:unscale_(opt)
        nn.utils.clip_grad_norm_(model:parameters(), o.grad_clip)
      end
      scaler:step(opt)
      scaler:update()
      return loss
    end
    loss:backward()
    if o.grad_clip > 0 then nn.utils.clip_grad_norm_(model:parameters(), o.grad_clip) end
    opt:step()
    return loss
  end
  local run_step = o.compile and torch.compile(train_step) or train_step
  local stopped = false
  while step < o.steps do
    local ts = torch.time()
    local lr = lr_at(o, step)
    for _, g in ipairs(opt.param_groups) do g.lr = lr end
    local x, y = random_batch(train, o.batch_size, o.block_size)
    local loss = run_step(x:to(o.device), y:to(o.device))
    step = step + 1
    local l = loss:item()
    running = running and 0.95 * running + 0.05 * l or l
    t_train, trained = t_train + (torch.time() - ts), trained + 1
    local rate = trained * tokens / t_train
    local eta = (o.steps - step) * t_train / trained
    if o.time_limit then eta = math.min(eta, math.max(0, o.time_limit - (torch.time() - t0))) end
    local timeout = o.time_limit and torch.time() - t0 >= o.time_limit
    local at_eval = step % o.eval_every == 0 or step == o.steps or timeout
    if not at_eval and step % math.max(1, o.eval_every // 10) == 0 then
      experiment.log{step = step, train_loss = running, lr = lr}
    end
    progress(step, o.steps, running, rate, eta, at_eval)
    if at_eval then
      last_val = evaluate(model, val, starts, o.batch_size, o.block_size, amp)
      experiment.log{step = step, train_loss = running, val_loss = last_val, lr = lr}
      print(("step %d: train loss %.4f, val loss %.4f, lr %.2e, %.0f tok/s, %s elapsed"):format(step, running,
        last_val, lr, rate, fmt_time(torch.time() - t0)))
      checkpoint(last_val)
    end
    if timeout then
      print(("time limit of %s reached after %d steps"):format(fmt_time(o.time_limit), step))
      stopped = true
      break
    end
  end
  if trained > 0 then
    print(("trained %d steps in %.1f s: %.0f tokens/s (training steps only), final val loss %.4f"):format(trained,
      t_train, trained * tokens / t_train, last_val))
  end
  if o.sample > 0 then
    local prompt_ids = {}
    local lut = {}
    for id, b in ipairs(vocab) do lut[b] = id end
    for i = 1, #o.prompt do
      local id = lut[o.prompt:byte(i)]
      if not id then error(("--prompt: character %q is not in the vocabulary"):format(o.prompt:sub(i, i)), 0) end
      prompt_ids[i] = id
    end
    if #prompt_ids == 0 then error("--prompt must not be empty", 0) end
    local ts = torch.time()
    local out = generate(model, prompt_ids, o.sample, o.temperature, o.top_k)
    local dt = torch.time() - ts
    print(("--- %d characters (temperature %g, top-k %d, %.0f chars/s) ---"):format(o.sample, o.temperature, o.top_k,
      o.sample / dt))
    io.write(o.prompt, decode(out, vocab), "\n")
    print("---")
  end
  return stopped
end

-- `loadfile(script)("--lib")` gives the pieces to tests instead of running
if ... == "--lib" then return {GPT = GPT, generate = generate, encode = encode, lr_at = lr_at} end

local ok, err = pcall(main, arg or {})
if not ok then
  io.stderr:write("train_char_gpt: ", tostring(err), "\n")
  os.exit(1)
end
