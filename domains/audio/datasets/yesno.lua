-- torch.audio.datasets.YESNO -- torchaudio's YESNO over local files:
-- root/<folder_in_archive>/*.wav (default waves_yesno), each named by its
-- eight labels ("0_1_1_0_0_1_0_1.wav": 0 no, 1 yes), in sorted order. A
-- sample is {waveform, sample_rate, labels} (torchaudio's tuple as a table;
-- labels a list of the eight 0/1 numbers, as in the file name).
local C = require "torch.audio.datasets.common"

local YESNO = C.class("YESNO")

function YESNO:__init(...)
  local o = C.args("YESNO", "root url folder_in_archive download", ...)
  local root = C.root("YESNO", o.root)
  self._path = root .. "/" .. (o.folder_in_archive or "waves_yesno")
  C.need_dir("YESNO", self._path, o)
  self._walker = {}
  for _, name in ipairs(C.list(self._path, false)) do
    if name:sub(-4) == ".wav" then self._walker[#self._walker + 1] = name:sub(1, -5) end
  end
end

function YESNO:__len() return #self._walker end

function YESNO:__getitem(n)
  n = C.index(self, n)
  local id = self._walker[n]
  local labels = {}
  for part in id:gmatch("[^_]+") do
    local v = math.tointeger(tonumber(part))
    if not v then error(("YESNO: the file name %s.wav is not a list of labels like 0_1_1_0_0_1_0_1"):format(id), 3) end
    labels[#labels + 1] = v
  end
  local x, sr = C.load("YESNO", self._path .. "/" .. id .. ".wav")
  return {x, sr, labels}
end

return YESNO
