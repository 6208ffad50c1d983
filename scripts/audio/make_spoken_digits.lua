-- scripts/audio/make_spoken_digits.lua -- synthesizes the spoken digits
-- "zero".."nine" with espeak-ng (English accents x voice variants) and
-- flite (its voices), each at several speeds and pitches, into
--   ROOT/<voice>/<digit 0-9>/<n>.wav   16 kHz mono 16-bit PCM
-- and writes ROOT/manifest.lua (the voices, their engine, options and
-- native rate, the speed/pitch grid): a training script holds out whole
-- voices with torch.audio.datasets.SpokenDigits(ROOT, {voices=...}).
-- espeak-ng writes 22050 Hz and flite 16000 Hz (its kal voice 8000 Hz):
-- sox resamples what is not already 16 kHz. Files already made are
-- skipped, so an interrupted run continues where it stopped; each file is
-- written under a temporary name and renamed when complete.
--
-- Usage: build/moontorch scripts/audio/make_spoken_digits.lua [options]
--   --root DIR     where the files go (default $XDG_CACHE_HOME/moontorch/
--                  spoken_digits, else ~/.cache/..., else /tmp/...)
--   --quick        one accent per engine and 2 x 2 speeds x pitches (a test set)
--   --quiet        no progress lines
package.path = (arg and arg[0] and arg[0]:match("^(.*)/") or ".") .. "/../?.lua;" .. package.path
local options = require "train_options"

local function default_root()
  local cache = os.getenv("XDG_CACHE_HOME")
  if not cache or cache == "" then
    local home = os.getenv("HOME")
    cache = home and home ~= "" and home .. "/.cache" or "/tmp"
  end
  return cache .. "/moontorch/spoken_digits"
end

local o = options.parse(arg or {}, {root = default_root()}, {}, {quick = true, quiet = true})

local DIGITS = {"zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"}
local ESPEAK_ACCENTS = {"en-us", "en-gb", "en-gb-scotland", "en-gb-x-rp", "en-029", "en-gb-x-gbclan",
                        "en-gb-x-gbcwmd"}
local ESPEAK_VARIANTS = {"", "m3", "m7", "f2", "f4", "klatt2", "croak"}
local FLITE_VOICES = {{"kal", 8000}, {"kal16", 16000}, {"awb", 16000}, {"rms", 16000}, {"slt", 16000}}
-- speed x pitch grids: espeak-ng words per minute (-s) and pitch 0-99 (-p);
-- flite duration_stretch (> 1 slower) and mean F0 in Hz
local ESPEAK_GRID = {speeds = {130, 170, 210}, pitches = {30, 50, 70}}
local FLITE_GRID = {speeds = {1.25, 1.0, 0.8}, pitches = {95, 120, 150}}
if o.quick then
  ESPEAK_ACCENTS, ESPEAK_VARIANTS, FLITE_VOICES = {"en-us"}, {"", "f2"}, {{"slt", 16000}}
  ESPEAK_GRID = {speeds = {150, 200}, pitches = {40, 60}}
  FLITE_GRID = {speeds = {1.1, 0.9}, pitches = {100, 140}}
end

local function q(s) return "'" .. s:gsub("'", "'\\''") .. "'" end
local function run(cmd)
  local ok = os.execute(cmd)
  if not ok then error("make_spoken_digits: this command failed:\n  " .. cmd, 0) end
end
local function exists(path)
  local f = io.open(path, "rb")
  if f then f:close() end
  return f ~= nil
end

for _, tool in ipairs{"espeak-ng", "flite", "sox"} do
  if not os.execute("command -v " .. tool .. " >/dev/null 2>&1") then
    error("make_spoken_digits: " .. tool .. " is not installed (Debian: apt-get install espeak-ng flite sox)", 0)
  end
end

-- the voices: {name, engine, synth(text, n, out) -> shell command, native rate}
local voices = {}
for _, accent in ipairs(ESPEAK_ACCENTS) do
  for _, variant in ipairs(ESPEAK_VARIANTS) do
    local v = variant == "" and accent or accent .. "+" .. variant
    voices[#voices + 1] = {name = "espeak_" .. v, engine = "espeak-ng", voice = v, native_rate = 22050, grid = ESPEAK_GRID,
      synth = function(text, speed, pitch, out)
        return ("espeak-ng -v %s -s %d -p %d -w %s %s"):format(q(v), speed, pitch, q(out), q(text))
      end}
  end
end
for _, fv in ipairs(FLITE_VOICES) do
  voices[#voices + 1] = {name = "flite_" .. fv[1], engine = "flite", voice = fv[1], native_rate = fv[2], grid = FLITE_GRID,
    synth = function(text, speed, pitch, out)
      return ("flite -voice %s --setf duration_stretch=%g --setf int_f0_target_mean=%g -t %s -o %s"):format(fv[1], speed,
        pitch, q(text), q(out))
    end}
end

-- one file: synthesize into a temporary name, bring it to 16 kHz mono
-- 16-bit with sox, rename into place
local function make(v, text, speed, pitch, path)
  local raw, tmp = path .. ".raw.wav", path .. ".tmp.wav"
  run(v.synth(text, speed, pitch, raw) .. " >/dev/null 2>&1")
  run(("sox %s -r 16000 -c 1 -b 16 -e signed-integer %s && rm -f %s && mv %s %s"):format(q(raw), q(tmp), q(raw), q(tmp),
    q(path)))
end

local t0 = os.time()
run("mkdir -p " .. q(o.root))
local made, skipped = 0, 0
for k, v in ipairs(voices) do
  local n = #v.grid.speeds * #v.grid.pitches
  for d, word in ipairs(DIGITS) do
    local dir = ("%s/%s/%d"):format(o.root, v.name, d - 1)
    run("mkdir -p " .. q(dir))
    local i = 0
    for _, speed in ipairs(v.grid.speeds) do
      for _, pitch in ipairs(v.grid.pitches) do
        i = i + 1
        local path = ("%s/%d.wav"):format(dir, i)
        if exists(path) then skipped = skipped + 1 else
          make(v, word, speed, pitch, path)
          made = made + 1
        end
      end
    end
  end
  v.files = 10 * n
  if not o.quiet then
    io.write(("[%2d/%d] %-28s %3d files  (%d made, %d already there, %ds)\n"):format(k, #voices, v.name, 10 * n, made,
      skipped, os.time() - t0))
    io.flush()
  end
end

-- the manifest: a Lua table (read it with dofile)
local lines = {"-- made by scripts/audio/make_spoken_digits.lua: the voices of this folder",
               "return {", ("  sample_rate = 16000, digits = {%s},"):format(
                 '"' .. table.concat(DIGITS, '", "') .. '"'), "  voices = {"}
for _, v in ipairs(voices) do
  lines[#lines + 1] = ("    {name = %q, engine = %q, voice = %q, native_rate = %d, files = %d,"):format(v.name, v.engine,
    v.voice, v.native_rate, v.files)
  lines[#lines + 1] = ("     speeds = {%s}, pitches = {%s}},"):format(table.concat(v.grid.speeds, ", "),
    table.concat(v.grid.pitches, ", "))
end
lines[#lines + 1] = "  },"
lines[#lines + 1] = "}"
local f = assert(io.open(o.root .. "/manifest.lua", "w"))
f:write(table.concat(lines, "\n"), "\n")
f:close()
print(("make_spoken_digits: %d voices, %d files in %s (%d made, %d already there) in %d s"):format(#voices,
  made + skipped, o.root, made, skipped, os.time() - t0))
