-- torch.audio.datasets.common -- what the audio datasets share: vision's
-- dataset helpers (arguments, transforms, 1-based indexing; see
-- domains/vision/datasets/vision.lua), a folder listing, and the check
-- that a dataset folder exists, which names where it looked.
local V = require "torch.vision.datasets.vision"
local F = require "torch.vision._folder"
local M = setmetatable({}, {__index = V})

-- the names of the entries of dir that are files (dirs = false) or
-- folders (dirs = true), sorted
function M.list(dir, dirs)
  local out = {}
  for _, e in ipairs(F.scandir(dir)) do
    if (e.dir and true or false) == dirs then out[#out + 1] = e.name end
  end
  table.sort(out)
  return out
end

-- raises unless path is a folder: "<fname>: dataset not found: <path> is
-- not a folder (nothing is downloaded: put the files there)"
function M.need_dir(fname, path, o)
  if o.download then
    error(("%s: download is not supported; put the files in %s"):format(fname, path), 4)
  end
  if not pcall(F.scandir, path) then
    error(("%s: dataset not found: %s is not a folder (nothing is downloaded: put the files there)"):format(
      fname, path), 4)
  end
end

-- the waveform and sample rate of a file, errors naming the dataset
function M.load(fname, path)
  local ok, x, sr = pcall(require("torch.audio.io").load, path)
  if not ok then error(("%s: %s"):format(fname, tostring(x)), 4) end
  return x, sr
end

return M
