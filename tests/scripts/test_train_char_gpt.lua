-- tests/scripts/test_train_char_gpt.lua -- the char GPT as a user runs it:
-- a tiny run on a small text made here lowers the validation loss and writes
-- a checkpoint, --resume continues, --sample prints the requested number of
-- characters, --time-limit stops, bad options are clear errors; and the KV
-- cache gives the same logits as the full causal forward.
local exe = arg and arg[-1] or "build/moontorch"
local here = debug.getinfo(1, "S").source:match("^@(.*)/[^/]*$") or "tests/scripts"
local script = here .. "/../../scripts/train_char_gpt.lua"

local function run(args)
  local p = io.popen(("%s %s %s 2>&1"):format(exe, script, args))
  local out = p:read("a")
  local ok = p:close()
  return ok, out
end

-- a small text: sentences drawn from a few words with torch's RNG
local function make_text()
  local words = {"the", "cat", "sat", "on", "a", "mat", "and", "dog", "ran", "to", "big", "red", "house", "of", "it"}
  local g = torch.Generator():manual_seed(7)
  local parts = {}
  for i = 1, 1500 do
    parts[i] = words[torch.randint(1, #words + 1, {1}, {generator = g}):item()]
    if i % 9 == 0 then parts[i] = parts[i] .. ".\n" end
  end
  local path = os.tmpname()
  local f = io.open(path, "wb")
  f:write(table.concat(parts, " "))
  f:close()
  return path
end

local TINY = "--layers 1 --heads 2 --embed 16 --block-size 16 --batch-size 8 --lr 0.01 --warmup 0 --eval-iters 2 --threads 1"

test("a tiny run lowers the validation loss, checkpoints, resumes and samples", function()
  local text, ckpt = make_text(), os.tmpname()
  os.remove(ckpt)
  local ok, out = run(("%s --data %s --steps 40 --eval-every 10 --checkpoint %s"):format(TINY, text, ckpt))
  check(ok, out)
  check(out:find("corpus " .. text .. " (1 file)", 1, true), out)
  local v10 = tonumber(out:match("step 10: train loss [%d.]+, val loss ([%d.]+)"))
  local v40 = tonumber(out:match("step 40: train loss [%d.]+, val loss ([%d.]+)"))
  check(v10 and v40 and v40 < v10 - 0.2, "val loss from step 10 to 40: " .. tostring(v10) .. " -> " .. tostring(v40))
  check(out:find("tok/s", 1, true) and out:find("ETA", 1, true), "the progress line shows tok/s and ETA\n" .. out)
  local ck = torch.load(ckpt)
  check_eq(ck.step, 40)
  check_eq(ck.options.embed, 16)
  check_shape(ck.model["wte.weight"], {ck.vocab:size(1), 16})
  check(ck.model["lm_head.weight"] == nil, "the head is tied by default")

  ok, out = run(("--data %s --steps 50 --eval-every 10 --eval-iters 2 --lr 0.01 --threads 1 --checkpoint %s --resume")
                :format(text, ckpt))
  check(ok, out)
  check(out:find("resumed from " .. ckpt .. " at step 40", 1, true), out)
  check(out:find("step 50: train loss", 1, true) and not out:find("step 10:", 1, true), out)
  check_eq(torch.load(ckpt).step, 50)

  ok, out = run(("--data %s --steps 0 --resume --checkpoint %s --sample 60 --prompt 'the ' --top-k 5"):format(text,
                ckpt))
  check(ok, out)
  local s = out:match("chars/s%) %-%-%-\n(.*)\n%-%-%-\n$")
  check(s, "a sample between --- lines\n" .. out)
  check_eq(#s, 4 + 60)
  check_eq(s:sub(1, 4), "the ")
  os.remove(ckpt)

  ok, out = run(("%s --data %s --steps 100000 --time-limit 0.5 --eval-every 1000 --untied --checkpoint %s"):format(
                TINY, text, ckpt))
  check(ok, out)
  check(out:find("time limit of 0s reached after", 1, true) or out:find("time limit of 1s reached after", 1, true),
        out)
  check(torch.load(ckpt).model["lm_head.weight"] ~= nil, "--untied has its own head")
  os.remove(ckpt)
  os.remove(text)
end)

test("run as a sweep trial, it logs train_loss and lr, and val_loss at each evaluation", function()
  local text, dir = make_text(), os.tmpname()
  os.remove(dir)
  require("torch.experiment._proc").mkdir(dir)
  local p = io.popen(("MOONTORCH_TRIAL_DIR='%s' %s %s %s --data %s --steps 20 --eval-every 10 --checkpoint %s/c 2>&1")
    :format(dir, exe, script, TINY, text, dir))
  local out = p:read("a")
  check(p:close(), out)
  local rows = require("torch.experiment.runner").read_metrics(dir .. "/metrics.jsonl")
  check_eq(#rows, 20)
  check(rows[1].step == 1 and rows[1].train_loss > 0 and rows[1].lr > 0 and rows[1].val_loss == nil, "step 1")
  check(rows[10].val_loss > 0 and rows[20].val_loss > 0 and rows[20].step == 20, "evaluations")
  os.execute("rm -rf '" .. dir .. "'")
  os.remove(text)
end)

test("--compile trains the same model to the same losses (flash attention, layer norm, clipping as one graph)", function()
  local text, ckpt = make_text(), os.tmpname()
  local args = ("%s --data %s --steps 12 --eval-every 6 --checkpoint %s"):format(TINY, text, ckpt)
  local ok1, eager = run(args)
  local ok2, compiled = run(args .. " --compile")
  os.remove(text)
  os.remove(ckpt)
  check(ok1, eager)
  check(ok2, compiled)
  check(not compiled:find("running eagerly", 1, true), compiled)
  for _, s in ipairs({6, 12}) do
    local pat = "step " .. s .. ": train loss ([%d.]+), val loss ([%d.]+)"
    local te, ve = eager:match(pat)
    local tc, vc = compiled:match(pat)
    check(te and tc, eager .. compiled)
    check(math.abs(tonumber(ve) - tonumber(vc)) < 2e-3, ("step %d val loss %s eager, %s compiled"):format(s, ve, vc))
    check(math.abs(tonumber(te) - tonumber(tc)) < 2e-3, ("step %d train loss %s eager, %s compiled"):format(s, te, tc))
  end
end)

test("the KV cache gives the logits of the full causal forward", function()
  local lib = assert(loadfile(script))("--lib")
  torch.manual_seed(0)
  local m = lib.GPT{vocab_size = 11, block_size = 12, n_layer = 2, n_head = 2, n_embd = 8, dropout = 0, tied = true}
  m:eval()
  local ids = torch.randint(1, 12, {1, 9}, {dtype = torch.int64})
  torch.no_grad(function()
    local full = m(ids)
    local caches = {{}, {}}
    local pre = m(ids:narrow(2, 1, 4), 0, caches)
    check_close(pre, full:narrow(2, 1, 4), {atol = 1e-5, rtol = 1e-4})
    for t = 5, 9 do
      local step = m(ids:narrow(2, t, 1), t - 1, caches)
      check_close(step[1][1], full[1][t], {atol = 1e-5, rtol = 1e-4})
    end
    check_shape(caches[1].k, {1, 2, 9, 4})
  end)
  check_error(function() m(torch.ones(1, 13, {dtype = torch.int64})) end, "exceeds the block size 12")
end)

test("bad options and inputs are errors with a clear message", function()
  local text = make_text()
  local cases = {
    {"--heads 3 --embed 16", "--embed (16) must be divisible by --heads (3)"},
    {"--steps", "--steps needs a value"},
    {"--steps ten", "--steps needs a number, got 'ten'"},
    {"--lr 1e-3 --layers 1.5", "--layers needs an integer"},
    {"--schedule linear", "--schedule must be cosine or constant"},
    {"--top-k -1", "--top-k must be 0 (off) or positive"},
    {"--temperature 0", "--temperature must be positive"},
    {"--frobnicate 1", "unknown option --frobnicate"},
    {"--data /nonexistent/file.txt", "cannot read /nonexistent/file.txt"},
    {"--block-size 100000", "too short"},
    {"--resume --checkpoint /nonexistent/x.ckpt", "--resume: cannot load /nonexistent/x.ckpt"},
  }
  for _, c in ipairs(cases) do
    local args = c[1]
    if not args:find("--data", 1, true) then args = "--data " .. text .. " " .. args end
    local ok, out = run(args)
    check(not ok and out:find("train_char_gpt: ", 1, true) and out:find(c[2], 1, true),
          "for " .. c[1] .. ": " .. out)
  end
  os.remove(text)
end)
