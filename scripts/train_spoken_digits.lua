-- scripts/train_spoken_digits.lua -- trains a small CNN to recognize the ten
-- spoken digits ("zero" .. "nine") from log-mel or MFCC features, on voices
-- of the speech synthesizers Debian packages (espeak-ng and flite, several
-- voices, speeds and pitches), and tests it on voices it never heard.
--
--   moontorch scripts/train_spoken_digits.lua [--epochs 14] [--batch-size 64]
--       [--lr 0.003] [--features logmel|mfcc] [--holdout VOICES]
--       [--data DIR] [--eval-dir DIR] [--device cpu|cuda] [--compile]
--       [--threads N] [--workers 2] [--checkpoint PATH] [--resume]
--       [--seed 0] [--no-augment] [--limit N]
--
-- The data: --data DIR holds DIR/<voice>/<0-9>/<n>.wav (16 kHz mono); when
-- it is missing, the script makes it first with scripts/audio/
-- make_spoken_digits.lua (a few seconds; it is never in git). --holdout is a
-- comma-separated list of voices kept out of training: the held-out accuracy
-- is measured on them after each epoch (the default holds out one espeak-ng
-- voice and one flite voice). At the end the model is checked on a real
-- human voice: --eval-dir DIR takes recordings DIR/<digit>/*.wav (digit as a
-- word, "seven", or a number, "7") or DIR/<n>.wav (n = 0..9), at any sample
-- rate; the default is Debian's asterisk-core-sounds-en-wav (Allison's
-- telephone prompts, 8 kHz) when it is installed.
--
-- Training augments each clip: a speed change (SpeedPerturbation 0.85 to
-- 1.3: faster speech is also higher, which stands in for voices of other
-- sizes), a random shift inside the one-second window, a telephone band (a
-- round trip through 8 kHz) for one clip in four, white noise at a random
-- signal-to-noise ratio (AddNoise, 5-40 dB), and SpecAugment's frequency and
-- time masks on the features (--no-augment turns all of it off). Features are
-- computed on the training device, a batch at a time. --compile runs the
-- model's training step as one graph compiled by torch.compile.
local torch = require "torch"
package.path = (arg and arg[0] and arg[0]:match("^(.*)/") or ".") .. "/?.lua;" .. package.path -- train_progress.lua, train_options.lua
local progress = require("train_progress").show
local options = require "train_options"
local nn = require "torch.nn"
local optim = require "torch.optim"
local data = require "torch.utils.data"
local audio = require "torch.audio"
local T = audio.transforms
local F = audio.functional
local folder = require "torch.vision.datasets.folder"

local RATE, CLIP = 16000, 16000 -- 16 kHz, one-second windows
local DIGITS = {"zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"}
local ALLISON = "/usr/share/asterisk/sounds/en_US_f_Allison/digits"

local function default_data()
  local cache = os.getenv("XDG_CACHE_HOME") or ((os.getenv("HOME") or "/tmp") .. "/.cache")
  return cache .. "/moontorch/spoken_digits"
end

local function parse(argv)
  local o = {epochs = 14, batch_size = 64, lr = 3e-3, features = "logmel", holdout = "espeak_en-gb-scotland+f4,flite_slt",
    data = default_data(), eval_dir = ALLISON, device = "cpu", compile = false, threads = nil, workers = 2,
    checkpoint = "spoken_digits.ckpt", resume = false, seed = 0, no_augment = false, limit = nil}
  local numeric = {epochs = "int", batch_size = "int", lr = "num", threads = "int", workers = "int", seed = "int",
    limit = "int"}
  options.parse(argv, o, numeric, {compile = true, resume = true, no_augment = true})
  if o.features ~= "logmel" and o.features ~= "mfcc" then
    error("--features must be logmel or mfcc, got '" .. o.features .. "'", 0)
  end
  options.check_device(o)
  return o
end

-- the voices under root (its subfolders), sorted
local function voices(root)
  return (folder.find_classes(root))
end

-- {path, digit} of every clip of the voices named in keep (a set)
local function clips(root, keep)
  local out = {}
  local to_idx = {}
  for i = 1, 10 do to_idx[tostring(i - 1)] = i end
  for _, v in ipairs(voices(root)) do
    if keep[v] then
      for _, s in ipairs(folder.make_dataset(root .. "/" .. v, to_idx, {".wav"})) do out[#out + 1] = s end
    end
  end
  return out
end

-- A dataset of one-second clips: {waveform [CLIP], digit}. With augment,
-- each draw changes the speed, shifts the word in the window and adds noise.
local Clips = data.Dataset:extend("SpokenDigitClips")

function Clips:__init(samples, augment)
  self.samples, self.augment = samples, augment
  if augment then self.speed = T.SpeedPerturbation(RATE, {0.85, 0.9, 1.0, 1.1, 1.2, 1.3}) end
end

function Clips:__len() return #self.samples end

-- wav [n] placed in a CLIP-long window: centered, or at a random offset
-- when augmenting; a longer clip is cut around its middle
local function window(wav, random)
  local n = wav:size(1)
  local out = torch.zeros(CLIP)
  if n >= CLIP then
    local s = (n - CLIP) // 2
    return wav:narrow(1, s + 1, CLIP):clone()
  end
  local off = random and torch.randint(0, CLIP - n + 1, {1}):item() or (CLIP - n) // 2
  out:narrow(1, off + 1, n):copy_(wav)
  return out
end

function Clips:__getitem(i)
  local path, digit = self.samples[i][1], self.samples[i][2]
  local wav, sr = audio.load(path)
  wav = wav:mean(1) -- mono [time]
  if sr ~= RATE then wav = F.resample(wav, sr, RATE) end
  if self.augment then
    wav = self.speed(wav)
    if torch.rand(1):item() < 0.25 then wav = F.resample(F.resample(wav, RATE, 8000), 8000, RATE) end
  end
  wav = window(wav, self.augment)
  if self.augment then
    local snr = torch.empty(1):uniform_(5, 40)
    wav = F.add_noise(wav:unsqueeze(1), torch.randn(1, CLIP), snr):squeeze(1)
  end
  return {wav, digit}
end

-- features [B, 1, n_mels|n_mfcc, frames] of waveforms [B, CLIP]
local function featurizer(kind, device)
  local mel = {sample_rate = RATE, n_fft = 400, hop_length = 160, n_mels = 64}
  if kind == "mfcc" then
    local mfcc = T.MFCC{sample_rate = RATE, n_mfcc = 40, melkwargs = mel}:to(device)
    return function(w) return mfcc(w):unsqueeze(2) end
  end
  local spec = T.MelSpectrogram(mel):to(device)
  local db = T.AmplitudeToDB{stype = "power", top_db = 80}
  return function(w) return db(spec(w)):unsqueeze(2) end
end

local function build(in_rows)
  local function block(cin, cout)
    return nn.Sequential(nn.Conv2d(cin, cout, 3, {padding = 1, bias = false}), nn.BatchNorm2d(cout), nn.ReLU())
  end
  return nn.Sequential(
    nn.BatchNorm2d(1), -- features arrive in dB: a learned scale and shift
    block(1, 32), nn.MaxPool2d(2), block(32, 64), nn.MaxPool2d(2), block(64, 128), nn.MaxPool2d(2),
    block(128, 128), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Dropout(0.2), nn.Linear(128, 10))
end

-- accuracy over a loader of {waveforms, digits}
local function evaluate(model, loader, features, device)
  model:eval()
  local correct, n = 0, 0
  torch.no_grad(function()
    for b in loader:iter() do
      local logits = model(features(b[1]:to(device)))
      correct = correct + logits:argmax(2):eq(b[2]:to(device)):sum():item()
      n = n + b[2]:numel()
    end
  end)
  model:train()
  return n > 0 and correct / n or 0, n
end

-- {path, digit} of the recordings under dir: dir/<digit word or number>/*
-- or dir/<0-9>.<ext>; nil when dir is the default and absent
local function real_voice(dir)
  local exts = {".wav", ".flac", ".ogg", ".mp3"}
  local ok, classes = pcall(folder.find_classes, dir)
  if not ok and not tostring(classes):find("no class folder") then
    if dir == ALLISON then return nil end
    error("--eval-dir: " .. tostring(classes), 0)
  end
  local to_idx = {}
  for i, d in ipairs(DIGITS) do to_idx[d], to_idx[tostring(i - 1)] = i, i end
  local keep = {}
  for _, c in ipairs(ok and classes or {}) do if to_idx[c] then keep[c] = to_idx[c] end end
  if next(keep) then return folder.make_dataset(dir, keep, exts) end
  local out = {}
  for n = 0, 9 do
    for _, e in ipairs(exts) do
      local p = dir .. "/" .. n .. e
      local f = io.open(p)
      if f then f:close() out[#out + 1] = {p, n + 1} break end
    end
  end
  if #out == 0 then error("--eval-dir: no digit recordings in " .. dir, 0) end
  return out
end

local function ensure_data(dir)
  local f = io.open(dir .. "/manifest.lua")
  if f then f:close() return end
  print("spoken digits: no data in " .. dir .. "; synthesizing it (scripts/audio/make_spoken_digits.lua)")
  local script = (arg[0]:match("^(.*)/") or ".") .. "/audio/make_spoken_digits.lua"
  local ok = os.execute(("%q %q --root %q"):format(arg[-1] or "moontorch", script, dir))
  if not ok then error("could not make the spoken digits in " .. dir, 0) end
end

local function main(argv)
  local o = parse(argv)
  if o.threads then torch.set_num_threads(o.threads) end
  torch.manual_seed(o.seed)
  ensure_data(o.data)
  local held, train_voices = {}, {}
  for v in o.holdout:gmatch("[^,]+") do held[v] = true end
  local all = voices(o.data)
  for _, v in ipairs(all) do if not held[v] then train_voices[v] = true end end
  for v in pairs(held) do
    local found = false
    for _, w in ipairs(all) do found = found or w == v end
    if not found then error("--holdout: no voice '" .. v .. "' in " .. o.data .. " (voices: " .. table.concat(all, ", ") .. ")", 0) end
  end
  local train_samples, test_samples = clips(o.data, train_voices), clips(o.data, held)
  if o.limit then
    local s = {}
    for i = 1, math.min(o.limit, #train_samples) do s[i] = train_samples[i] end
    train_samples = s
  end
  local train_set, test_set = Clips(train_samples, not o.no_augment), Clips(test_samples, false)
  local train = data.DataLoader(train_set, {batch_size = o.batch_size, shuffle = true, num_workers = o.workers,
    drop_last = true})
  local test = data.DataLoader(test_set, {batch_size = 256, num_workers = o.workers})
  local features = featurizer(o.features, o.device)
  local fmask, tmask = T.FrequencyMasking(8), T.TimeMasking(12)
  local model = build():to(o.device)
  local opt = optim.AdamW(model:parameters(), {lr = o.lr, weight_decay = 1e-2})
  local sched = optim.lr_scheduler.OneCycleLR(opt, o.lr, {total_steps = o.epochs * #train})
  local loss_fn = nn.CrossEntropyLoss{label_smoothing = 0.05}
  local first_epoch = 1
  if o.resume then
    local ck = torch.load(o.checkpoint)
    model:load_state_dict(ck.model)
    opt:load_state_dict(ck.optimizer)
    -- the one-cycle schedule is laid out over this run's --epochs, which
    -- may be more than the first run's: replay its steps rather than load it
    for _ = 1, ck.epoch * #train do sched:step() end
    first_epoch = ck.epoch + 1
    print(("resumed from %s after epoch %d (held-out accuracy %.2f%%)"):format(o.checkpoint, ck.epoch, 100 * ck.accuracy))
  end
  local nparams = 0
  for _, p in ipairs(model:parameters()) do nparams = nparams + p:numel() end
  local hl = {}
  for v in pairs(held) do hl[#hl + 1] = v end
  table.sort(hl)
  print(("spoken digits from %s: %d training clips (%d voices), %d held-out clips (%s); %s features, %d parameters, device %s"):format(
    o.data, #train_set, #all - #hl, #test_set, table.concat(hl, ", "), o.features, nparams, o.device))
  local function train_step(x, y)
    local loss = loss_fn(model(x), y)
    opt:zero_grad()
    loss:backward()
    opt:step()
    return loss
  end
  local run_step = o.compile and torch.compile(train_step) or train_step
  local acc = 0
  for epoch = first_epoch, o.epochs do
    local t0, seen, total, running, last = torch.time(), 0, #train * o.batch_size, nil, -1
    for b in train:iter() do
      local x = torch.no_grad(function()
        local f = features(b[1]:to(o.device))
        if not o.no_augment then f = tmask(fmask(f)) end
        return f
      end)
      local loss = run_step(x, b[2]:to(o.device))
      sched:step()
      local l = loss:item()
      running = running and 0.95 * running + 0.05 * l or l
      seen = seen + b[2]:numel()
      last = progress(epoch, o.epochs, seen, total, running, seen / (torch.time() - t0), "clips/s", last)
    end
    acc = evaluate(model, test, features, o.device)
    local secs = torch.time() - t0
    print(("epoch %d: held-out voices accuracy %.2f%%, %.1f s"):format(epoch, 100 * acc, secs))
    torch.save({model = model:state_dict(), optimizer = opt:state_dict(),
      epoch = epoch, accuracy = acc, features = o.features}, o.checkpoint)
  end
  local real = real_voice(o.eval_dir)
  if real then
    local racc, n = evaluate(model, data.DataLoader(Clips(real, false), {batch_size = 256}), features, o.device)
    print(("real voice %s: accuracy %.2f%% on %d recordings"):format(o.eval_dir, 100 * racc, n))
  end
end

local ok, err = pcall(main, arg or {})
if not ok then
  io.stderr:write("train_spoken_digits: ", tostring(err), "\n")
  os.exit(1)
end
