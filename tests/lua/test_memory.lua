-- tests/lua/test_memory.lua -- tensor memory is reported to Lua's collector,
-- so dropped tensors are freed promptly and resident memory stays bounded.
-- Growth is measured from the resident size at each test's start: the
-- suite runs in one process, and (under ASan especially) what earlier
-- files left resident is not this test's.

test("100,000 tensors of 1 MB, not kept, grow resident memory by under 1 GB", function()
  local base, peak = rss_mb() or 0, 0
  for i = 1, 100000 do
    local t = torch.empty(262144) -- 1 MB of float32
    t[1] = i
    if i % 5000 == 0 then peak = math.max(peak, rss_mb() or 0) end
  end
  check(peak - base < 1024, ("resident memory grew by %.0f MB (from %.0f MB)"):format(peak - base, base))
end)

test("results of ops (not only creations) are collected too", function()
  local a = torch.ones(262144)
  local base, peak = rss_mb() or 0, 0
  for i = 1, 4000 do
    local b = a * i
    if i % 500 == 0 then peak = math.max(peak, rss_mb() or 0) end
  end
  check(peak - base < 1024, ("resident memory grew by %.0f MB (from %.0f MB)"):format(peak - base, base))
end)

test("a <close> tensor frees its memory at scope end", function()
  local x
  do
    local t <close> = torch.ones(4)
    x = t
  end
  check_error(function() return x + 1 end, "closed")
end)
