-- scripts/train_options.lua -- the command line of the training scripts:
-- --name value options over a table of defaults (--batch-size sets
-- batch_size), flags without a value, numbers checked ("int" or "num"), and
-- --help printing the script's header comment.
local O = {}

-- parse(argv, o, numeric, flags[, strings]) -> o with argv's options set.
-- numeric: {name = "int" | "num"}; flags: {name = true}; an option is any
-- of those, a name in strings, or a name o has a default for. Errors (no
-- traceback position) name the option.
function O.parse(argv, o, numeric, flags, strings)
  strings = strings or {}
  local i = 1
  while i <= #argv do
    local key = argv[i]:match("^%-%-([%w%-]+)$")
    if not key then error("unknown argument '" .. argv[i] .. "' (see --help)", 0) end
    key = key:gsub("%-", "_")
    local opt = "--" .. key:gsub("_", "-")
    if key == "help" then
      local head = io.open(arg[0]):read("a"):match("^(.-)\nlocal")
      print((("\n" .. head):gsub("\n%-%- ?", "\n"):sub(2)))
      os.exit(0)
    elseif flags[key] then
      o[key] = true
    elseif numeric[key] or strings[key] or o[key] ~= nil then
      local v = argv[i + 1]
      if v == nil then error(opt .. " needs a value", 0) end
      if numeric[key] then
        local n = tonumber(v)
        if not n then error(opt .. " needs a number, got '" .. v .. "'", 0) end
        if numeric[key] == "int" then
          n = math.tointeger(n)
          if not n then error(opt .. " needs an integer, got '" .. v .. "'", 0) end
        end
        v = n
      end
      o[key] = v
      i = i + 1
    else
      error("unknown option " .. opt .. " (see --help)", 0)
    end
    i = i + 1
  end
  return o
end

-- check_device(o): o.device is cpu or cuda[:n], and a GPU is there for cuda
function O.check_device(o)
  if o.device ~= "cpu" and not o.device:match("^cuda") then
    error("--device must be cpu or cuda, got '" .. o.device .. "'", 0)
  end
  if o.device ~= "cpu" and not torch.cuda.is_available() then
    error("--device " .. o.device .. ": no CUDA GPU is available on this machine", 0)
  end
end

return O
