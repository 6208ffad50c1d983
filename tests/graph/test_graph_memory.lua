-- tests/graph/test_graph_memory.lua -- graphs are freed: many backward
-- passes over small graphs keep resident memory flat.
test("100,000 backward calls on a small graph keep resident memory flat", function()
  local w = torch.randn(16, {requires_grad = true})
  local a, b = torch.randn(16), torch.randn(16)
  local function step()
    local loss = (w * a + b):tanh():sum()
    loss:backward()
    w.grad = nil
  end
  -- garbage waits for the collector, so memory first rises to a plateau;
  -- what must not happen is growth after that
  local n = os.getenv("MOONTORCH_ASAN") and 20000 or 100000
  local samples = {}
  for i = 1, n do
    step()
    if i % (n // 10) == 0 then samples[#samples + 1] = rss_mb() end
  end
  -- ASan keeps freed memory in quarantine (resident); its leak check at
  -- exit covers that build instead
  if samples[1] and not os.getenv("MOONTORCH_ASAN") then
    local plateau = math.max(samples[3], samples[4], samples[5])
    check(samples[10] - plateau < 4, ("resident memory kept growing: %s MB"):format(
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
