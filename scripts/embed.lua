-- embed.lua -- writes a Lua source file as a C string constant, so that the
-- torch module carries its Lua parts inside torch.so and moontorch.
--   lua5.4 scripts/embed.lua SYMBOL input.lua output.c
local sym, src, dst = arg[1], arg[2], arg[3]
local f = assert(io.open(src, "rb"))
local data = f:read("a")
f:close()
local out = {("/* generated from %s by scripts/embed.lua; do not edit */\n"):format(src),
  ("const char %s[] = {"):format(sym)}
for i = 1, #data do
  if (i - 1) % 20 == 0 then out[#out + 1] = "\n  " end
  out[#out + 1] = data:byte(i) .. ","
end
out[#out + 1] = "\n  0};\n"
f = assert(io.open(dst, "wb"))
f:write(table.concat(out))
f:close()
