-- tests/lua/test_memory.lua -- tensor memory is reported to Lua's collector,
-- so dropped tensors are freed promptly and resident memory stays bounded.

test("100,000 tensors of 1 MB, not kept, stay under 1 GB resident", function()
  local peak = 0
  for i = 1, 100000 do
    local t = torch.empty(262144) -- 1 MB of float32
    t[1] = i
    if i % 5000 == 0 then peak = math.max(peak, rss_mb() or 0) end
  end
  check(peak < 1024, ("peak resident memory %.0f MB"):format(peak))
end)

test("results of ops (not only creations) are collected too", function()
  local a = torch.ones(262144)
  local peak = 0
  for i = 1, 4000 do
    local b = a * i
    if i % 500 == 0 then peak = math.max(peak, rss_mb() or 0) end
  end
  check(peak < 1024, ("peak resident memory %.0f MB"):format(peak))
end)

test("a <close> tensor frees its memory at scope end", function()
  local x
  do
    local t <close> = torch.ones(4)
    x = t
  end
  check_error(function() return x + 1 end, "closed")
end)
