-- tests/domains/audio/test_datasets.lua -- torch.audio.datasets over tiny
-- fake layouts made here with real speech (espeak-ng): YESNO and
-- SPEECHCOMMANDS against torchaudio 0.13's own datasets over the same
-- folders (sample order, labels, speaker ids, utterance numbers, every
-- subset, waveforms), AudioFolder's classes and order, DataLoader with
-- workers, and the errors of missing folders and bad options.
cpu_only("file datasets")
if not os.execute("command -v espeak-ng >/dev/null 2>&1") then -- scripts/setup.sh installs it; a bare GPU host lacks it
  io.write("note: espeak-ng is not installed here; audio dataset tests skipped\n")
  return
end

local D = torch.audio.datasets
local data = torch.utils.data

local root = os.tmpname()
os.remove(root)
local function sh(cmd) assert(os.execute(cmd), cmd) end
sh("mkdir -p '" .. root .. "'")
local HAVE_PY = io.open("/usr/bin/python3") ~= nil

-- espeak-ng speaking `words` into path (16 kHz mono through sox, as
-- Speech Commands' files are, when rate is given)
local function speak(path, words, rate)
  sh(("mkdir -p \"$(dirname '%s')\""):format(path))
  if rate then
    sh(("espeak-ng -w '%s.tmp.wav' '%s' && sox '%s.tmp.wav' -r %d '%s' && rm '%s.tmp.wav'"):format(path, words, path,
      rate, path, path))
  else
    sh(("espeak-ng -w '%s' '%s'"):format(path, words))
  end
end

-- runs python code (torchaudio) and returns the Lua table it prints
local function python(code)
  local p = io.popen("cd /tmp && /usr/bin/python3 -c '" .. code .. "' 2>&1")
  local out = p:read("a")
  p:close()
  local chunk, err = load(out, "python", "t", {})
  assert(chunk, tostring(err) .. "\n" .. out:sub(1, 1500))
  return chunk()
end

-- YESNO ------------------------------------------------------------------
local YN = {"0_0_1_1_0_1_1_0", "1_1_1_1_0_0_0_0", "0_1_0_1_0_1_0_1"}
for _, id in ipairs(YN) do
  speak(root .. "/waves_yesno/" .. id .. ".wav", (id:gsub("_", " "):gsub("0", "no"):gsub("1", "yes")))
end
sh("touch '" .. root .. "/waves_yesno/README'")

test("YESNO: sorted files, {waveform, sample_rate, labels} as torchaudio's YESNO gives them", function()
  local ds = D.YESNO(root)
  check_eq(#ds, 3)
  local ids = {table.unpack(YN)}
  table.sort(ids)
  for n, id in ipairs(ids) do
    local s = ds[n]
    local labels = {}
    for d in id:gmatch("%d") do labels[#labels + 1] = tonumber(d) end
    check_eq(s[3], labels, id)
    check_eq(s[2], 22050)
    check(torch.equal(s[1], torch.audio.load(root .. "/waves_yesno/" .. id .. ".wav")), id .. " waveform")
  end
  if not HAVE_PY then return print("  (no /usr/bin/python3: torchaudio cross-check skipped)") end
  local r = python(([[
import torchaudio, warnings
warnings.filterwarnings("ignore")
ds = torchaudio.datasets.YESNO("%s")
print("return {")
for w, sr, labels in ds:
    print("{%%d, %%d, %%.9g, {%%s}}," %% (sr, w.shape[1], w.abs().sum().item(), ",".join(map(str, labels))))
print("}")]]):format(root))
  check_eq(#r, #ds)
  for n, want in ipairs(r) do
    local s = ds[n]
    check_eq({s[2], s[1].shape[2], s[3]}, {want[1], want[2], want[4]}, "sample " .. n)
    check_close(s[1]:abs():sum():item(), want[3], {rtol = 1e-5})
  end
end)

-- SPEECHCOMMANDS -----------------------------------------------------------
local SC = root .. "/SpeechCommands/speech_commands_v0.02"
local WORDS = {"yes", "no", "up", "down"}
local SPEAKERS = {"0a7c2a8d", "1b4c9b89", "c50f55b8", "ffd2ba2f"}
for w, word in ipairs(WORDS) do
  speak(SC .. "/" .. word .. "/" .. SPEAKERS[1] .. "_nohash_0.wav", word, 16000)
  local first = SC .. "/" .. word .. "/" .. SPEAKERS[1] .. "_nohash_0.wav"
  for s = 1, #SPEAKERS do
    for u = 0, (s + w) % 3 do
      local p = ("%s/%s/%s_nohash_%d.wav"):format(SC, word, SPEAKERS[s], u)
      if p ~= first then sh(("sox '%s' '%s' speed %.2f rate 16000"):format(first, p, 0.9 + 0.05 * (s + u))) end
    end
  end
end
speak(SC .. "/_background_noise_/white_noise_nohash_0.wav", "noise", 16000)
sh("touch '" .. SC .. "/LICENSE'")
local function write_list(name, lines)
  local f = assert(io.open(SC .. "/" .. name, "w"))
  f:write(table.concat(lines, "\n"), "\n")
  f:close()
end
write_list("validation_list.txt", {"up/" .. SPEAKERS[2] .. "_nohash_0.wav", "yes/" .. SPEAKERS[3] .. "_nohash_0.wav"})
write_list("testing_list.txt", {"no/" .. SPEAKERS[4] .. "_nohash_0.wav", "down/" .. SPEAKERS[1] .. "_nohash_0.wav",
                                "yes/" .. SPEAKERS[1] .. "_nohash_1.wav"})

test("SPEECHCOMMANDS: every subset's order and metadata equal torchaudio's over the same folder", function()
  local mine = {}
  for _, subset in ipairs{false, "training", "validation", "testing"} do
    local ds = D.SPEECHCOMMANDS(root, {subset = subset})
    local list = {}
    for n = 1, #ds do list[n] = ds:get_metadata(n) end
    mine[tostring(subset)] = list
  end
  check_eq(#mine["false"], #mine.training + #mine.validation + #mine.testing, "the subsets split the whole")
  check_eq(#mine.validation, 2)
  check_eq(#mine.testing, 3)
  for _, m in ipairs(mine["false"]) do check(not m[1]:find("_background_noise_"), "background noise left out") end
  if not HAVE_PY then return print("  (no /usr/bin/python3: torchaudio cross-check skipped)") end
  local r = python(([[
import torchaudio, warnings
warnings.filterwarnings("ignore")
print("return {")
for subset in [None, "training", "validation", "testing"]:
    ds = torchaudio.datasets.SPEECHCOMMANDS("%s", subset=subset)
    print("[%%r] = {" %% ("false" if subset is None else subset))
    for n in range(len(ds)):
        p, sr, label, spk, utt = ds.get_metadata(n)
        print("{%%r, %%d, %%r, %%r, %%d}," %% (p, sr, label, spk, utt))
    print("},")
print("}")]]):format(root))
  for _, subset in ipairs{"false", "training", "validation", "testing"} do
    check_eq(mine[subset], r[subset], subset)
  end
end)

test("SPEECHCOMMANDS: samples are {waveform, sample_rate, label, speaker_id, utterance_number}", function()
  local ds = D.SPEECHCOMMANDS{root, subset = "testing"}
  local s = ds[3]
  check_eq({s[2], s[3], s[4], s[5]}, {16000, "yes", SPEAKERS[1], 1})
  check(torch.equal(s[1], torch.audio.load(SC .. "/yes/" .. SPEAKERS[1] .. "_nohash_1.wav")), "waveform")
  check_eq(s[1].shape[1], 1)
end)

-- AudioFolder ------------------------------------------------------------
local AF = root .. "/af"
speak(AF .. "/nine/a/x1.wav", "nine")
speak(AF .. "/nine/b.wav", "nine nine")
speak(AF .. "/one/z.wav", "one")
sh(("sox '%s/one/z.wav' '%s/one/y.flac'"):format(AF, AF))
sh("touch '" .. AF .. "/one/notes.txt'")
sh("mkdir -p '" .. AF .. "/zero'")
speak(AF .. "/zero/only.wav", "zero")

test("AudioFolder: sorted classes, 1-based targets, DatasetFolder's file order, loader and transforms", function()
  local ds = D.AudioFolder(AF)
  check_eq(ds.classes, {"nine", "one", "zero"})
  check_eq(ds.class_to_idx, {nine = 1, one = 2, zero = 3})
  local rel = {}
  for k, s in ipairs(ds.samples) do rel[k] = {s[1]:sub(#AF + 2), s[2]} end
  check_eq(rel, {{"nine/b.wav", 1}, {"nine/a/x1.wav", 1}, {"one/y.flac", 2}, {"one/z.wav", 2}, {"zero/only.wav", 3}})
  check_eq(ds.targets, {1, 1, 2, 2, 3})
  local s = ds[3]
  check_eq({s[2], s[3]}, {2, 22050})
  check(torch.equal(s[1], torch.audio.load(AF .. "/one/y.flac")), "FLAC waveform")
  local t = D.AudioFolder(AF, {extensions = ".wav", transform = function(x) return x:mean() end,
                               target_transform = function(y) return y * 10 end})
  check_eq(#t, 4)
  local s2 = t[3]
  check_eq(s2[2], 20)
  check_close(s2[1], torch.audio.load(AF .. "/one/z.wav"):mean())
  local u = D.AudioFolder{AF, loader = function(p) return #p end}
  check_eq(u[1], {#(AF .. "/nine/b.wav"), 1})
end)

test("AudioFolder with DataLoader workers gives the same samples", function()
  local ds = D.AudioFolder(AF, {transform = function(x) return x:narrow(2, 1, 1000) end})
  local loader = data.DataLoader(ds, {batch_size = 2, num_workers = 2})
  local got = {}
  for batch in loader:iter() do
    for k = 1, batch[1].shape[1] do got[#got + 1] = {batch[1][k], batch[2][k]:item()} end
  end
  check_eq(#got, #ds)
  for k, g in ipairs(got) do
    check(torch.equal(g[1], ds[k][1]), "waveform " .. k)
    check_eq(g[2], ds[k][2])
  end
end)

-- SpokenDigits (scripts/audio/make_spoken_digits.lua --quick) ------------
local SD = root .. "/digits"
local script_root = (os.getenv("PWD") or ".") .. "/scripts/audio/make_spoken_digits.lua"
local function make_digits()
  local p = io.popen(("'%s' '%s' --root '%s' --quick --quiet 2>&1"):format(arg[-1] or "build/moontorch", script_root, SD))
  local out = p:read("a")
  p:close()
  return out
end

test("make_spoken_digits --quick: 16 kHz mono files per voice and digit, a manifest, a rerun makes nothing", function()
  local out = make_digits()
  check(out:find("3 voices, 120 files", 1, true) and out:find("(120 made, 0 already there)", 1, true), out)
  local m = dofile(SD .. "/manifest.lua")
  check_eq(#m.voices, 3)
  check_eq({m.voices[1].native_rate, m.voices[3].native_rate}, {22050, 16000}, "espeak-ng and flite native rates")
  local i = torch.audio.info(SD .. "/flite_slt/7/4.wav")
  check_eq({i.sample_rate, i.num_channels, i.encoding, i.bits_per_sample}, {16000, 1, "PCM_S", 16})
  check(make_digits():find("(0 made, 120 already there)", 1, true), "the rerun made files again")
end)

test("SpokenDigits: targets are digit + 1, voices can be held out", function()
  local all = D.SpokenDigits(SD)
  check_eq(#all, 120)
  check_eq(all.voices, {"espeak_en-us", "espeak_en-us+f2", "flite_slt"})
  check_eq(all.classes[8], "seven")
  local s = all[1 + 4 * 7] -- voice 1, digit 7, first file
  check_eq({s[2], s[3], s[4]}, {8, 16000, "espeak_en-us"})
  check(s[1].shape[1] == 1 and s[1].shape[2] > 1600, "a mono waveform of more than 0.1 s")
  local train = D.SpokenDigits(SD, {exclude_voices = {"flite_slt"}})
  local test_ = D.SpokenDigits(SD, {voices = {"flite_slt"}})
  check_eq({#train, #test_}, {80, 40})
  for k = 1, #test_ do check_eq(test_.samples[k][3], "flite_slt") end
  check_error(function() D.SpokenDigits(SD, {voices = {"nobody"}}) end, "no voice 'nobody' in " .. SD)
  check_error(function() D.SpokenDigits(root) end, "SpokenDigits: no manifest at " .. root .. "/manifest.lua")
end)

test("missing folders and bad options are errors that say where they looked", function()
  check_error(function() D.YESNO(root .. "/none") end, "YESNO: dataset not found: " .. root .. "/none/waves_yesno")
  check_error(function() D.YESNO(root, {download = true}) end, "download is not supported")
  check_error(function() D.SPEECHCOMMANDS(root .. "/none") end,
    "SPEECHCOMMANDS: dataset not found: " .. root .. "/none/SpeechCommands/speech_commands_v0.02")
  check_error(function() D.SPEECHCOMMANDS(root, {subset = "train"}) end,
    "subset must be 'training', 'validation', 'testing' or false, got train")
  check_error(function() D.SPEECHCOMMANDS(root, {subst = "training"}) end, "unknown option 'subst'")
  check_error(function() D.AudioFolder(root .. "/none") end, "AudioFolder: dataset not found: " .. root .. "/none")
  check_error(function() D.AudioFolder(AF, {extensions = ".xyz"}) end, "no valid file found for the classes")
  check_error(function() return D.YESNO(root)[4] end, "index 4 out of range (1..3)")
  check_error(function() D.YESNO(42) end, "root must be a directory path")
end)

sh("rm -rf '" .. root .. "'")
