-- tests/lua/test_print.lua -- tostring(x) reads like PyTorch's str(x)
-- (tests/ref/print.lua), up to moontorch's two deliberate differences:
-- Lua booleans (true/false) and `dtype=float64` without the `torch.` prefix.

local function ours(src)
  -- the PyTorch expressions in the reference, written in Lua
  local lua = src:gsub("%[", "{"):gsub("%]", "}"):gsub("True", "true"):gsub("False", "false")
  lua = lua:gsub("float%('nan'%)", "0/0"):gsub("%-float%('inf'%)", "-math.huge"):gsub("float%('inf'%)", "math.huge")
  lua = lua:gsub("dtype=torch%.(%w+)", "{dtype=torch.%1}"):gsub("(%d)%.%)", "%1.0)"):gsub("%)%.view%(", "):view(")
  lua = lua:gsub("torch%.arange%((%d+)%.?%)", function(n) return "torch.arange(" .. n .. ")" end)
  return lua
end

local function expected(text)
  return (text:gsub("True", "true"):gsub("False", "false"):gsub("dtype=torch%.", "dtype="))
end

for _, c in ipairs(ref("print")) do
  test("prints " .. c.name .. " like PyTorch", function()
    local code = ours(c.src)
    if c.name == "elided2d" or c.name == "wide" then code = code:gsub("torch%.arange%((%d+)%)", "torch.arange(%1):float()") end
    local fn = assert(load("return " .. code, "=" .. c.name, "t", {torch = torch, math = math}))
    local want = expected(c.text)
    if DEVICE ~= "cpu" then -- PyTorch names a GPU tensor's device first among the suffixes
      local body, suffix = want:match("^(.-)(, [a-z]+=[^%]]*)%)$")
      want = (body or want:sub(1, -2)) .. ", device='" .. DEVICE .. ":0'" .. (suffix or "") .. ")"
    end
    check_eq(tostring(fn()), want, c.src)
  end)
end
