-- help.lua -- help() and the index of the API reference. The reference,
-- docs/api/*.md, is compiled into the torch module as one string, and its
-- entries are the texts help() prints. An entry is one list item naming a
-- value under one or more names, then what it is:
--   - `torch.add(a, b)`, `x:add` -- a + b (broadcasting; {alpha=} scales b)
-- Functions that carry a help text in the code (an mtl_reg row, U.doc) have
-- entries that copy it (scripts/api_docs.lua rewrites them; the docs test
-- fails when they differ); Lua classes and methods are described by their
-- entries alone. Runs as chunk(torch, docs) and returns its functions
-- (torch._api()); it never prints (l_misc.c shows and pages the text).
local torch, DOCS = ...

local H = {}
local METHODS = debug.getregistry()["mtl.methods"]
local CODE_HELP = debug.getregistry()["mtl.help"]

-- The namespaces whose public fields the reference covers (key: the full
-- module name). Other tables among their fields are values (dtypes, lists).
H.NAMESPACES = {
  "torch", "torch.Tensor", "torch.linalg", "torch.autograd", "torch.cuda", "torch.cuda.amp", "torch.compiler",
  "torch.backends", "torch.backends.cudnn", "torch.amp", "torch.profiler", "torch.nn", "torch.nn.functional",
  "torch.nn.init", "torch.nn.utils", "torch.optim", "torch.optim.lr_scheduler", "torch.utils", "torch.utils.data",
  "torch.utils.tensorboard", "torch.experiment", "torch.plot", "torch.plot.ticks", "torch.vision",
  "torch.vision.io", "torch.vision.datasets", "torch.vision.utils", "torch.vision.tv_tensors",
  "torch.vision.transforms", "torch.vision.transforms.v2", "torch.vision.transforms.v2.functional",
  "torch.vision.models", "torch.vision.ops", "torch.fft", "torch.audio", "torch.audio.io", "torch.audio.datasets",
  "torch.audio.functional", "torch.audio.transforms", "torch.distributions", "torch.rl", "torch.rl.data",
  "torch.rl.envs", "torch.rl.modules", "torch.rl.objectives", "torch.rl.objectives.value", "torch.rl.collectors",
}
local IS_NAMESPACE = {}
for _, n in ipairs(H.NAMESPACES) do IS_NAMESPACE[n] = true end

-- Short prefixes of the reference and the REPL's globals -> full names.
local PREFIXES = {{"F.", "torch.nn.functional."}, {"nn.", "torch.nn."}, {"optim.", "torch.optim."},
                  {"g:", "torch.Generator:"}}

---------------------------------------------------------------- entries

-- The full name ("key") a name of the reference stands for: x:add ->
-- torch.Tensor:add, x.shape -> torch.Tensor.shape, nn.Linear ->
-- torch.nn.Linear, F.relu -> torch.nn.functional.relu.
function H.key(name)
  local m = name:match("^[xyt]%[['\"]([%w_]+)['\"]%]")
  if m then return "torch.Tensor:" .. m end
  name = name:match("^[%w_.:*]+") or name
  local v, rest = name:match("^(%l)([:.].*)$")
  if v and (v == "x" or v == "y" or v == "t") then return "torch.Tensor" .. rest end
  for _, p in ipairs(PREFIXES) do
    if name:sub(1, #p[1]) == p[1] then return p[2] .. name:sub(#p[1] + 1) end
  end
  return name
end

-- The name users write for a key: the reverse of H.key.
function H.short(key)
  if key:sub(1, 13) == "torch.Tensor:" then return "x:" .. key:sub(14) end
  if key:sub(1, 13) == "torch.Tensor." then return "x." .. key:sub(14) end
  for _, p in ipairs(PREFIXES) do
    if key:sub(1, #p[2]) == p[2] then return p[1] .. key:sub(#p[2] + 1) end
  end
  return key
end

-- Parses one line: the names (code spans) and the description, or nil.
function H.parse_line(line)
  if line:sub(1, 3) ~= "- `" then return nil end
  local names, pos = {}, 3
  while true do
    local span, e = line:match("^`([^`]+)`()", pos)
    if not span then return nil end
    names[#names + 1] = span
    pos = e
    if line:sub(pos, pos + 1) == ", " then
      pos = pos + 2
    elseif line:sub(pos, pos + 3) == " -- " then
      return names, line:sub(pos + 4)
    else
      return nil
    end
  end
end

-- The entries of one page: {names=, keys=, sig=, desc=, text=, file=,
-- section=, line=} in page order.
function H.parse(text, file)
  local out, section, lineno = {}, nil, 0
  local fence = false
  for line in (text .. "\n"):gmatch("(.-)\r?\n") do
    lineno = lineno + 1
    if line:match("^```") then fence = not fence end
    if not fence then
      local h = line:match("^#+%s+(.-)%s*$")
      if h then section = h end
      local names, desc = H.parse_line(line)
      if names then
        local keys = {}
        for i, n in ipairs(names) do keys[i] = H.key(n) end
        out[#out + 1] = {names = names, keys = keys, sig = names[1], desc = desc, text = names[1] .. " -- " .. desc,
                         file = file, section = section, line = lineno}
      end
    end
  end
  return out
end

local ENTRIES, BY_KEY
-- Every entry of the compiled-in reference, and the map key -> entry.
function H.entries()
  if not ENTRIES then
    ENTRIES, BY_KEY = {}, {}
    -- pages are joined with a line "<!-- file: docs/api/x.md -->" before each
    local text = "\n" .. (DOCS or "")
    local starts = {}
    for pos, file in text:gmatch("()\n<!%-%- file: (%S+) %-%->") do starts[#starts + 1] = {pos, file} end
    for i, s in ipairs(starts) do
      local stop = starts[i + 1] and starts[i + 1][1] - 1 or #text
      local body = text:sub(s[1] + 1, stop):gsub("^[^\n]*\n", "")
      for _, e in ipairs(H.parse(body, s[2])) do ENTRIES[#ENTRIES + 1] = e end
    end
    for _, e in ipairs(ENTRIES) do
      for _, k in ipairs(e.keys) do BY_KEY[k] = BY_KEY[k] or e end
    end
  end
  return ENTRIES, BY_KEY
end

---------------------------------------------------------------- classes

-- A class: a table with a __name and an __index (nn.Module:extend,
-- Optimizer:extend, the Dataset helper, ...).
local function is_class(v)
  return type(v) == "table" and type(rawget(v, "__name")) == "string" and
         (rawget(v, "__index") ~= nil or rawget(v, "__module_class") ~= nil)
end
H.is_class = is_class

-- The class a class derives from, or nil.
local function parent_of(c)
  local p = rawget(c, "__parent")
  if p then return p end
  local mt = getmetatable(c)
  if mt and type(rawget(mt, "__index")) == "table" and is_class(mt.__index) then return mt.__index end
  return nil
end
H.parent_of = parent_of

local function instance_class(v)
  if type(v) ~= "table" or is_class(v) then return nil end
  local mt = getmetatable(v)
  if is_class(mt) then return mt end
  return nil
end

-- The public methods a class defines itself, sorted.
local function own_methods(c)
  local out, seen = {}, {}
  local idx = rawget(c, "__index")
  for _, t in ipairs{c, type(idx) == "table" and idx ~= c and idx or {}} do
    for k, v in pairs(t) do
      if type(k) == "string" and k:sub(1, 1) ~= "_" and type(v) == "function" and not seen[k] then
        seen[k] = true
        out[#out + 1] = k
      end
    end
  end
  table.sort(out)
  return out
end

-- The function of method m of class c (its own, or in its __index table).
local function method_of(c, m)
  local f = rawget(c, m)
  if f == nil and type(rawget(c, "__index")) == "table" then f = rawget(rawget(c, "__index"), m) end
  return f
end
H.own_methods = own_methods

---------------------------------------------------------------- names -> values

local function probe_tensors()
  local x = torch.ones(2, 2, {requires_grad = true})
  local y = x * 2
  y:sum():backward()
  return x, y
end

-- Finds the value of a key. load: allow loading packages (else only what
-- is loaded already is seen). Returns found, value.
function H.resolve(key, load)
  local path, method = key:match("^(.-):([%w_]+)$")
  if not path then path = key end
  local cls_wild = path:match("^(.*)%.%*$")
  if cls_wild then -- torch.nn.*:name: some class of the namespace defines it
    local ok, ns = H.resolve(cls_wild, load)
    if not ok or type(ns) ~= "table" then return false end
    for _, v in pairs(ns) do
      if is_class(v) and rawget(v, method) ~= nil then return true, nil end
    end
    return false
  end
  if path:sub(1, 13) == "torch.Tensor." then -- a property
    local prop = path:sub(14)
    if prop:find("[^%w_]") then return false end
    for _, t in ipairs{probe_tensors()} do
      local ok, r = pcall(function() return t[prop] end)
      if ok and r ~= nil then return true, r end
    end
    return false
  end
  local parts = {}
  for p in path:gmatch("[^.]+") do parts[#parts + 1] = p end
  if parts[1] ~= "torch" then return false end
  local v = torch
  for i = 2, #parts do
    if type(v) ~= "table" and type(v) ~= "userdata" then return false end
    local nv
    if load then
      local ok, r = pcall(function() return v[parts[i]] end)
      if not ok then return false end
      nv = r
    elseif type(v) == "table" then
      nv = rawget(v, parts[i])
      if nv == nil and is_class(v) then nv = v[parts[i]] end
    end
    if nv == nil then return false end
    v = nv
  end
  if method then
    if v == torch.Tensor then
      local m = rawget(METHODS, method)
      return m ~= nil, m
    end
    if is_class(v) then
      local m = rawget(v, method)
      return m ~= nil, m
    end
    if type(v) == "function" then -- methods of objects a constructor makes (torch.Generator, torch.Timer)
      local ok, obj = pcall(v)
      if ok and obj ~= nil then
        local ok2, m = pcall(function() return obj[method] end)
        if ok2 and m ~= nil then return true, m end
      end
    end
    return false
  end
  return true, v
end

-- value -> list of {key=, entry=} over the loaded packages (rebuilt when
-- a package was loaded since the last call).
local INDEX, INDEX_N
local function value_index()
  local n = 0
  for _ in pairs(package.loaded) do n = n + 1 end
  if INDEX and INDEX_N == n then return INDEX end
  local entries = H.entries()
  local idx = {}
  for _, e in ipairs(entries) do
    for _, k in ipairs(e.keys) do
      if not k:find("*", 1, true) and not k:find("^torch%.Tensor%.") then
        local ok, v = H.resolve(k, false)
        if ok and v ~= nil and (type(v) == "function" or type(v) == "table" or type(v) == "userdata") then
          local l = idx[v]
          if not l then l = {}; idx[v] = l end
          l[#l + 1] = {key = k, entry = e}
        end
      end
    end
  end
  INDEX, INDEX_N = idx, n
  return idx
end

-- The keys of the loaded classes: class table -> key.
local function class_keys(idx)
  local out = {}
  for v, l in pairs(idx) do
    if is_class(v) then
      for _, r in ipairs(l) do
        if not r.key:find(":", 1, true) then out[v] = out[v] or r.key end
      end
    end
  end
  return out
end

---------------------------------------------------------------- coverage

local function sorted_keys(t)
  local ks = {}
  for k in pairs(t) do if type(k) == "string" then ks[#ks + 1] = k end end
  table.sort(ks)
  return ks
end

-- Every public name of the live namespaces (loading them all): a list of
-- {key=, value=, class=} where class is the key of the class for methods.
-- Names starting with '_' are private.
function H.public_names()
  local out, seen_ns = {}, {}
  local function add(key, v, cls) out[#out + 1] = {key = key, value = v, class = cls} end
  local function walk(nskey)
    if seen_ns[nskey] then return end
    seen_ns[nskey] = true
    local ok, ns = H.resolve(nskey, true)
    if not ok or type(ns) ~= "table" then return end
    if nskey == "torch.Tensor" then
      for _, k in ipairs(sorted_keys(METHODS)) do
        if k:sub(1, 1) ~= "_" then add("torch.Tensor:" .. k, METHODS[k]) end
      end
      return
    end
    local names = sorted_keys(ns)
    if torch._subpackages then -- packages not loaded yet are fields too
      for _, sub in ipairs(torch._subpackages(nskey)) do
        if rawget(ns, sub) == nil then names[#names + 1] = sub end
      end
    end
    for _, k in ipairs(names) do
      if k:sub(1, 1) ~= "_" then
        local key = nskey .. "." .. k
        local v = ns[k]
        if IS_NAMESPACE[key] then
          walk(key)
        elseif is_class(v) then
          add(key, v)
          for _, m in ipairs(own_methods(v)) do add(key .. ":" .. m, v[m], key) end
        elseif v ~= nil then
          add(key, v)
        end
      end
    end
  end
  for _, n in ipairs(H.NAMESPACES) do walk(n) end
  return out
end

-- The entry that documents a public name (see H.public_names), or nil. A
-- class's method is covered by its own entry, by a `ns.*:name` entry of its
-- namespace, or, when it overrides one, by its ancestor's entry.
function H.entry_for(key, cls, by_key, keys_of_class)
  local e = by_key[key]
  if e or not cls then return e end
  local m = key:match(":([%w_]+)$")
  e = by_key[cls .. "." .. m] -- a function of the class (nn.Embedding.from_pretrained)
  if e then return e end
  local ns = cls:match("^(.*)%.[%w_]+$")
  e = by_key[ns .. ".*:" .. m]
  if e then return e end
  local ok, c = H.resolve(cls, true)
  local p = ok and parent_of(c)
  while p do
    local pk = keys_of_class[p]
    if pk and by_key[pk .. ":" .. m] then return by_key[pk .. ":" .. m] end
    p = parent_of(p)
  end
  return nil
end

-- The line an entry of a function with a code help text must be: the
-- text's signature, the entry's other names, the text's description.
function H.render(e, code_text)
  local sig, desc = code_text:match("^(.-) %-%- (.*)$")
  if not sig then sig, desc = code_text, "" end
  local names = {"`" .. sig .. "`"}
  for i = 2, #e.names do names[#names + 1] = "`" .. e.names[i] .. "`" end
  return "- " .. table.concat(names, ", ") .. " -- " .. desc
end

-- Checks entries (a list from H.parse over the pages) against the live
-- namespaces. Returns three lists of messages: missing (public names
-- without an entry), dangling (entry names that name nothing, or names of
-- one entry that are different values), stale (entries that differ from
-- their function's code help text: {entry=, want=}).
function H.check(entries)
  local by_key = {}
  for _, e in ipairs(entries) do
    for _, k in ipairs(e.keys) do by_key[k] = by_key[k] or e end
  end
  local missing, dangling, stale = {}, {}, {}
  local keys_of_class = {}
  for _, e in ipairs(entries) do
    local first
    for i, k in ipairs(e.keys) do
      local ok, v = H.resolve(k, true)
      if not ok then
        dangling[#dangling + 1] = ("%s:%d: `%s` names nothing"):format(e.file or "?", e.line, e.names[i])
      elseif v ~= nil and not k:find("^torch%.Tensor%.") then
        if is_class(v) and not k:find(":", 1, true) then keys_of_class[v] = keys_of_class[v] or k end
        if first == nil then
          first = v
        elseif v ~= first then
          dangling[#dangling + 1] = ("%s:%d: `%s` is not the same value as `%s`"):format(e.file or "?", e.line,
                                                                                        e.names[i], e.names[1])
        end
      end
    end
    local code = first ~= nil and CODE_HELP[first]
    if code then
      local want = H.render(e, code)
      local have = H.render(e, e.text)
      if want ~= have then stale[#stale + 1] = {entry = e, want = want} end
    end
  end
  for _, p in ipairs(H.public_names()) do
    if not H.entry_for(p.key, p.class, by_key, keys_of_class) then missing[#missing + 1] = H.short(p.key) end
  end
  return missing, dangling, stale
end

---------------------------------------------------------------- help(x)

local function where(e)
  local page = e.file and e.file:match("([^/]+)$") or "?"
  return ("(docs/api/%s%s)"):format(page, e.section and (", " .. e.section) or "")
end

-- Lines of one entry: its text, its other names, where it is documented.
local function entry_lines(e, out)
  out[#out + 1] = e.text
  if #e.names > 1 then
    local others = {}
    for i = 2, #e.names do others[#others + 1] = e.names[i] end
    out[#out + 1] = "  also: " .. table.concat(others, ", ")
  end
  out[#out + 1] = "  " .. where(e)
end

-- "function(a, b, ...)" and "file:line" of a Lua function.
local function lua_signature(f)
  local info = debug.getinfo(f, "uS")
  if info.what ~= "Lua" then return nil end
  local ps = {}
  for i = 1, info.nparams do ps[i] = debug.getlocal(f, i) end
  if info.isvararg then ps[#ps + 1] = "..." end
  local src = info.short_src or "?"
  return "(" .. table.concat(ps, ", ") .. ")", src .. ":" .. (info.linedefined or 0)
end

-- The one-line description of a method m of class c (named key or nil).
local function method_line(c, ckey, m, by_key, ckeys)
  local e = ckey and H.entry_for(ckey .. ":" .. m, ckey, by_key, ckeys) or
            by_key[H.key((rawget(c, "__name") or "?") .. ":" .. m)]
  if e then
    local sig = e.sig:match("^[%w_.*]*[:.]?" .. m .. "(.*)$")
    if not sig then sig = " (= " .. H.short(H.key(e.sig)) .. (e.sig:match("(%b())") or "") .. ")" end
    return m .. sig .. " -- " .. e.desc
  end
  local f = method_of(c, m)
  local sig, src
  if type(f) == "function" then sig, src = lua_signature(f) end
  if sig then
    local ps = sig:gsub("^%(self, ?", "("):gsub("^%(self%)", "()")
    return m .. ps .. "   (" .. src .. ")"
  end
  return m
end

local function class_name(c, ckeys)
  local k = ckeys[c]
  return k and H.short(k) or rawget(c, "__name")
end

-- Lines describing class c: constructor entry, own methods, ancestors.
local function class_lines(c, out, ckeys, by_key, instance)
  local key = ckeys[c] or (by_key[rawget(c, "__name")] and rawget(c, "__name"))
  local e = key and by_key[key]
  if e then
    entry_lines(e, out)
  else
    local p = parent_of(c)
    out[#out + 1] = ("%s: a class%s (it has no entry of its own in the reference)"):format(
      rawget(c, "__name"), p and (" derived from " .. class_name(p, ckeys)) or "")
  end
  local chain = {c}
  local p = parent_of(c)
  while p do chain[#chain + 1] = p; p = parent_of(p) end
  local shown = {}
  for i, k in ipairs(chain) do
    if i > 1 and not instance then
      out[#out + 1] = ("inherits the methods of %s: help(%s)"):format(class_name(k, ckeys), class_name(k, ckeys))
      break
    end
    local ms = {}
    for _, m in ipairs(own_methods(k)) do
      if not shown[m] then shown[m] = true; ms[#ms + 1] = m end
    end
    if #ms > 0 then
      out[#out + 1] = ("methods of %s:"):format(class_name(k, ckeys))
      for _, m in ipairs(ms) do out[#out + 1] = "  " .. method_line(k, ckeys[k], m, by_key, ckeys) end
    end
  end
end

-- Public members of a namespace table with their one-liners.
local function namespace_lines(ns, nskey, out, idx)
  if type(rawget(ns, "__help")) == "string" then out[#out + 1] = ns.__help end
  local names = sorted_keys(ns)
  if torch._subpackages and nskey then
    for _, sub in ipairs(torch._subpackages(nskey)) do
      if rawget(ns, sub) == nil then names[#names + 1] = sub end
    end
    table.sort(names)
  end
  local _, by_key = H.entries()
  local rows = {}
  for _, k in ipairs(names) do
    if k:sub(1, 1) ~= "_" then
      local key = nskey and (nskey .. "." .. k)
      local e = key and by_key[key]
      local v = rawget(ns, k)
      if not e and v ~= nil and idx[v] then e = idx[v][1].entry end
      local what = e and e.desc or (v == nil and "(a package: loads on first use)") or
                   (type(v) == "table" and "(a table)") or ""
      rows[#rows + 1] = ("  %-24s %s"):format(k, what)
    end
  end
  out[#out + 1] = ("%s: %d public names (help(name) for one; help 'name' searches every package):"):format(
    nskey and H.short(nskey) or "this table", #rows)
  for _, r in ipairs(rows) do out[#out + 1] = r end
end

local function tensor_lines(x, out)
  local shape = #x.shape == 0 and "a 0-dim tensor" or ("shape %s"):format(table.concat(x.shape, "x"))
  out[#out + 1] = ("a tensor: %s, dtype %s, device %s%s"):format(shape, tostring(x.dtype):gsub("^torch%.", ""),
    tostring(x.device), x.requires_grad and ", requires_grad=true" or "")
  local n = 0
  for k in pairs(METHODS) do if type(k) == "string" and k:sub(1, 1) ~= "_" then n = n + 1 end end
  out[#out + 1] = ("It has %d methods; the most used: x:size() x:dim() x:view(...) x:to(dtype|device) x:sum(dim) "
                   .. "x:matmul(y) x:item() x:backward()."):format(n)
  out[#out + 1] = "Properties: x.shape x.dtype x.device x.ndim x.T x.requires_grad x.grad x.grad_fn."
  out[#out + 1] = "help(torch.Tensor) lists every method; help(x.add) or help 'add' explains one "
                  .. "(docs/api/torch.md, docs/api/tensor.md)."
end

-- Levenshtein distance, for "did you mean".
local function distance(a, b)
  if #a > 40 or #b > 40 then return math.huge end
  local prev = {}
  for j = 0, #b do prev[j] = j end
  for i = 1, #a do
    local cur = {[0] = i}
    for j = 1, #b do
      local cost = a:byte(i) == b:byte(j) and 0 or 1
      cur[j] = math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost)
    end
    prev = cur
  end
  return prev[#b]
end

-- help('name'): entries whose key is the name, ends with it, or whose
-- last part is it.
local function name_lines(name, out)
  local entries, by_key = H.entries()
  local key = H.key(name)
  local bare = not name:find("[.:]")
  if key:sub(1, 6) ~= "torch." and key ~= "torch" then key = "torch." .. key end
  if by_key[key] and not bare then entry_lines(by_key[key], out); return true, H.short(key) end
  local ok, v = H.resolve(key, true)
  if ok and v ~= nil and not (bare and type(v) == "function") then return false, key, v end
  local last = name:match("([%w_]+)$") or name
  local found, seen = {}, {}
  for _, e in ipairs(entries) do
    for _, k in ipairs(e.keys) do
      local tail = k:match("([%w_]+)$")
      if (tail == last or k:sub(-#name - 1) == "." .. name or k:sub(-#name - 1) == ":" .. name) and not seen[e] then
        seen[e] = true
        found[#found + 1] = e
      end
    end
  end
  if #found == 0 then
    local parent = name:match("^(.*)%.[%w_]+$")
    if parent and parent:sub(1, 6) ~= "torch." and parent ~= "torch" then parent = H.short(H.key(parent)) end
    out[#out + 1] = ("%s has no member '%s'"):format(parent or "torch", last)
    local best, bd = {}, 3
    local seen_tail = {}
    for _, e in ipairs(entries) do
      for _, k in ipairs(e.keys) do
        local tail = k:match("([%w_]+)$")
        if tail and not seen_tail[k] then
          seen_tail[k] = true
          local d = distance(last:lower(), tail:lower())
          if d < bd then best, bd = {H.short(k)}, d elseif d == bd and #best < 6 then best[#best + 1] = H.short(k) end
        end
      end
    end
    if #best > 0 and bd <= math.max(1, #last // 3) then
      out[#out + 1] = "did you mean: " .. table.concat(best, ", ") .. "?"
    end
    out[#out + 1] = "(help() says what help can explain; docs/api/README.md is the reference)"
    return true
  end
  if #found > 1 then out[#out + 1] = ("'%s' names %d things:"):format(name, #found) end
  for i, e in ipairs(found) do
    if i > 1 then out[#out + 1] = "" end
    entry_lines(e, out)
  end
  return true, #found == 1 and H.short(found[1].keys[1]) or nil
end

local INTRO = {
  "help(x) explains x:",
  "  help(torch.add)    a function: its signature and what it does",
  "  help(nn.Linear)    a class: constructor and methods; help(net) for an instance (inherited methods too)",
  "  help 'relu'        a name, searched in every package",
  "  help(x)            a tensor: a summary; help(torch.Tensor) lists every method",
  "  help(torch.nn)     a package: its public names",
  "Long texts are paged in a terminal; help(x, {all=true}) prints all of a long text.",
  "The reference: docs/api/README.md in moontorch's source tree.",
}

-- help(x) as text: returns the text and the name to repeat in a hint
-- (how the user can reach x), or nil.
function H.text(...)
  local out = {}
  if select("#", ...) == 0 then
    out[1] = "moontorch " .. tostring(torch.version) .. " -- " .. INTRO[1]
    for i = 2, #INTRO do out[#out + 1] = INTRO[i] end
    return table.concat(out, "\n") .. "\n"
  end
  local x = ...
  local name
  if type(x) == "string" then
    local done, n, v = name_lines(x, out)
    if done then return table.concat(out, "\n") .. "\n", n and ("help '%s'"):format(x) end
    name, x = n, v
  end
  if torch.is_tensor(x) then
    tensor_lines(x, out)
    return table.concat(out, "\n") .. "\n"
  end
  local _, by_key = H.entries()
  local idx = value_index()
  local ckeys = class_keys(idx)
  local refs = idx[x]
  local hint = name and ("help(%s)"):format(H.short(name))
  if refs and not hint then hint = ("help(%s)"):format(H.short(refs[1].key)) end
  if x == torch.Tensor then
    out[#out + 1] = "torch.Tensor: the methods of every tensor (x:name(...)); torch.f(x, ...) is x:f(...) where both exist"
    local ms = sorted_keys(METHODS)
    for _, m in ipairs(ms) do
      if m:sub(1, 1) ~= "_" then
        local l = idx[METHODS[m]]
        local e = l and l[1].entry
        out[#out + 1] = ("  %-24s %s"):format(m, e and e.desc or "")
      end
    end
    return table.concat(out, "\n") .. "\n", "help(torch.Tensor)"
  end
  if is_class(x) then
    class_lines(x, out, ckeys, by_key, false)
    return table.concat(out, "\n") .. "\n", hint
  end
  local c = instance_class(x)
  if c then
    out[#out + 1] = ("an instance of %s%s"):format(class_name(c, ckeys),
      rawget(x, "training") ~= nil and (" (a module; print(x) shows its layers)") or "")
    class_lines(c, out, ckeys, by_key, true)
    return table.concat(out, "\n") .. "\n", nil
  end
  if refs then
    local seen = {}
    for _, r in ipairs(refs) do
      if not seen[r.entry] then
        if #out > 0 then out[#out + 1] = "" end
        seen[r.entry] = true
        entry_lines(r.entry, out)
      end
    end
    if type(x) == "table" and not is_class(x) and getmetatable(x) == nil or (type(x) == "table" and rawget(x, "__help")) then
      out[#out + 1] = ""
      namespace_lines(x, refs[1].key, out, idx)
    end
    return table.concat(out, "\n") .. "\n", hint
  end
  -- a method of a loaded class
  if type(x) == "function" then
    for cls, ckey in pairs(ckeys) do
      for _, m in ipairs(own_methods(cls)) do
        if rawget(cls, m) == x then
          out[#out + 1] = H.short(ckey) .. ":" .. method_line(cls, ckey, m, by_key, ckeys)
          return table.concat(out, "\n") .. "\n", hint
        end
      end
    end
    if CODE_HELP[x] then
      out[#out + 1] = CODE_HELP[x]
      return table.concat(out, "\n") .. "\n", hint
    end
    local sig, src = lua_signature(x)
    if sig then
      out[#out + 1] = ("a Lua function%s defined at %s (not in the reference)"):format(sig, src)
    else
      out[#out + 1] = "a C function without a help text"
    end
    return table.concat(out, "\n") .. "\n"
  end
  if type(x) == "table" then
    for _, n in ipairs(H.NAMESPACES) do
      local ok, v = H.resolve(n, false)
      if ok and v == x then namespace_lines(x, n, out, idx); return table.concat(out, "\n") .. "\n", "help(" .. n .. ")" end
    end
    if rawget(x, "__help") ~= nil then namespace_lines(x, nil, out, idx); return table.concat(out, "\n") .. "\n" end
    local n = 0
    for _ in pairs(x) do n = n + 1 end
    out[#out + 1] = ("a Lua table with %d fields"):format(n)
    return table.concat(out, "\n") .. "\n"
  end
  local mt = getmetatable(x)
  local tname = type(mt) == "table" and rawget(mt, "__name")
  if type(x) == "userdata" and type(tname) == "string" then -- a C object: its maker's entry and methods
    out[#out + 1] = ("%s: an object of %s"):format(tostring(x), tname)
    if by_key[tname] then entry_lines(by_key[tname], out) end
    local ms = {}
    for _, e in ipairs((H.entries())) do
      local m = e.keys[1]:sub(1, #tname + 1) == tname .. ":" and e.keys[1]:sub(#tname + 2)
      if m then ms[#ms + 1] = "  " .. m .. (e.sig:match("[:.]" .. m .. "(.*)$") or "") .. " -- " .. e.desc end
    end
    if #ms > 0 then
      out[#out + 1] = "methods:"
      for _, l in ipairs(ms) do out[#out + 1] = l end
    end
    return table.concat(out, "\n") .. "\n"
  end
  out[#out + 1] = ("a %s: %s (help() lists what help explains)"):format(type(x), tostring(x))
  return table.concat(out, "\n") .. "\n"
end

return H
