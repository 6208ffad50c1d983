-- torch.vision.datasets: DatasetFolder and ImageFolder -- samples stored as
-- root/<class>/.../<file>, as torchvision lays them out: classes are the
-- sorted subfolders of root (class_to_idx 1-based), files are taken in
-- torchvision's order (folders walked recursively, sorted by path, files
-- sorted by name). ImageFolder decodes PNG, JPEG and WebP files into uint8
-- 3 x H x W RGB tensors (torchvision gives PIL images); with
-- DataLoader(num_workers > 0) the worker processes read, decode and
-- transform them while the loop runs.
local torch = require "torch"
local V = require "torch.vision.datasets.vision"
local C = require "torch.vision._folder"
local M = {}

M.IMG_EXTENSIONS = {".jpg", ".jpeg", ".png", ".ppm", ".bmp", ".pgm", ".tif", ".tiff", ".webp"}

-- torchvision's default loader: the image as 8-bit RGB, as PIL's
-- convert("RGB") (alpha dropped, gray spread, 16-bit reduced to 8)
function M.default_loader(path)
  if type(path) ~= "string" then error("default_loader: path must be a string, got a " .. type(path), 2) end
  return C.load_rgb(path)
end

local function list(fname, dir)
  local ok, entries = pcall(C.scandir, dir)
  if not ok then error(("%s: cannot read the folder %s"):format(fname, entries), 4) end
  return entries
end

-- find_classes(directory) -> sorted class folder names, {name = 1-based index}
function M.find_classes(directory, fname)
  fname = fname or "find_classes"
  local classes = {}
  for _, e in ipairs(list(fname, directory)) do
    if e.dir then classes[#classes + 1] = e.name end
  end
  if #classes == 0 then error(("%s: no class folder found in %s"):format(fname, directory), 3) end
  table.sort(classes)
  return classes, V.class_to_idx(classes)
end

-- has_file_allowed_extension(name, extensions): name ends (ignoring case)
-- with one of the extensions (a string or a list)
function M.has_file_allowed_extension(name, extensions)
  local lower = name:lower()
  for _, ext in ipairs(type(extensions) == "string" and {extensions} or extensions) do
    if ext == "" or lower:sub(-#ext) == ext:lower() then return true end
  end
  return false
end

-- every (folder, its non-folder entries) below dir, folders included
local function walk(fname, dir, out)
  local files, subdirs = {}, {}
  for _, e in ipairs(list(fname, dir)) do
    if e.dir then subdirs[#subdirs + 1] = e.name else files[#files + 1] = e.name end
  end
  out[#out + 1] = {dir, files}
  for _, s in ipairs(subdirs) do walk(fname, dir .. "/" .. s, out) end
  return out
end

local function is_dir(path)
  local ok, e = pcall(C.scandir, path)
  return ok and e ~= nil
end

-- make_dataset(directory, class_to_idx, extensions, is_valid_file,
-- allow_empty) -> list of {path, class index} in torchvision's order
function M.make_dataset(directory, class_to_idx, extensions, is_valid_file, allow_empty, fname)
  fname = fname or "make_dataset"
  if (extensions == nil) == (is_valid_file == nil) then
    error(fname .. ": give exactly one of extensions and is_valid_file", 3)
  end
  local valid = is_valid_file or function(p) return M.has_file_allowed_extension(p, extensions) end
  local names = {}
  for c in pairs(class_to_idx) do names[#names + 1] = c end
  table.sort(names)
  local samples, found = {}, {}
  for _, c in ipairs(names) do
    local dir = directory .. "/" .. c
    if is_dir(dir) then
      local folders = walk(fname, dir, {})
      table.sort(folders, function(a, b) return a[1] < b[1] end)
      for _, f in ipairs(folders) do
        table.sort(f[2])
        for _, name in ipairs(f[2]) do
          local path = f[1] .. "/" .. name
          if valid(path) then
            samples[#samples + 1] = {path, class_to_idx[c]}
            found[c] = true
          end
        end
      end
    end
  end
  local empty = {}
  for _, c in ipairs(names) do if not found[c] then empty[#empty + 1] = c end end
  if #empty > 0 and not allow_empty then
    local msg = ("%s: no valid file found for the classes %s"):format(fname, table.concat(empty, ", "))
    if extensions then
      msg = msg .. "; supported extensions are " .. (type(extensions) == "string" and extensions
        or table.concat(extensions, ", "))
    end
    error(msg, 3)
  end
  return samples
end

local folder = {}

function folder:__len() return #self.samples end

function folder:__getitem(i)
  i = V.index(self, i)
  local s = self.samples[i]
  return V.apply(self, self.loader(s[1]), s[2])
end

local function define(name, order, defaults)
  local D = V.class(name)
  for k, f in pairs(folder) do D[k] = f end
  function D:__init(...)
    local o = V.args(name, order, ...)
    defaults(o)
    local root = V.root(name, o.root)
    if o.loader ~= nil and type(o.loader) ~= "function" and not (getmetatable(o.loader) or {}).__call then
      error(("%s: loader must be a function of a path, got a %s"):format(name, type(o.loader)), 2)
    end
    if o.is_valid_file ~= nil and type(o.is_valid_file) ~= "function" then
      error(("%s: is_valid_file must be a function of a path, got a %s"):format(name, type(o.is_valid_file)), 2)
    end
    V.set_transforms(self, name, o)
    self.root, self.loader, self.extensions = root, o.loader, o.extensions
    self.classes, self.class_to_idx = M.find_classes(root, name)
    self.samples = M.make_dataset(root, self.class_to_idx, o.extensions, o.is_valid_file, o.allow_empty, name)
    self.targets = {}
    for k, s in ipairs(self.samples) do self.targets[k] = s[2] end
    self.imgs = self.samples
  end
  return D
end

M.DatasetFolder = define("DatasetFolder",
  "root loader extensions transform target_transform is_valid_file allow_empty transforms", function(o)
    if o.loader == nil then error("DatasetFolder: loader is required (a function of a path)", 4) end
    if type(o.extensions) == "string" then o.extensions = {o.extensions} end
  end)
M.ImageFolder = define("ImageFolder",
  "root transform target_transform loader is_valid_file allow_empty transforms", function(o)
    o.loader = o.loader or M.default_loader
    if o.is_valid_file == nil then o.extensions = M.IMG_EXTENSIONS end
  end)

return M
