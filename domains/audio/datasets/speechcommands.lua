-- torch.audio.datasets.SPEECHCOMMANDS -- torchaudio's Speech Commands over
-- local files: root/<folder_in_archive>/<url's base name>/<label>/
-- <speaker>_nohash_<n>.wav (default root/SpeechCommands/
-- speech_commands_v0.02), _background_noise_ left out. subset=
-- "validation"/"testing" takes the files listed in validation_list.txt /
-- testing_list.txt (their order); "training" every other file; false
-- (nil) all of them (sorted by path). A sample is {waveform, sample_rate,
-- label, speaker_id, utterance_number} (torchaudio's tuple as a table).
local C = require "torch.audio.datasets.common"

local HASH, EXCEPT = "_nohash_", "_background_noise_"
local SUBSETS = {training = true, validation = true, testing = true}

local S = C.class("SPEECHCOMMANDS")

-- the relative paths listed in path/<file> (one a line)
local function read_list(path, file)
  local f, err = io.open(path .. "/" .. file, "r")
  if not f then error(("SPEECHCOMMANDS: cannot read the list %s/%s (%s)"):format(path, file, err), 5) end
  local out = {}
  for line in f:lines() do
    line = line:match("^%s*(.-)%s*$")
    if line ~= "" then out[#out + 1] = line end
  end
  f:close()
  return out
end

-- every <label>/<file>.wav under path with _nohash_ in it, sorted
local function walk(path)
  local out = {}
  for _, label in ipairs(C.list(path, true)) do
    for _, name in ipairs(C.list(path .. "/" .. label, false)) do
      local rel = label .. "/" .. name
      if name:sub(-4) == ".wav" and rel:find(HASH, 1, true) and not rel:find(EXCEPT, 1, true) then
        out[#out + 1] = rel
      end
    end
  end
  table.sort(out)
  return out
end

function S:__init(...)
  local o = C.args("SPEECHCOMMANDS", "root url folder_in_archive download subset", ...)
  local root = C.root("SPEECHCOMMANDS", o.root)
  local subset = o.subset or nil
  if subset ~= nil and not SUBSETS[subset] then
    error(("SPEECHCOMMANDS: subset must be 'training', 'validation', 'testing' or false, got %s"):format(
      tostring(subset)), 2)
  end
  local url = o.url or "speech_commands_v0.02"
  local base = url:match("([^/]+)$"):gsub("%.tar%.gz$", "")
  self._archive = root .. "/" .. (o.folder_in_archive or "SpeechCommands")
  self._path = self._archive .. "/" .. base
  C.need_dir("SPEECHCOMMANDS", self._path, o)
  if subset == "validation" then self._walker = read_list(self._path, "validation_list.txt")
  elseif subset == "testing" then self._walker = read_list(self._path, "testing_list.txt")
  else
    local all = walk(self._path)
    if subset == "training" then
      local skip = {}
      for _, file in ipairs{"validation_list.txt", "testing_list.txt"} do
        for _, rel in ipairs(read_list(self._path, file)) do skip[rel] = true end
      end
      local kept = {}
      for _, rel in ipairs(all) do if not skip[rel] then kept[#kept + 1] = rel end end
      all = kept
    end
    self._walker = all
  end
end

function S:__len() return #self._walker end

-- get_metadata(n) -> {relative path (from root/folder_in_archive),
-- 16000, label, speaker_id, utterance_number}, without loading the audio
function S:get_metadata(n)
  n = C.index(self, n)
  local rel = self._walker[n]
  local label, file = rel:match("([^/]+)/([^/]+)$")
  local speaker, utt = (file or ""):match("^(.*)" .. HASH .. "(%d+)%.wav$")
  if not speaker then
    error(("SPEECHCOMMANDS: %s is not named <speaker>_nohash_<n>.wav"):format(rel), 3)
  end
  local base = self._path:match("([^/]+)$")
  return {base .. "/" .. rel, 16000, label, speaker, math.tointeger(tonumber(utt))}
end

function S:__getitem(n)
  local m = self:get_metadata(n)
  local x, sr = C.load("SPEECHCOMMANDS", self._archive .. "/" .. m[1])
  return {x, sr, m[3], m[4], m[5]}
end

return S
