-- tests/domains/vision/test_datasets.lua -- torch.vision.datasets against
-- torchvision 0.14 (tests/ref/gen_vision_datasets.py -> vision_datasets.lua):
-- ImageFolder over Debian's tuxpaint stamps (classes, class_to_idx, sample
-- order, decoded pixels), DatasetFolder's walk order over a tree made here,
-- MNIST/KMNIST/EMNIST/CIFAR over tiny files written here from the same
-- pixel()/label() as the generator; FakeData's determinism; DataLoader with
-- workers; one error per kind of bad input.
cpu_only("file datasets")

local D = torch.vision.datasets
local data = torch.utils.data
local R = ref("vision_datasets")

local dir = os.tmpname()
os.remove(dir)
assert(os.execute("mkdir -p '" .. dir .. "'"))
local function sh(cmd) assert(os.execute(cmd), cmd) end

local function pixel(i, k, seed) return (7 * i + 13 * k + (k * k) % 5 + seed) % 256 end
local function label(i, seed, n) return (3 * i + seed) % n end

-- a float [0, 1] (or uint8) image as the generator's summary
local function summary(img)
  local b = img.dtype == torch.uint8 and img:long() or (img * 255):round():long()
  local flat = b:flatten()
  local at = {}
  for p = 0, 15 do at[#at + 1] = flat[(p * 191 + 5) % flat:numel() + 1]:item() end
  return {shape = b.shape, sum = flat:sum():item(), at = at}
end

local function check_summary(img, want, what)
  local got = summary(img)
  check_eq(#got.shape, #want.shape, what .. " rank")
  for d = 1, #want.shape do check_eq(got.shape[d], want.shape[d], what .. " shape") end
  check_eq(got.sum, want.sum, what .. " sum of bytes")
  check_eq(got.at, want.at, what .. " bytes at fixed positions")
end

local function write(path, s)
  local f = assert(io.open(path, "wb"))
  f:write(s)
  f:close()
end

local function bytes(n, fn)
  local parts, chunk = {}, {}
  for k = 0, n - 1 do
    chunk[#chunk + 1] = fn(k)
    if #chunk == 4096 then parts[#parts + 1] = string.char(table.unpack(chunk)); chunk = {} end
  end
  if #chunk > 0 then parts[#parts + 1] = string.char(table.unpack(chunk)) end
  return table.concat(parts)
end

-- ---------------------------------------------------------------- ImageFolder (tuxpaint)
local STAMPS = "/usr/share/tuxpaint/stamps"
if not io.open(STAMPS .. "/animals") then
  io.write("note: " .. STAMPS .. " not found (Debian tuxpaint-stamps-default); ImageFolder real-file tests skipped\n")
else
  local tux = D.ImageFolder(STAMPS)
  test("ImageFolder on the tuxpaint stamps: torchvision's classes, class_to_idx and sample order", function()
    check_eq(tux.classes, R.stamps.classes)
    check_eq(tux.class_to_idx, R.stamps.class_to_idx)
    check_eq(#tux, #R.stamps.samples)
    for k, s in ipairs(R.stamps.samples) do
      check_eq(tux.samples[k][1], STAMPS .. "/" .. s[1], "sample " .. k)
      check_eq(tux.samples[k][2], s[2], "target of sample " .. k)
      check_eq(tux.targets[k], s[2])
    end
    check(tux.imgs == tux.samples, "imgs is samples")
  end)

  test("ImageFolder decodes like torchvision's default loader (RGB, alpha dropped)", function()
    for i, want in pairs(R.stamps.picks) do
      local s = tux[tonumber(i)] or tux:get(tonumber(i))
      check_eq(s[1].dtype, torch.uint8)
      check_eq(s[2], R.stamps.samples[tonumber(i)][2])
      check_summary(s[1], want, "stamp " .. i)
    end
  end)

  test("ImageFolder + DataLoader(num_workers=2): the workers decode, batches equal the in-line ones", function()
    local crop = function(img) return img:select(2, img:size(2) // 2 + 1):select(2, img:size(3) // 2 + 1) end
    local ds = D.ImageFolder(STAMPS, {transform = crop, target_transform = function(t) return t * 10 end})
    local sub = {}
    local serial = data.DataLoader(ds, {batch_size = 7})
    local n = 0
    for b in serial:iter() do
      n = n + 1
      sub[n] = b
      if n == 6 then break end
    end
    local cfolder = require "torch.vision._folder" -- the default loader's decoder
    local real, calls = cfolder.load_rgb, 0
    cfolder.load_rgb = function(...) calls = calls + 1; return real(...) end
    local ok, err = pcall(function()
      local k = 0
      for b in data.DataLoader(ds, {batch_size = 7, num_workers = 2}):iter() do
        k = k + 1
        if k <= 6 then
          check(b[1]:equal(sub[k][1]), "images of batch " .. k)
          check(b[2]:equal(sub[k][2]), "targets of batch " .. k)
        end
      end
      check_eq(k, math.ceil(#ds / 7), "number of batches")
    end)
    local in_workers = calls
    ds:get(1)
    cfolder.load_rgb = real
    assert(ok, err)
    check_eq(in_workers, 0, "no image decoded by the main thread")
    check_eq(calls, 1, "the in-line loader is the one counted")
  end)
end

-- ---------------------------------------------------------------- DatasetFolder (a tree made here)
local tree = dir .. "/tree"
for _, f in ipairs({"b/x.txt", "b/a.TXT", "b/sub/z.txt", "b/sub-dir/y.txt", "b/sub.x/w.txt", "b/sub/deeper/v.txt",
  "b/.hidden.txt", "b/c.dat", "a/1.txt", "a/10.txt", "a/2.txt", "a/B.txt", "a/b.txt", "a_b/q.txt",
  "A/upper.txt", "top.txt"}) do
  sh("mkdir -p '" .. tree .. "/" .. (f:match("^(.*)/") or "") .. "'")
  write(tree .. "/" .. f, f)
end
local function readall(p)
  local f = assert(io.open(p, "rb"))
  local s = f:read("a")
  f:close()
  return s
end
local function same_samples(ds, want)
  check_eq(#ds, #want, "number of samples")
  for k, s in ipairs(want) do
    check_eq(ds.samples[k][1], tree .. "/" .. s[1], "path " .. k)
    check_eq(ds.samples[k][2], s[2], "target " .. k)
  end
end

test("DatasetFolder walks folders in torchvision's order (extensions as a list or a string)", function()
  local ds = D.DatasetFolder(tree, readall, {".txt"})
  check_eq(ds.classes, R.tree.classes)
  same_samples(ds, R.tree.samples)
  same_samples(D.DatasetFolder{tree, loader = readall, extensions = ".txt"}, R.tree_str_ext)
  local s = ds[3] or ds:get(3)
  check_eq(s[1], R.tree.samples[3][1], "the loader's result is the sample")
  check_eq(s[2], R.tree.samples[3][2])
end)

test("DatasetFolder with is_valid_file; empty classes are an error unless allow_empty", function()
  -- the generator's tests, of the path relative to the root
  local function narrow(p)
    local r = p:sub(#tree + 2)
    return r:find("sub", 1, true) ~= nil or r:sub(-5) == "1.txt"
  end
  local function valid(p)
    local r = p:sub(#tree + 2)
    return narrow(p) or r:find("q", 1, true) ~= nil or r:find("upper", 1, true) ~= nil
  end
  local ds = D.DatasetFolder(tree, readall, {is_valid_file = valid})
  check_eq(ds.classes, R.tree_valid.classes)
  same_samples(ds, R.tree_valid.samples)
  check(R.tree_empty_error:find("A, a_b", 1, true), "torchvision names the empty classes")
  check_error(function() D.DatasetFolder(tree, readall, {is_valid_file = narrow}) end,
    "DatasetFolder: no valid file found for the classes A, a_b")
  local e = D.DatasetFolder(tree, readall, {is_valid_file = narrow, allow_empty = true})
  check_eq(#e.classes, 4, "empty classes stay classes")
  check_eq(e.class_to_idx.b, 4)
  for _, s in ipairs(e.samples) do check(narrow(s[1]), "only valid files") end
  check_eq(#e, 5)
end)

test("transform, target_transform and joint transforms on a folder dataset", function()
  local ds = D.DatasetFolder(tree, readall, {".txt"}, {transform = function(s) return #s end,
    target_transform = function(t) return -t end})
  check_eq(ds:get(1)[1], #R.tree.samples[1][1])
  check_eq(ds:get(1)[2], -R.tree.samples[1][2])
  local j = D.DatasetFolder(tree, readall, {".txt"}, {transforms = function(s, t) return s .. "!", t + 100 end})
  check_eq(j:get(2), {R.tree.samples[2][1] .. "!", R.tree.samples[2][2] + 100})
  check_error(function() D.DatasetFolder(tree, readall, {".txt"}, {transforms = print, transform = print}) end,
    "DatasetFolder: give either transforms or transform/target_transform, not both")
end)

test("folder datasets: clear errors for bad input", function()
  check_error(function() D.ImageFolder(dir .. "/nowhere") end, "ImageFolder: cannot read the folder")
  sh("mkdir -p '" .. dir .. "/flat' && touch '" .. dir .. "/flat/x.png'")
  check_error(function() D.ImageFolder(dir .. "/flat") end, "ImageFolder: no class folder found in")
  check_error(function() D.ImageFolder(tree) end, "ImageFolder: no valid file found for the classes A, a, a_b, b; "
    .. "supported extensions are .jpg, .jpeg, .png")
  check_error(function() D.DatasetFolder(tree, readall) end, "DatasetFolder: give exactly one of extensions and is_valid_file")
  check_error(function() D.DatasetFolder(tree, readall, {".txt"}, {is_valid_file = print}) end, "give exactly one")
  check_error(function() D.DatasetFolder(tree) end, "DatasetFolder: loader is required")
  check_error(function() D.ImageFolder(tree, {bogus = 1}) end, "bogus")
  check_error(function() D.ImageFolder(42) end, "ImageFolder: root must be a directory path")
  check_error(function() D.DatasetFolder(tree, readall, {".txt"}, {transform = 3}) end,
    "DatasetFolder: transform must be a function")
  local ds = D.DatasetFolder(tree, readall, {".txt"})
  check_error(function() ds:get(0) end, "DatasetFolder: index 0 out of range (1..14)")
  check_error(function() ds:get(15) end, "index 15 out of range")
  -- a corrupt image: the error names the file, in-line and in the workers
  sh("mkdir -p '" .. dir .. "/bad/cls' && printf 'not an image' > '" .. dir .. "/bad/cls/x.png'")
  local bad = D.ImageFolder(dir .. "/bad")
  check_error(function() bad:get(1) end, dir .. "/bad/cls/x.png: not a PNG, JPEG or WebP file")
  check_error(function()
    for _ in data.DataLoader(bad, {num_workers = 2}):iter() do end
  end, "ImageFolder: " .. dir .. "/bad/cls/x.png: not a PNG, JPEG or WebP file")
end)

-- ---------------------------------------------------------------- MNIST family (tiny idx files)
local function idx_file(path, n, h, w, fn)
  write(path, string.pack(">I4I4I4I4", 0x803, n, h, w) .. bytes(n * h * w, fn))
end
local function label_file(path, n, fn)
  write(path, string.pack(">I4I4", 0x801, n) .. bytes(n, fn))
end

local idxroot = dir .. "/idx"
local specs = {{"MNIST", nil, "train"}, {"MNIST", nil, "t10k"}, {"KMNIST", nil, "train"}, {"KMNIST", nil, "t10k"},
  {"EMNIST", "letters", "train"}, {"EMNIST", "balanced", "test"}}
for _, s in ipairs(specs) do
  local name, split, part = s[1], s[2], s[3]
  local r = R.idx[name .. (split and "_" .. split or "") .. "_" .. part]
  local raw = idxroot .. "/" .. name .. "/raw"
  sh("mkdir -p '" .. raw .. "'")
  local stem = split and ("emnist-%s-%s"):format(split, part) or part
  idx_file(raw .. "/" .. stem .. "-images-idx3-ubyte", r.n, 28, 28, function(k)
    return pixel(k // 784, k % 784, r.seed) end)
  label_file(raw .. "/" .. stem .. "-labels-idx1-ubyte", r.n, function(i) return label(i, r.seed, r.nclasses) + r.first end)
end

test("MNIST, KMNIST, EMNIST (letters, balanced): samples and classes as torchvision's", function()
  for _, s in ipairs(specs) do
    local name, split, part = s[1], s[2], s[3]
    local key = name .. (split and "_" .. split or "") .. "_" .. part
    local r = R.idx[key]
    local opts = {train = part == "train"}
    local ds = split and D[name](idxroot, split, opts) or D[name](idxroot, opts)
    check_eq(#ds, r.n, key)
    check_eq(ds.classes, r.classes, key .. " classes")
    check_eq(ds.class_to_idx[r.classes[2]], 2, key .. " class_to_idx")
    for i, it in ipairs(r.items) do
      local smp = ds:get(i)
      check_eq(smp[1].dtype, torch.float32)
      check_eq(smp[2], it.target, key .. " target " .. i)
      check_summary(smp[1], it.img, key .. " image " .. i)
    end
    check_eq(ds.targets:totable(), (function() local t = {} for i, it in ipairs(r.items) do t[i] = it.target end return t end)())
  end
end)

test("MNIST-style datasets: files directly in root, get_batch, transforms, DataLoader workers", function()
  local flat = dir .. "/flat_mnist"
  sh("mkdir -p '" .. flat .. "' && cp " .. idxroot .. "/MNIST/raw/* '" .. flat .. "/'")
  local a, b = D.MNIST(flat), D.MNIST{root = idxroot}
  check(a.data:equal(b.data) and a.targets:equal(b.targets), "root or root/MNIST/raw")
  local batch = a:get_batch(torch.tensor({3, 1}))
  check(batch[1][1]:equal(a:get(3)[1]) and batch[2][2]:item() == a:get(1)[2], "get_batch = stacked samples")
  local t = D.MNIST(flat, {transform = function(x) return x:sum() end, target_transform = function(y) return y * 2 end})
  check_close(t:get(2)[1], a:get(2)[1]:sum())
  check_eq(t:get(2)[2], 2 * a:get(2)[2])
  local j = D.KMNIST(idxroot, false, {transforms = function(x, y) return x:mean(), y - 1 end})
  check_eq(j:get(1)[2], R.idx.KMNIST_t10k.items[1].target - 1)
  for _, ds in ipairs({a, t}) do
    local serial = {}
    for bb in data.DataLoader(ds, {batch_size = 4}):iter() do serial[#serial + 1] = bb end
    local k = 0
    for bb in data.DataLoader(ds, {batch_size = 4, num_workers = 2}):iter() do
      k = k + 1
      check_close(bb[1], serial[k][1])
      check(bb[2]:equal(serial[k][2]), "targets")
    end
    check_eq(k, #serial)
  end
end)

test("MNIST family: clear errors", function()
  check_error(function() D.MNIST(dir .. "/none") end, "MNIST: dataset file not found: looked for " .. dir
    .. "/none/MNIST/raw/train-images-idx3-ubyte")
  check_error(function() D.EMNIST(idxroot, "nope") end, "EMNIST: split must be one of byclass bymerge balanced letters digits mnist, got nope")
  check_error(function() D.EMNIST(idxroot) end, "EMNIST: split must be one of")
  check_error(function() D.EMNIST(idxroot, "digits") end, "EMNIST: dataset file not found")
  check_error(function() D.MNIST(idxroot, {download = true}) end, "MNIST: download is not supported")
  check_error(function() D.MNIST(idxroot, {train = "yes"}) end, "MNIST: train must be true or false")
  check_error(function() D.MNIST(idxroot, {bogus = true}) end, "bogus")
  check_error(function() D.MNIST() end, "MNIST: root must be a directory path")
  check_error(function() D.MNIST(idxroot):get(7) end, "MNIST: index 7 out of range (1..6)")
  local mism = dir .. "/mism"
  sh("mkdir -p '" .. mism .. "' && cp " .. idxroot .. "/MNIST/raw/train-images-idx3-ubyte '" .. mism .. "/' && cp "
    .. idxroot .. "/MNIST/raw/t10k-labels-idx1-ubyte '" .. mism .. "/train-labels-idx1-ubyte'")
  check_error(function() D.MNIST(mism) end, "MNIST: images of shape 6x28x28 (torch.uint8) and labels of shape 4")
end)

-- ---------------------------------------------------------------- CIFAR (binary layout)
local function write_cifar(root, name)
  local spec = R.cifar[name .. "_spec"]
  local folder = name == "CIFAR10" and "cifar-10-batches-bin" or "cifar-100-binary"
  local files = name == "CIFAR10" and {"data_batch_1.bin", "data_batch_2.bin", "data_batch_3.bin", "data_batch_4.bin",
    "data_batch_5.bin", "test_batch.bin"} or {"train.bin", "test.bin"}
  sh("mkdir -p '" .. root .. "/" .. folder .. "'")
  local nl = name == "CIFAR10" and 1 or 2
  local base = 0
  for _, f in ipairs(files) do
    local rows = {}
    for i = 0, spec.per - 1 do
      local n = base + i
      local head = nl == 1 and string.char(label(n, spec.seed, spec.nclasses))
        or string.char(label(n, spec.seed + 1, 20), label(n, spec.seed, spec.nclasses))
      rows[#rows + 1] = head .. bytes(3072, function(k) return pixel(n, k, spec.seed) end)
    end
    write(root .. "/" .. folder .. "/" .. f, table.concat(rows))
    base = base + spec.per
  end
  return root .. "/" .. folder
end

local cifroot = dir .. "/cifar"
local c10dir, c100dir = write_cifar(cifroot, "CIFAR10"), write_cifar(cifroot, "CIFAR100")

test("CIFAR10 and CIFAR100 (binary layout): samples as torchvision's (pickle layout of the same values)", function()
  for _, name in ipairs({"CIFAR10", "CIFAR100"}) do
    for _, train in ipairs({true, false}) do
      local r = R.cifar[name .. (train and "_train" or "_test")]
      local ds = D[name](cifroot, {train = train})
      check_eq(#ds, r.n, name)
      for i, it in ipairs(r.items) do
        local s = ds:get(i)
        check_eq(s[2], it.target, name .. " target " .. i)
        check_summary(s[1], it.img, name .. " image " .. i)
      end
    end
  end
  local c10 = D.CIFAR10(cifroot)
  check_eq(c10.classes[1], "airplane")
  check_eq(c10.class_to_idx.truck, 10)
  local c100 = D.CIFAR100(cifroot)
  check_eq(#c100.classes, 100)
  check_eq({c100.classes[1], c100.classes[100]}, {"apple", "worm"})
  local spec = R.cifar.CIFAR100_spec
  check_eq(c100.coarse_targets[3]:item(), label(2, spec.seed + 1, 20) + 1, "coarse target")
end)

test("CIFAR: class names from batches.meta.txt; DataLoader workers; errors", function()
  local names = {}
  for k = 1, 10 do names[k] = "name" .. k end
  write(c10dir .. "/batches.meta.txt", table.concat(names, "\n") .. "\n\n")
  local ds = D.CIFAR10(cifroot, {transform = function(x) return x:mean(1) end})
  check_eq(ds.classes, names)
  os.remove(c10dir .. "/batches.meta.txt")
  local serial = {}
  for b in data.DataLoader(ds, {batch_size = 4}):iter() do serial[#serial + 1] = b end
  local k = 0
  for b in data.DataLoader(ds, {batch_size = 4, num_workers = 3}):iter() do
    k = k + 1
    check_shape(b[1], {b[2]:numel(), 32, 32})
    check_close(b[1], serial[k][1])
  end
  check_eq(k, 4)
  write(c10dir .. "/test_batch.bin", "short")
  check_error(function() D.CIFAR10(cifroot, false) end, "CIFAR10: " .. c10dir
    .. "/test_batch.bin is not a CIFAR binary batch: 5 bytes is not a multiple of 3073-byte rows")
  check_error(function() D.CIFAR100(dir) end, "CIFAR100: dataset file not found: " .. dir .. "/cifar-100-binary/train.bin")
end)

-- ---------------------------------------------------------------- FakeData
test("FakeData: deterministic per index, random_offset shifts the seeds, global RNG untouched", function()
  local fd = D.FakeData{size = 6, image_size = {3, 8, 5}, num_classes = 4}
  check_eq(#fd, 6)
  torch.manual_seed(5)
  local before = torch.rand(3)
  torch.manual_seed(5)
  local s2 = fd:get(2)
  check(torch.rand(3):equal(before), "the global generator is not disturbed")
  check_shape(s2[1], {3, 8, 5})
  check_eq(s2[1].dtype, torch.uint8)
  check(fd:get(2)[1]:equal(s2[1]) and fd:get(2)[2] == s2[2], "same sample twice")
  check(not fd:get(3)[1]:equal(s2[1]), "other index, other image")
  local off = D.FakeData(6, {3, 8, 5}, 4, {random_offset = 1})
  check(off:get(1)[1]:equal(s2[1]) and off:get(1)[2] == s2[2], "offset 1: sample i is sample i+1")
  -- the image is randn * 255 wrapped mod 256, from a generator seeded with the 0-based index
  local g = torch.Generator():manual_seed(1)
  local x = torch.randn({3, 8, 5}, {generator = g})
  check(s2[1]:equal(x:mul(255):long():remainder(256):to(torch.uint8)), "ToPILImage's conversion")
  local seen = {}
  for i = 1, 6 do
    local t = fd:get(i)[2]
    check(t >= 1 and t <= 4, "1-based target")
    seen[t] = true
  end
  check_eq(fd.classes, {"0", "1", "2", "3"})
  check_error(function() D.FakeData{size = -1} end, "FakeData: size must be a non-negative integer")
  check_error(function() D.FakeData{image_size = {3, 0, 2}} end, "FakeData: image_size must hold positive integers")
  check_error(function() fd:get(7) end, "FakeData: index 7 out of range (1..6)")
  local b = data.DataLoader(fd, {batch_size = 3}):iter()()
  check_shape(b[1], {3, 3, 8, 5})
end)

-- ---------------------------------------------------------------- Fashion-MNIST (Debian's files)
if io.open(D.FASHION_MNIST_DIR .. "/t10k-images-idx3-ubyte.gz") then
  test("FashionMNIST over Debian's files keeps its old interface", function()
    local ds = D.FashionMNIST{train = false}
    check_eq(#ds, 10000)
    check_eq(ds.classes[10], "Ankle boot")
    check_eq(D.FashionMNIST_classes, ds.classes)
    local raw = torch.vision.io.read_idx(D.FASHION_MNIST_DIR .. "/t10k-labels-idx1-ubyte.gz")
    local s = ds:get(17)
    check_eq(s[2], raw[17]:item() + 1)
    check_shape(s[1], {1, 28, 28})
    local t = ds:tensors()
    check_eq(t[1].dtype, torch.uint8)
    local b = ds:transform_batch({t[1]:narrow(1, 1, 2), t[2]:narrow(1, 1, 2)})
    check_close(b[1][2], ds:get(2)[1])
  end)
end


test("ImageFolder over PNG, JPEG and WebP files, in-line, through workers and through a Subset", function()
  local vio = torch.vision.io
  local root = os.tmpname()
  os.remove(root)
  local here = debug.getinfo(1, "S").source:match("^@(.*)/[^/]*$") or "tests/domains/vision"
  sh("mkdir -p '" .. root .. "/webp' '" .. root .. "/png' '" .. root .. "/jpeg' && cp '" .. here
    .. "'/webp/*.webp '" .. root .. "/webp/'")
  local base = ((torch.arange(0, 3 * 9 * 11):view(3, 9, 11) * 7) % 256):to(torch.uint8)
  vio.write_png(base, root .. "/png/a.png")
  vio.write_png(torch.cat({base, base:narrow(1, 1, 1)}, 1), root .. "/png/b_rgba.PNG")
  vio.write_png(base:narrow(1, 1, 1):contiguous(), root .. "/png/c_gray.png")
  vio.write_jpeg(base, root .. "/jpeg/x.jpg", 95)
  write(root .. "/jpeg/notes.txt", "not an image")
  local ds = D.ImageFolder(root)
  check_eq(ds.classes, {"jpeg", "png", "webp"})
  check_eq(#ds, 1 + 3 + 4)
  for i = 1, #ds do
    local s = ds:get(i)
    check_eq(s[1]:size(1), 3, ds.samples[i][1] .. " is RGB")
    check(s[1]:equal(vio.read_image(ds.samples[i][1], vio.ImageReadMode.RGB)), ds.samples[i][1])
  end
  check(ds:get(3)[1]:equal(base), "RGBA loses its alpha")
  check(ds:get(4)[1]:equal(base:narrow(1, 1, 1):expand(3, 9, 11)), "gray spreads to three channels")
  local sizes = function(b) local t = {} for k, x in ipairs(b) do t[k] = table.concat(x.shape, "x") end return t end
  local collate = function(samples)
    local imgs, ts = {}, {}
    for k, s in ipairs(samples) do imgs[k], ts[k] = s[1], s[2] end
    return {imgs, ts}
  end
  local inline, threaded = {}, {}
  for b in data.DataLoader(ds, {batch_size = 3, collate_fn = collate}):iter() do inline[#inline + 1] = b end
  for b in data.DataLoader(ds, {batch_size = 3, collate_fn = collate, num_workers = 2}):iter() do
    threaded[#threaded + 1] = b
  end
  check_eq(#threaded, #inline)
  for k = 1, #inline do
    check_eq(sizes(threaded[k][1]), sizes(inline[k][1]))
    check_eq(threaded[k][2], inline[k][2])
    for j = 1, #inline[k][1] do check(threaded[k][1][j]:equal(inline[k][1][j]), "image " .. j .. " of batch " .. k) end
  end
  local sub = data.Subset(ds, {8, 2, 5})
  local got = {}
  for b in data.DataLoader(sub, {batch_size = 2, collate_fn = collate, num_workers = 2}):iter() do
    for j = 1, #b[1] do got[#got + 1] = {b[1][j], b[2][j]} end
  end
  check_eq(#got, 3)
  for k, i in ipairs({8, 2, 5}) do
    check(got[k][1]:equal(ds:get(i)[1]) and got[k][2] == ds:get(i)[2], "subset sample " .. k)
  end
  sh("rm -rf '" .. root .. "'")
end)


-- ---------------------------------------------------------------- skimage's photos, live against PIL
local SK = "/usr/lib/python3/dist-packages/skimage/data"
if io.open(SK .. "/astronaut.png") and io.open("/usr/bin/python3") then
  test("ImageFolder over skimage's PNG and JPEG files (symbolic links) decodes as PIL's convert('RGB')", function()
    local root = dir .. "/sk"
    sh("mkdir -p '" .. root .. "/png' '" .. root .. "/jpg' && ln -s " .. SK .. "/*.png '" .. root .. "/png/' && for f in "
      .. "hubble_deep_field retina rocket; do ln -s " .. SK .. "/$f.jpg '" .. root .. "/jpg/'; done")
    local ds = D.ImageFolder(root)
    local p = io.popen("cd /tmp && /usr/bin/python3 -c \"\n"
      .. "import glob, sys, warnings\nfrom PIL import Image\nwarnings.simplefilter('ignore')\n"
      .. "for f in sorted(glob.glob('" .. root .. "/jpg/*')) + sorted(glob.glob('" .. root .. "/png/*')):\n"
      .. "    im = Image.open(f).convert('RGB'); w, h = im.size; b = im.tobytes()\n"
      .. "    pick = [b[(k * 7919) % len(b)] for k in range(64)]\n"
      .. "    print(f, h, w, sum(b), *pick)\n\"")
    local rows = {}
    for line in p:lines() do rows[#rows + 1] = line end
    p:close()
    check_eq(#rows, #ds, "PIL read every file")
    for i, line in ipairs(rows) do
      local f, h, w, sum, rest = line:match("^(%S+) (%d+) (%d+) (%d+) (.*)$")
      check_eq(ds.samples[i][1], f, "sample order")
      local x = ds[i][1]
      check_shape(x, {3, tonumber(h), tonumber(w)})
      check_eq(x:long():sum():item(), tonumber(sum), f .. ": sum of bytes")
      local hwc = x:permute(2, 3, 1):contiguous():flatten()
      local k = 0
      for v in rest:gmatch("%d+") do
        check_eq(hwc[(k * 7919) % hwc:numel() + 1]:item(), tonumber(v), f .. " byte " .. k)
        k = k + 1
      end
    end
    sh("ln -s " .. SK .. "/truncated.jpg '" .. root .. "/jpg/'")
    local bad = D.ImageFolder(root)
    local at
    for i, s in ipairs(bad.samples) do if s[1]:find("truncated", 1, true) then at = i end end
    check_error(function() return bad[at] end, "truncated.jpg: JPEG decoder:")
  end)
end

sh("rm -rf '" .. dir .. "'")
