-- torch.audio.datasets.SpokenDigits -- the spoken digits that
-- scripts/audio/make_spoken_digits.lua synthesizes: ROOT/<voice>/<digit>/
-- <n>.wav (16 kHz mono) and ROOT/manifest.lua. voices= keeps only the
-- voices named, exclude_voices= leaves those out (to hold out whole
-- voices). A sample is {waveform, target, sample_rate, voice}: target is
-- the digit + 1 (classes[target] is its word), 1-based like every class
-- index here.
local C = require "torch.audio.datasets.common"

local SD = C.class("SpokenDigits")

-- a set of names from a list (nil stays nil)
local function set_of(fname, name, list)
  if list == nil or list == false then return nil end
  if type(list) == "string" then list = {list} end
  if type(list) ~= "table" then error(("%s: %s must be a list of voice names, got a %s"):format(fname, name,
    type(list)), 4) end
  local s = {}
  for _, v in ipairs(list) do s[v] = true end
  return s
end

function SD:__init(...)
  local fname = "SpokenDigits"
  local o = C.args(fname, "root voices exclude_voices transform target_transform", ...)
  local root = C.root(fname, o.root)
  local mpath = root .. "/manifest.lua"
  local ok, manifest = pcall(dofile, mpath)
  if not ok or type(manifest) ~= "table" then
    error(("%s: no manifest at %s (make the data with build/moontorch scripts/audio/make_spoken_digits.lua "
      .. "--root %s)"):format(fname, mpath, root), 2)
  end
  local keep, drop = set_of(fname, "voices", o.voices), set_of(fname, "exclude_voices", o.exclude_voices)
  local known = {}
  for _, v in ipairs(manifest.voices) do known[v.name] = true end
  for _, s in ipairs{keep or {}, drop or {}} do
    for name in pairs(s) do
      if not known[name] then error(("%s: no voice '%s' in %s"):format(fname, name, mpath), 2) end
    end
  end
  C.set_transforms(self, fname, o)
  self.root, self.classes, self.manifest = root, manifest.digits, manifest
  self.voices, self.samples, self.targets = {}, {}, {}
  for _, v in ipairs(manifest.voices) do
    if (not keep or keep[v.name]) and not (drop and drop[v.name]) then
      self.voices[#self.voices + 1] = v.name
      for d = 0, 9 do
        local dir = ("%s/%s/%d"):format(root, v.name, d)
        local files = {}
        for _, f in ipairs(C.list(dir, false)) do
          local n = f:match("^(%d+)%.wav$")
          if n then files[#files + 1] = tonumber(n) end
        end
        table.sort(files)
        for _, n in ipairs(files) do
          self.samples[#self.samples + 1] = {("%s/%d.wav"):format(dir, n), d + 1, v.name}
          self.targets[#self.samples] = d + 1
        end
      end
    end
  end
end

function SD:__len() return #self.samples end

function SD:__getitem(i)
  i = C.index(self, i)
  local s = self.samples[i]
  local x, sr = C.load("SpokenDigits", s[1])
  local sample = C.apply(self, x, s[2])
  sample[3], sample[4] = sr, s[3]
  return sample
end

return SD
