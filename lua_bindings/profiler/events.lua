-- torch.profiler.events -- the events of a finished profile as records,
-- with self times (duration less that of the events directly inside) and
-- self memory, computed once from the columns torch._profiler.stop gives.
local M = {}

M.KIND = {[0] = "op", [1] = "range", [2] = "autograd", [3] = "jit"}

-- records(cols) -> list of {name, kind, parent (index or nil), start_us,
-- end_us, duration_us, self_us, input_shapes (string or nil),
-- cpu_memory_usage, self_cpu_memory_usage, cuda_memory_usage,
-- self_cuda_memory_usage, cuda_us, self_cuda_us (device time on the current
-- stream between the event's begin and end; nil unless the profile timed
-- CUDA)} in start order.
function M.records(cols)
  local names, n = cols.names, #cols.name
  local out = {}
  for i = 1, n do
    local t0, t1 = cols.t0[i], cols.t1[i]
    local dur = (t1 - t0) / 1000
    out[i] = {
      name = names[cols.name[i]], kind = M.KIND[cols.kind[i]], parent = cols.parent[i] > 0 and cols.parent[i] or nil,
      start_us = t0 / 1000, end_us = t1 / 1000, duration_us = dur, self_us = dur,
      input_shapes = cols.shapes[i] or nil, cpu_memory_usage = cols.mem[i], self_cpu_memory_usage = cols.mem[i],
      cuda_memory_usage = cols.cmem[i], self_cuda_memory_usage = cols.cmem[i],
    }
    local c = cols.cuda and cols.cuda[i]
    if c and c >= 0 then out[i].cuda_us, out[i].self_cuda_us = c / 1000, c / 1000 end
  end
  for i = 1, n do
    local p = out[i].parent
    if p then
      out[p].self_us = out[p].self_us - out[i].duration_us
      out[p].self_cpu_memory_usage = out[p].self_cpu_memory_usage - out[i].cpu_memory_usage
      out[p].self_cuda_memory_usage = out[p].self_cuda_memory_usage - out[i].cuda_memory_usage
      if out[p].self_cuda_us and out[i].cuda_us then out[p].self_cuda_us = out[p].self_cuda_us - out[i].cuda_us end
    end
  end
  return out
end

return M
