-- torch.rl.tensordict -- TensorDict: a dictionary of tensors (and nested
-- TensorDicts) sharing leading batch dimensions, on tensordict's names.
-- Leaves live in two flat raw fields: _k (names in insertion order) and _d
-- (name -> value); batch_size is a torch.Size table. No leaf math here beyond
-- the per-leaf calls; stack and cat join leaves in one C call
-- (l_tensordict.c). torch.save writes the raw fields; torch.load revives
-- them through TensorDict.__load (the __torch_class field names the class).
local torch = require "torch"
local C = require "torch.rl._tensordict"

local is_tensor = torch.is_tensor
local SIZE = getmetatable(torch.zeros(0).shape)
local CLASS = "torch.rl.TensorDict"
local join = C.join
local type, rawget, rawset, setmetatable, getmetatable = type, rawget, rawset, setmetatable, getmetatable
local fmt = string.format

local TD = {__name = "TensorDict"} -- the class: methods, and TensorDict.stack, .cat, ...
local MT = {__name = "TensorDict"} -- the instances' metatable (__index at the end)
local TensorDict = TD

local function is_td(v) return getmetatable(v) == MT end

local function new(k, d, bs, dev)
  return setmetatable({_k = k, _d = d, batch_size = bs, device = dev, __torch_class = CLASS}, MT)
end

local function size_of(t) return setmetatable(t, SIZE) end

local function size_str(s)
  if #s == 0 then return "[]" end
  local p = {}
  for i = 1, #s do p[i] = tostring(s[i]) end
  return "[" .. table.concat(p, ", ") .. "]"
end

local function key_str(key)
  if type(key) == "table" then return "(" .. table.concat(key, ", ") .. ")" end
  return tostring(key)
end

-- A batch size given as a table, torch.Size, number or nothing -> a fresh Size.
local function check_batch_size(fname, bs)
  if bs == nil then return size_of({}) end
  if type(bs) == "number" then bs = {bs} end
  if type(bs) ~= "table" then error(fmt("%s: batch_size must be a table of sizes, got a %s", fname, type(bs)), 3) end
  local out = {}
  for i = 1, #bs do
    local v = bs[i]
    if math.type(v) ~= "integer" or v < 0 then
      error(fmt("%s: batch_size entries must be non-negative integers, got %s at position %d", fname, tostring(v), i), 3)
    end
    out[i] = v
  end
  return size_of(out)
end

local function dev_str(d)
  if d == nil then return nil end
  return tostring(d)
end

-- Error unless tensor v's leading dims equal batch size bs.
local function check_leaf(fname, key, v, bs)
  local nb = #bs
  local nd = v:dim()
  local ok = nd >= nb
  if ok then
    for i = 1, nb do
      if v:size(i) ~= bs[i] then ok = false; break end
    end
  end
  if not ok then
    error(fmt("%s: key '%s' has shape %s, whose leading dims do not match the batch size %s", fname, key_str(key),
      size_str(v.shape), size_str(bs)), 4)
  end
end

local from_table

-- A value to store under key: tensors are checked (and moved to dev), plain
-- tables become nested TensorDicts, TensorDicts must lead with bs.
local function as_value(fname, key, v, bs, dev)
  if is_tensor(v) then
    check_leaf(fname, key, v, bs)
    if dev and tostring(v.device) ~= dev then v = v:to(dev) end
    return v
  elseif is_td(v) then
    local vb = v.batch_size
    local ok = #vb >= #bs
    for i = 1, #bs do if vb[i] ~= bs[i] then ok = false end end
    if not ok then
      error(fmt("%s: nested TensorDict at key '%s' has batch size %s, which does not start with the batch size %s",
        fname, key_str(key), size_str(vb), size_str(bs)), 4)
    end
    if dev and v.device ~= dev then v = v:to(dev) end
    return v
  elseif type(v) == "table" and getmetatable(v) == nil then
    return from_table(fname, v, bs, dev, key)
  end
  error(fmt("%s: key '%s' holds a %s; values must be tensors, TensorDicts or tables of them", fname, key_str(key),
    type(v)), 4)
end

-- A TensorDict from a plain table of name -> tensor / table / TensorDict.
function from_table(fname, src, bs, dev, prefix)
  local k, d = {}, {}
  for name in pairs(src) do
    if type(name) ~= "string" then
      error(fmt("%s: keys must be strings, got a %s key", fname, type(name)), 4)
    end
    k[#k + 1] = name
  end
  table.sort(k) -- pairs order is arbitrary: sorted, so equal sources give equal TensorDicts
  for i = 1, #k do
    local name = k[i]
    local path = name
    if prefix then path = type(prefix) == "table" and {table.unpack(prefix)} or {prefix}; path[#path + 1] = name end
    d[name] = as_value(fname, path, src[name], bs, dev)
  end
  return new(k, d, bs, dev)
end

-- TensorDict(source, batch_size[, {device=}]) -- see docs/api/rl.tensordict.md
setmetatable(TD, {__call = function(_, source, batch_size, opts)
  local fname = "TensorDict"
  if is_td(source) then return source:clone() end
  if source ~= nil and (type(source) ~= "table" or getmetatable(source) ~= nil) then
    error(fmt("%s: source must be a table of tensors, got a %s", fname, type(source)), 2)
  end
  if type(batch_size) == "table" and getmetatable(batch_size) == nil and opts == nil then
    local s = next(batch_size)
    if type(s) == "string" then opts, batch_size = batch_size, batch_size.batch_size end
  end
  if opts then torch._check_options(fname, opts, "device batch_size") end
  local bs = check_batch_size(fname, batch_size)
  return from_table(fname, source or {}, bs, dev_str(opts and opts.device))
end})

---------------------------------------------------------------------------
-- keys

local function is_key_path(k)
  if type(k) ~= "table" or getmetatable(k) ~= nil or #k == 0 then return false end
  for i = 1, #k do if type(k[i]) ~= "string" then return false end end
  return true
end

-- get(key[, default]): key a string or a table of strings (a nested key).
function TD:get(key, default)
  if type(key) == "string" then
    local v = self._d[key]
    if v == nil then return default end
    return v
  end
  if not is_key_path(key) then
    error(fmt("TensorDict.get: key must be a string or a table of strings, got %s", type(key)), 2)
  end
  local t = self
  for i = 1, #key do
    if not is_td(t) then return default end
    t = t._d[key[i]]
    if t == nil then return default end
  end
  return t
end

-- Appends a leaf to td (no checks).
local function put(td, name, v)
  local d = td._d
  if d[name] == nil then
    local k = td._k
    k[#k + 1] = name
  end
  d[name] = v
end

-- set(key, value) -> self: value a tensor whose leading dims are the batch
-- size, a TensorDict or a plain table (a nested TensorDict).
function TD:set(key, value)
  if type(key) == "string" then
    put(self, key, as_value("TensorDict.set", key, value, self.batch_size, self.device))
    return self
  end
  if not is_key_path(key) then
    error(fmt("TensorDict.set: key must be a string or a table of strings, got %s", type(key)), 2)
  end
  local t = self
  for i = 1, #key - 1 do
    local n = t._d[key[i]]
    if n == nil then
      n = new({}, {}, t.batch_size, t.device)
      put(t, key[i], n)
    elseif not is_td(n) then
      error(fmt("TensorDict.set: key '%s' is a tensor, not a nested TensorDict", key[i]), 2)
    end
    t = n
  end
  put(t, key[#key], as_value("TensorDict.set", key, value, t.batch_size, t.device))
  return self
end

local function remove_name(td, name)
  local k = td._k
  for i = 1, #k do
    if k[i] == name then table.remove(k, i); break end
  end
  td._d[name] = nil
end

-- del(key) -> self: removes a key (string or nested); error if absent.
function TD:del(key)
  local path = type(key) == "string" and {key} or key
  local t = self
  for i = 1, #path - 1 do t = t._d[path[i]] end
  if not is_td(t) or t._d[path[#path]] == nil then
    error(fmt("TensorDict.del: key '%s' is not in the TensorDict", key_str(key)), 2)
  end
  remove_name(t, path[#path])
  return self
end

-- pop(key[, default]) -> the removed value
function TD:pop(key, default)
  local v = self:get(key)
  if v == nil then
    if default ~= nil then return default end
    error(fmt("TensorDict.pop: key '%s' is not in the TensorDict", key_str(key)), 2)
  end
  self:del(key)
  return v
end

-- keys([{include_nested=false, leaves_only=false}]) -> a list of keys
-- (strings; nested keys as tables of strings) in insertion order.
function TD:keys(opts)
  local nested, leaves = false, false
  if opts then
    torch._check_options("TensorDict.keys", opts, "include_nested leaves_only")
    nested, leaves = opts.include_nested, opts.leaves_only
  end
  local out = {}
  local function walk(td, prefix)
    local k, d = td._k, td._d
    for i = 1, #k do
      local name = k[i]
      local v = d[name]
      local key = name
      if prefix then key = {table.unpack(prefix)}; key[#key + 1] = name end
      local sub = is_td(v)
      if not (leaves and sub) then out[#out + 1] = key end
      if sub and nested then walk(v, type(key) == "table" and key or {key}) end
    end
  end
  walk(self, nil)
  return out
end

-- items([opts]) -> iterator of key, value (opts as keys)
function TD:items(opts)
  local ks, i = self:keys(opts), 0
  return function()
    i = i + 1
    local key = ks[i]
    if key == nil then return nil end
    return key, self:get(key)
  end
end

-- values([opts]) -> iterator of values (opts as keys)
function TD:values(opts)
  local it = self:items(opts)
  return function()
    local _, v = it()
    return v
  end
end

function TD:is_empty()
  for _, v in pairs(self._d) do
    if not is_td(v) or not v:is_empty() then return false end
  end
  return true
end

function TD:numel()
  local n = 1
  local bs = self.batch_size
  for i = 1, #bs do n = n * bs[i] end
  return n
end

function TD:batch_dims() return #self.batch_size end
function TD:ndim() return #self.batch_size end
function TD:dim() return #self.batch_size end

---------------------------------------------------------------------------
-- leaf-wise maps

-- A new TensorDict of fn(leaf) for every leaf (nested: recursively), with
-- batch size bs_fn(old batch size) and device dev; fn returning nil drops
-- the key.
local function map(td, fn, bs_fn, dev)
  local k, d = td._k, td._d
  local nk, nd = {}, {}
  for i = 1, #k do
    local name = k[i]
    local v = d[name]
    local r
    if is_td(v) then r = map(v, fn, bs_fn, dev) else r = fn(v, name) end
    if r ~= nil then
      nk[#nk + 1] = name
      nd[name] = r
    end
  end
  return new(nk, nd, bs_fn and bs_fn(td.batch_size) or td.batch_size, dev)
end

-- apply(fn[, ...other TensorDicts][, {batch_size=}]) -> TensorDict of
-- fn(leaf, other_leaf, ...); keys where fn returns nil are left out.
function TD:apply(fn, ...)
  local others = {...}
  local opts = others[#others]
  local bs
  if type(opts) == "table" and not is_td(opts) then
    others[#others] = nil
    torch._check_options("TensorDict.apply", opts, "batch_size")
    if opts.batch_size then bs = check_batch_size("TensorDict.apply", opts.batch_size) end
  end
  local function go(td, os)
    local k, d = td._k, td._d
    local nk, nd = {}, {}
    for i = 1, #k do
      local name = k[i]
      local v = d[name]
      local ov = {}
      for j = 1, #os do
        ov[j] = os[j]._d[name]
        if ov[j] == nil then
          error(fmt("TensorDict.apply: key '%s' is missing from TensorDict argument %d", name, j + 1), 4)
        end
      end
      local r
      if is_td(v) then r = go(v, ov) else r = fn(v, table.unpack(ov)) end
      if r ~= nil then nk[#nk + 1] = name; nd[name] = r end
    end
    return new(nk, nd, td.batch_size, td.device)
  end
  local out = go(self, others)
  if bs then
    out = map(out, function(v, name) check_leaf("TensorDict.apply", name, v, bs); return v end,
      function() return bs end, out.device)
  end
  return out
end

local function clone_leaf(v) return v:clone() end
local function detach_leaf(v) return v:detach() end

function TD:clone() return map(self, clone_leaf, nil, self.device) end
function TD:detach() return map(self, detach_leaf, nil, self.device) end
function TD:copy() return map(self, function(v) return v end, nil, self.device) end

-- to(device | dtype) -> a new TensorDict with every leaf converted
function TD:to(x)
  local s = tostring(x)
  local is_dtype = s:match("^torch%.") ~= nil
  return map(self, function(v) return v:to(x) end, nil, is_dtype and self.device or s)
end
function TD:cpu() return self:to("cpu") end
function TD:cuda() return self:to("cuda") end

-- zero_() -> self, every leaf zeroed in place
function TD:zero_()
  for _, v in pairs(self._d) do v:zero_() end
  return self
end

-- update(other) -> self: every key of other (a TensorDict or plain table)
-- set into self; nested TensorDicts are merged key by key.
function TD:update(other)
  if is_td(other) then
    local k, d = other._k, other._d
    for i = 1, #k do
      local name = k[i]
      local v = d[name]
      local mine = self._d[name]
      if is_td(v) and is_td(mine) then mine:update(v) else self:set(name, v) end
    end
  elseif type(other) == "table" then
    for name, v in pairs(other) do
      local mine = self._d[name]
      if type(v) == "table" and not is_tensor(v) and is_td(mine) then mine:update(v) else self:set(name, v) end
    end
  else
    error(fmt("TensorDict.update: expected a TensorDict or a table, got a %s", type(other)), 2)
  end
  return self
end

-- The keys of a select/exclude call: varargs or one list of keys.
local function key_args(...)
  local ks = {...}
  if #ks == 1 and type(ks[1]) == "table" and not is_key_path(ks[1]) then ks = ks[1] end
  return ks
end

-- select(key, ...) -> a TensorDict of those keys only (leaves shared);
-- a missing key is an error unless {strict=false} ends the list.
function TD:select(...)
  local ks = key_args(...)
  local strict = true
  if type(ks[#ks]) == "table" and ks[#ks].strict ~= nil then strict = ks[#ks].strict; ks[#ks] = nil end
  local out = new({}, {}, self.batch_size, self.device)
  for i = 1, #ks do
    local key = ks[i]
    local path = type(key) == "string" and {key} or key
    local src, dst = self, out
    for j = 1, #path - 1 do
      src = src._d[path[j]]
      if not is_td(src) then src = nil; break end
      local n = dst._d[path[j]]
      if n == nil then n = new({}, {}, src.batch_size, src.device); put(dst, path[j], n) end
      dst = n
    end
    local v = src and src._d[path[#path]]
    if v == nil then
      if strict then error(fmt("TensorDict.select: key '%s' is not in the TensorDict", key_str(key)), 2) end
    else
      put(dst, path[#path], v)
    end
  end
  return out
end

-- exclude(key, ...) -> a TensorDict without those keys (leaves shared)
function TD:exclude(...)
  local ks = key_args(...)
  local out = self:copy()
  for i = 1, #ks do
    if out:get(ks[i]) ~= nil then out:del(ks[i]) end
  end
  return out
end

-- flatten_keys([sep="."]) -> a TensorDict without nesting: "next.obs"
function TD:flatten_keys(sep)
  sep = sep or "."
  local nk, nd = {}, {}
  local function walk(td, prefix)
    local k, d = td._k, td._d
    for i = 1, #k do
      local name = prefix and prefix .. sep .. k[i] or k[i]
      local v = d[k[i]]
      if is_td(v) then walk(v, name) else nk[#nk + 1] = name; nd[name] = v end
    end
  end
  walk(self, nil)
  return new(nk, nd, self.batch_size, self.device)
end

-- unflatten_keys([sep="."]) -> nested keys from names joined by sep
function TD:unflatten_keys(sep)
  sep = sep or "."
  local out = new({}, {}, self.batch_size, self.device)
  local k, d = self._k, self._d
  for i = 1, #k do
    local path, start = {}, 1
    while true do
      local a, b = string.find(k[i], sep, start, true)
      if not a then path[#path + 1] = k[i]:sub(start); break end
      path[#path + 1] = k[i]:sub(start, a - 1)
      start = b + 1
    end
    local v = d[k[i]]
    if is_td(v) then v = v:unflatten_keys(sep) end
    out:set(#path == 1 and path[1] or path, v)
  end
  return out
end

---------------------------------------------------------------------------
-- batch indexing

-- A batch dim d (1-based, negative from the end) of batch size bs -> 1..#bs
-- (1..#bs+extra for a new dim).
local function bdim(fname, d, bs, extra)
  local n, hi = #bs, #bs + (extra or 0)
  if math.type(d) ~= "integer" then error(fmt("%s: dim must be an integer, got %s", fname, tostring(d)), 3) end
  local r = d < 0 and d + hi + 1 or d
  if r < 1 or r > hi then
    error(fmt("%s: dim %d is out of range for batch size %s (%d batch dims)", fname, d, size_str(bs), n), 3)
  end
  return r
end

-- The batch index idx (number, {from, to}, bool mask, int64 tensor) as a
-- leaf function and the new batch size.
local function indexer(fname, idx, bs)
  local n1 = bs[1]
  if #bs == 0 then error(fmt("%s: a TensorDict with an empty batch size cannot be indexed", fname), 3) end
  local rest = {}
  for i = 2, #bs do rest[#rest + 1] = bs[i] end
  if math.type(idx) == "integer" then
    local i = idx < 0 and idx + n1 + 1 or idx
    if i < 1 or i > n1 then
      error(fmt("%s: index %d is out of range for batch dim 1 of size %d", fname, idx, n1), 3)
    end
    return function(v) return v:select(1, i) end, size_of(rest), i
  end
  if type(idx) == "table" and not is_tensor(idx) then
    local a, b = idx[1], idx[2]
    if math.type(a) ~= "integer" or math.type(b) ~= "integer" or #idx ~= 2 then
      error(fmt("%s: a range index must be {from, to} (integers), got a table of %d entries", fname, #idx), 3)
    end
    if a < 0 then a = a + n1 + 1 end
    if b < 0 then b = b + n1 + 1 end
    if a < 1 or b > n1 or b < a - 1 then
      error(fmt("%s: range {%d, %d} is out of bounds for batch dim 1 of size %d", fname, idx[1], idx[2], n1), 3)
    end
    local len = b - a + 1
    local nb = {len}
    for i = 1, #rest do nb[i + 1] = rest[i] end
    return function(v) return v:narrow(1, a, len) end, size_of(nb), {a, b}
  end
  if is_tensor(idx) then
    if idx.dtype == torch.bool then
      local md = idx:dim()
      local ok = md <= #bs
      for i = 1, md do if ok and idx:size(i) ~= bs[i] then ok = false end end
      if not ok then
        error(fmt("%s: mask of shape %s does not match the batch size %s", fname, size_str(idx.shape), size_str(bs)), 3)
      end
      local nb = {idx:sum():item()}
      for i = md + 1, #bs do nb[#nb + 1] = bs[i] end
      return function(v) return v[idx] end, size_of(nb), idx
    elseif idx.dtype == torch.int64 or idx.dtype == torch.int32 then
      if idx:numel() > 0 then
        local lo, hi = idx:min():item(), idx:max():item()
        if lo < 1 or hi > n1 then
          error(fmt("%s: index tensor holds %d, out of range 1..%d for batch dim 1", fname, lo < 1 and lo or hi, n1), 3)
        end
      end
      local nb = {}
      for i = 1, idx:dim() do nb[i] = idx:size(i) end
      for i = 1, #rest do nb[#nb + 1] = rest[i] end
      if idx.dtype ~= torch.int64 then idx = idx:long() end
      return function(v) return v[idx] end, size_of(nb), idx
    end
    error(fmt("%s: index tensors must be bool or int64, got %s", fname, tostring(idx.dtype)), 3)
  end
  error(fmt("%s: index must be a number, a {from, to} range or a bool/int64 tensor, got a %s", fname, type(idx)), 3)
end

-- A TensorDict of f(leaf) for every leaf, whose batch size nb replaces the
-- leading #self.batch_size dims (nested TensorDicts keep their extra dims).
local function index_with(self, f, nb)
  local nlead = #self.batch_size
  local function go(td, bs)
    local k, d = td._k, td._d
    local nk, nd = {}, {}
    for i = 1, #k do
      local v = d[k[i]]
      nk[i] = k[i]
      if is_td(v) then
        local vb = {}
        for j = 1, #nb do vb[j] = nb[j] end
        for j = nlead + 1, #v.batch_size do vb[#vb + 1] = v.batch_size[j] end
        nd[k[i]] = go(v, size_of(vb))
      else
        nd[k[i]] = f(v)
      end
    end
    return new(nk, nd, bs, td.device)
  end
  return go(self, nb)
end
TensorDict._index_with = index_with

local function index(self, idx, fname)
  local f, nb = indexer(fname or "TensorDict.index", idx, self.batch_size)
  return index_with(self, f, nb)
end

-- index(i) -> TensorDict: i a number (dim 1 dropped), a {from, to} range,
-- a bool mask over leading batch dims or an int64 tensor of 1-based rows.
function TD:index(idx) return index(self, idx) end

-- set_at(index, other) -> self: writes other's leaves into the rows index
-- selects (tensordict's td[idx] = other); every key of other must exist.
function TD:set_at(idx, other)
  local fname = "TensorDict.set_at"
  local _, _, norm = indexer(fname, idx, self.batch_size)
  if type(other) == "table" and not is_td(other) then other = TensorDict(other) end
  local key = type(norm) == "table" and {norm} or norm
  TensorDict._zip_leaves(self, other, function(mine, v) mine[key] = v end, fname)
  return self
end

-- _zip_leaves(dst, src, fn, fname): fn(dst_leaf, src_leaf, name) for every
-- leaf of src; a key of src missing from dst is an error naming fname.
function TensorDict._zip_leaves(dst, src, fn, fname)
  local function go(a, b, path)
    local k, d = b._k, b._d
    for i = 1, #k do
      local name = k[i]
      local mine = a._d[name]
      local full = path and path .. "." .. name or name
      if mine == nil then error(fmt("%s: key '%s' is not in the TensorDict written to", fname, full), 4) end
      local v = d[name]
      if is_td(v) then go(mine, v, full) else fn(mine, v, name) end
    end
  end
  go(dst, src, nil)
end

---------------------------------------------------------------------------
-- batch shape

local function leaf_shape(v, newbatch, nold)
  local s = {}
  for i = 1, #newbatch do s[i] = newbatch[i] end
  for i = nold + 1, v:dim() do s[#s + 1] = v:size(i) end
  return s
end

-- The shape arguments of reshape/view/expand: varargs or one table.
local function shape_args(fname, ...)
  local s = ...
  if type(s) ~= "table" then s = {...} end
  local out = {}
  for i = 1, #s do
    if math.type(s[i]) ~= "integer" then error(fmt("%s: sizes must be integers, got %s", fname, tostring(s[i])), 3) end
    out[i] = s[i]
  end
  return out
end

local function reshape_impl(self, fname, method, ...)
  local s = shape_args(fname, ...)
  local n, known, free = self:numel(), 1, nil
  for i = 1, #s do
    if s[i] == -1 then
      if free then error(fmt("%s: only one size may be -1", fname), 3) end
      free = i
    else
      known = known * s[i]
    end
  end
  if free then
    if known == 0 or n % known ~= 0 then
      error(fmt("%s: shape %s is invalid for a batch of %d elements", fname, size_str(s), n), 3)
    end
    s[free] = n // known
  elseif known ~= n then
    error(fmt("%s: shape %s is invalid for batch size %s (%d elements)", fname, size_str(s), size_str(self.batch_size), n), 3)
  end
  local nold = #self.batch_size
  local nb = size_of(s)
  return map(self, function(v) return v[method](v, leaf_shape(v, s, nold)) end, function(b)
    local r = {}
    for i = 1, #s do r[i] = s[i] end
    for i = nold + 1, #b do r[#r + 1] = b[i] end
    return size_of(r)
  end, self.device), nb
end

function TD:reshape(...) return (reshape_impl(self, "TensorDict.reshape", "reshape", ...)) end
function TD:view(...) return (reshape_impl(self, "TensorDict.view", "view", ...)) end

-- expand(...) -> batch dims broadcast to the new shape (leading dims may be added)
function TD:expand(...)
  local fname = "TensorDict.expand"
  local s = shape_args(fname, ...)
  local bs = self.batch_size
  local off = #s - #bs
  if off < 0 then
    error(fmt("%s: the new shape %s has fewer dims than the batch size %s", fname, size_str(s), size_str(bs)), 2)
  end
  for i = 1, #bs do
    local want = s[i + off]
    if want == -1 then s[i + off] = bs[i] elseif bs[i] ~= want and bs[i] ~= 1 then
      error(fmt("%s: batch size %s cannot be expanded to %s", fname, size_str(bs), size_str(s)), 2)
    end
  end
  local nold = #bs
  return map(self, function(v) return v:expand(leaf_shape(v, s, nold)) end, function(b)
    local r = {}
    for i = 1, #s do r[i] = s[i] end
    for i = nold + 1, #b do r[#r + 1] = b[i] end
    return size_of(r)
  end, self.device)
end

local function with_dim(fname, td, d, op, delta)
  local nb = td.batch_size
  return map(td, function(v) return v[op](v, d) end, function(b)
    local r = {}
    for i = 1, #b do r[i] = b[i] end
    if delta < 0 then table.remove(r, d) else table.insert(r, d, 1) end
    return size_of(r)
  end, td.device), nb
end

-- unsqueeze(dim) -> a new batch dim of size 1 at dim (1..batch_dims+1)
function TD:unsqueeze(dim)
  local d = bdim("TensorDict.unsqueeze", dim, self.batch_size, 1)
  return (with_dim("TensorDict.unsqueeze", self, d, "unsqueeze", 1))
end

-- squeeze([dim]) -> batch dims of size 1 removed (only dim when given)
function TD:squeeze(dim)
  local bs = self.batch_size
  if dim == nil then
    local out = self
    for i = #bs, 1, -1 do
      if bs[i] == 1 then out = with_dim("TensorDict.squeeze", out, i, "squeeze", -1) end
    end
    return out == self and self:copy() or out
  end
  local d = bdim("TensorDict.squeeze", dim, bs)
  if bs[d] ~= 1 then return self:copy() end
  return (with_dim("TensorDict.squeeze", self, d, "squeeze", -1))
end

-- unbind(dim) -> a list of TensorDicts, one per entry of batch dim dim
-- (views; one unbind call per leaf)
function TD:unbind(dim)
  local bs = self.batch_size
  local d = bdim("TensorDict.unbind", dim or 1, bs)
  local n = bs[d]
  local function go(td)
    local b = td.batch_size
    local r = {}
    for j = 1, #b do if j ~= d then r[#r + 1] = b[j] end end
    local ds = {}
    for i = 1, n do ds[i] = {} end
    local k = td._k
    for x = 1, #k do
      local v = td._d[k[x]]
      local parts = is_td(v) and go(v) or v:unbind(d)
      for i = 1, n do ds[i][k[x]] = parts[i] end
    end
    local out = {}
    for i = 1, n do out[i] = new(table.move(k, 1, #k, 1, {}), ds[i], size_of(i == 1 and r or table.move(r, 1, #r, 1, {})), td.device) end
    return out
  end
  return go(self)
end

---------------------------------------------------------------------------
-- stack and cat

-- Joins the leaves of tds (stack: a new batch dim d; cat: along d), nested
-- TensorDicts recursively; nbs is the new batch size of this level.
local function join_tds(fname, tds, d, stack, nbs, nlead)
  local first = tds[1]
  local k = first._k
  local n = #tds
  local ds = {}
  for j = 1, n do
    local t = tds[j]
    if #t._k ~= #k then
      error(fmt("%s: TensorDict %d of the list has %d keys, TensorDict 1 has %d", fname, j, #t._k, #k), 4)
    end
    ds[j] = t._d
  end
  local out, skipped = join(ds, k, d - 1, stack, fname)
  local nk = table.move(k, 1, #k, 1, {})
  if skipped == 0 then return new(nk, out, nbs, first.device) end
  for i = 1, #k do
    local name = k[i]
    if out[name] == nil then -- a nested TensorDict
      local subs = {}
      for j = 1, n do
        local s = ds[j][name]
        if not is_td(s) then
          error(fmt("%s: key '%s' is %s in TensorDict %d of the list but a TensorDict in TensorDict 1", fname, name,
            s == nil and "missing" or "a tensor", j), 4)
        end
        subs[j] = s
      end
      local sb = subs[1].batch_size
      local r = {}
      for x = 1, #nbs do r[x] = nbs[x] end
      for x = nlead + 1, #sb do r[#r + 1] = sb[x] end
      out[name] = join_tds(fname, subs, d, stack, size_of(r), nlead)
    end
  end
  return new(nk, out, nbs, first.device)
end

local function check_list(fname, tds)
  if type(tds) ~= "table" or #tds == 0 then
    error(fmt("%s: expected a non-empty list of TensorDicts", fname), 3)
  end
  local bs = tds[1].batch_size
  for j = 1, #tds do
    local t = tds[j]
    if not is_td(t) then error(fmt("%s: element %d of the list is a %s, not a TensorDict", fname, j, type(t)), 3) end
  end
  return bs
end

-- TensorDict.stack(list[, dim=1]) -> a TensorDict with a new batch dim
function TensorDict.stack(tds, dim)
  local fname = "TensorDict.stack"
  local bs = check_list(fname, tds)
  local nb = #bs
  for j = 2, #tds do
    local b = tds[j].batch_size
    local same = #b == nb
    for i = 1, nb do if same and b[i] ~= bs[i] then same = false end end
    if not same then
      error(fmt("%s: TensorDict %d has batch size %s, TensorDict 1 has %s", fname, j, size_str(b), size_str(bs)), 2)
    end
  end
  local d = bdim(fname, dim or 1, bs, 1)
  local r = {}
  for i = 1, nb do r[i] = bs[i] end
  table.insert(r, d, #tds)
  return join_tds(fname, tds, d, true, size_of(r), nb)
end

-- TensorDict.cat(list[, dim=1]) -> a TensorDict joined along batch dim dim
function TensorDict.cat(tds, dim)
  local fname = "TensorDict.cat"
  local bs = check_list(fname, tds)
  local nb = #bs
  local d = bdim(fname, dim or 1, bs)
  local total = 0
  for j = 1, #tds do
    local b = tds[j].batch_size
    local same = #b == nb
    for i = 1, nb do if same and i ~= d and b[i] ~= bs[i] then same = false end end
    if not same then
      error(fmt("%s: TensorDict %d has batch size %s, TensorDict 1 has %s (only dim %d may differ)", fname, j,
        size_str(b), size_str(bs), d), 2)
    end
    total = total + b[d]
  end
  local r = {}
  for i = 1, nb do r[i] = bs[i] end
  r[d] = total
  return join_tds(fname, tds, d, false, size_of(r), nb)
end

TensorDict.is_tensordict = is_td
TensorDict._new = new

---------------------------------------------------------------------------
-- printing and saving

local function repr(td, indent)
  local pad = string.rep("    ", indent)
  local ks = {}
  for i = 1, #td._k do ks[i] = td._k[i] end
  table.sort(ks)
  local lines = {}
  for i = 1, #ks do
    local v = td._d[ks[i]]
    local s
    if is_td(v) then
      s = repr(v, indent + 2)
    else
      s = fmt("Tensor(shape=%s, device=%s, dtype=%s)", tostring(v.shape), tostring(v.device), tostring(v.dtype))
    end
    lines[i] = pad .. "        " .. ks[i] .. ": " .. s
  end
  return "TensorDict(\n" .. pad .. "    fields={" .. (#lines > 0 and "\n" .. table.concat(lines, ",\n") or "") ..
    "},\n" .. pad .. "    batch_size=" .. tostring(td.batch_size) .. ",\n" .. pad .. "    device=" ..
    (td.device or "nil") .. ")"
end

MT.__tostring = function(td) return repr(td, 0) end
MT.__len = function(td) return td.batch_size[1] or 0 end

-- torch.load: the raw fields back as a TensorDict, checked like a new one.
function TensorDict.__load(t)
  if type(t._k) ~= "table" or type(t._d) ~= "table" or type(t.batch_size) ~= "table" then
    error("TensorDict: the saved TensorDict lacks its keys, leaves or batch size", 2)
  end
  local bs = check_batch_size("TensorDict (loaded)", t.batch_size)
  local k = t._k
  for i = 1, #k do
    local v = t._d[k[i]]
    if v == nil then error(fmt("TensorDict (loaded): key '%s' has no value", tostring(k[i])), 2) end
    as_value("TensorDict (loaded)", k[i], v, bs, nil)
  end
  return new(k, t._d, bs, t.device)
end

---------------------------------------------------------------------------
-- field access: methods first, then keys, batch indexing, nested key paths

MT.__index = function(t, key)
  local m = TD[key]
  if m ~= nil then return m end
  local tk = type(key)
  if tk == "string" then
    if key == "device" then return nil end
    return t._d[key]
  end
  if tk == "table" and is_key_path(key) then return t:get(key) end
  if tk == "number" or tk == "table" or is_tensor(key) then return index(t, key, "TensorDict[]") end
  return nil
end

MT.__newindex = function(t, key, v)
  if type(key) == "string" or is_key_path(key) then
    t:set(key, v)
  else
    t:set_at(key, v)
  end
end

TD.__index = MT.__index -- marks TD as a class for help() and the API reference

return {TensorDict = TensorDict}
