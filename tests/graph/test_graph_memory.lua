-- tests/graph/test_graph_memory.lua -- graphs are freed: many backward
-- passes over small graphs keep resident memory flat.
-- The loop runs in a fresh process: what earlier test files left in this
-- one (freed large buffers, allocator arenas of worker threads) moves its
-- resident size in ways that say nothing about this test's graphs.
test("100,000 backward calls on a small graph keep resident memory flat", function()
  local exe = arg and arg[-1] or "build/moontorch"
  local n = os.getenv("MOONTORCH_ASAN") and 20000 or 100000
  local code = ([[
    torch.set_default_device(%q)
    local w = torch.randn(16, {requires_grad = true})
    local a, b = torch.randn(16), torch.randn(16)
    local function rss()
      local f = io.open("/proc/self/statm")
      local pages = f:read("n") and f:read("n")
      f:close()
      return pages * 4096 / 2^20
    end
    local out = {}
    for i = 1, %d do
      local loss = (w * a + b):tanh():sum()
      loss:backward()
      w.grad = nil
      -- garbage waits for the collector, so memory first rises to a plateau;
      -- what must not happen is growth after that
      if i %% (%d // 10) == 0 then out[#out + 1] = ("%%.3f"):format(rss()) end
    end
    print("rss " .. table.concat(out, " "))
  ]]):format(DEVICE, n, n)
  local p = io.popen(("%s -e '%s' 2>&1"):format(exe, code:gsub("'", "'\\''")))
  local out = p:read("a")
  p:close()
  local samples = {}
  for v in (out:match("rss ([%d%. ]+)") or ""):gmatch("[%d%.]+") do samples[#samples + 1] = tonumber(v) end
  check(#samples == 10, "the child run printed its samples: " .. out)
  -- ASan keeps freed memory in quarantine (resident); its leak check at
  -- exit covers that build instead
  if not os.getenv("MOONTORCH_ASAN") then
    local plateau = math.max(samples[3], samples[4], samples[5])
    -- the smaller of the last two samples: a leak grows steadily, while the
    -- driver or the collector may grow once near the end
    check(math.min(samples[9], samples[10]) - plateau < 4, ("resident memory kept growing: %s MB"):format(
      table.concat(samples, ", ")))
    check(samples[10] - samples[1] < 100, "resident memory grew by " .. (samples[10] - samples[1]) .. " MB")
  end
end)

-- bytes held by tensors on the device the suite runs on
local function bytes_in_use()
  if DEVICE == "cpu" then return torch._cpu_bytes_in_use() end
  return torch.cuda.memory_allocated()
end

test("a graph and its saved tensors are freed with its outputs", function()
  local x = torch.randn(1000, {requires_grad = true})
  collectgarbage()
  collectgarbage()
  local before = bytes_in_use()
  local y = x
  for _ = 1, 20 do y = (y * 1.01):sin() end -- 40 nodes saving 4 KB tensors
  check(bytes_in_use() - before >= 20 * 4000, "the graph holds its saved tensors")
  y = nil
  collectgarbage()
  collectgarbage()
  check_eq(bytes_in_use(), before)
end)

test("valgrind finds no leak in a short autograd run", function()
  if os.getenv("MOONTORCH_ASAN") then return end -- ASan's leak checker covers that build
  if not os.execute("command -v valgrind >/dev/null 2>&1") then
    print("  (skipped: valgrind is not installed)")
    return
  end
  local exe = arg and arg[-1] or "build/moontorch"
  local here = debug.getinfo(1, "S").source:match("^@(.*)/[^/]*$") or "tests/graph"
  local cmd = ("valgrind --leak-check=full --errors-for-leak-kinds=definite,indirect --error-exitcode=9 %s %s/leak_run.lua 2>&1")
    :format(exe, here)
  local p = io.popen(cmd)
  local out = p:read("a")
  local ok, _, code = p:close()
  check(ok, ("valgrind exit %s:\n%s"):format(tostring(code), out:sub(-2000)))
  check(out:find("definitely lost: 0 bytes", 1, true), out:sub(-2000))
end)
