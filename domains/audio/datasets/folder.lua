-- torch.audio.datasets.AudioFolder -- sound files stored as
-- root/<class>/.../<file>, labelled by their class folder, as vision's
-- DatasetFolder: the same find_classes and make_dataset (classes sorted,
-- class_to_idx 1-based, files in torchvision's order). A sample is
-- {waveform, target, sample_rate}: the loader's (default torch.audio.load)
-- waveform after transform, the class index after target_transform, and
-- the sample rate the loader gave (none when it gives only a waveform).
local C = require "torch.audio.datasets.common"
local folder = require "torch.vision.datasets.folder"

local AF = C.class("AudioFolder")
AF.AUDIO_EXTENSIONS = {".wav", ".flac", ".ogg", ".opus", ".mp3"}

-- the default loader: the waveform ([channels, time], float32) and rate
local function default_loader(path) return require("torch.audio.io").load(path) end

function AF:__init(...)
  local name = "AudioFolder"
  local o = C.args(name, "root extensions transform target_transform loader is_valid_file allow_empty", ...)
  local root = C.root(name, o.root)
  C.need_dir(name, root, o)
  if o.loader ~= nil and type(o.loader) ~= "function" and not (getmetatable(o.loader) or {}).__call then
    error(("%s: loader must be a function of a path, got a %s"):format(name, type(o.loader)), 2)
  end
  if o.is_valid_file ~= nil and type(o.is_valid_file) ~= "function" then
    error(("%s: is_valid_file must be a function of a path, got a %s"):format(name, type(o.is_valid_file)), 2)
  end
  local ext = o.extensions
  if type(ext) == "string" then ext = {ext} end
  if ext == nil and o.is_valid_file == nil then ext = AF.AUDIO_EXTENSIONS end
  C.set_transforms(self, name, o)
  self.root, self.loader, self.extensions = root, o.loader or default_loader, ext
  self.classes, self.class_to_idx = folder.find_classes(root, name)
  self.samples = folder.make_dataset(root, self.class_to_idx, ext, o.is_valid_file, o.allow_empty, name)
  self.targets = {}
  for k, s in ipairs(self.samples) do self.targets[k] = s[2] end
end

function AF:__len() return #self.samples end

function AF:__getitem(i)
  i = C.index(self, i)
  local s = self.samples[i]
  local x, sr = self.loader(s[1])
  local sample = C.apply(self, x, s[2])
  sample[3] = sr
  return sample
end

return AF
