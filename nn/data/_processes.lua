-- torch.utils.data._processes -- DataLoader(num_workers > 0) over any
-- dataset, as PyTorch does it: num_workers processes forked from this one
-- (nn/data/l_workers.c), each holding the dataset and its transforms as
-- they were at the fork, make whole batches (__getitem__ then collate_fn)
-- while the loop runs; batches come back in order, their big tensors in
-- shared memory. Batch k goes to worker (k - 1) % n + 1, up to
-- prefetch_factor batches ahead per worker. Worker w (1-based) is seeded
-- with base_seed + w (base_seed drawn from the loader's generator when its
-- workers start), runs the engine on one thread, calls worker_init_fn(w),
-- and cannot use CUDA (its default device is the CPU).
local torch = require "torch"
local W = require "torch.utils.data._workers"
local M = {}

-- The info get_worker_info() returns inside a worker, nil in the main process.
M.info = nil

-- batch k of an epoch's order (nil past the end), as DataLoader cuts it
local function batch_indices(loader, order, k)
  local n, bs = order:numel(), loader.batch_size
  local start = (k - 1) * bs + 1
  if start > n then return nil end
  local len = math.min(bs, n - start + 1)
  if len < bs and loader.drop_last then return nil end
  return order:narrow(1, start, len)
end
M.batch_indices = batch_indices

-- an error's message and traceback, down to the worker's own loop (the
-- frames below are the main process's, copied by the fork)
local function traceback(e)
  local tb = debug.traceback(tostring(e), 2)
  return tb:match("^(.-)\n%s*%[C%]: in function 'xpcall'") or tb
end

-- The body of worker w: answers "order" and "batch" messages until the
-- main process closes the pool. Errors of the dataset, the collate
-- function or worker_init_fn go back as messages with their traceback.
local function worker_main(loader, seed, w, chan)
  torch.set_default_device("cpu") -- a worker cannot use CUDA
  torch.manual_seed(seed)
  math.randomseed(seed)
  M.info = {id = w, num_workers = loader.num_workers, seed = seed, dataset = loader.dataset}
  local init_err
  if loader.worker_init_fn then
    local ok, e = xpcall(loader.worker_init_fn, traceback, w)
    if not ok then init_err = "worker_init_fn: " .. tostring(e) end
  end
  local order
  while true do
    local kind, v = chan:recv()
    if kind == nil then return end
    if kind == "order" then
      order = v
    elseif init_err then
      if not chan:send(v, false, init_err) then return end
    else
      local ok, batch = xpcall(loader._fetch, traceback, loader, batch_indices(loader, order, v))
      local sent
      if ok then ok, sent = pcall(chan.send, chan, v, true, batch) end
      if not ok then sent = chan:send(v, false, tostring(sent or batch)) end
      if not sent then return end -- the main process closed the pool
    end
  end
end

-- The loader's pool: its persistent one, or a new one (forked now).
local function pool_of(loader)
  local pool = rawget(loader, "_pool")
  if pool and not pool:closed() then return pool end
  local seed = torch.randint(0, 1 << 62, {1}, {generator = loader.generator, dtype = torch.int64, device = "cpu"})[1]:item()
  pool = W.spawn(loader.num_workers, function(w, chan) worker_main(loader, seed + w, w, chan) end)
  if loader.persistent_workers then rawset(loader, "_pool", pool) end
  return pool
end

-- Discards what a persistent pool still makes for an epoch left unfinished.
local function drain(pool, n)
  for w = 1, n do
    while pool:pending(w) > 0 do pool:take(w) end
  end
end

-- iter(loader, order, nbatches) -> an iterator over the epoch's batches
function M.iter(loader, order, nbatches)
  local n = loader.num_workers
  local pool = pool_of(loader)
  drain(pool, n)
  for w = 1, n do pool:order(w, order) end
  local ahead, next_put, k = loader.prefetch_factor * n, 1, 0
  local timeout = loader.timeout
  local function finish()
    if not loader.persistent_workers then pool:close() end
  end
  return function()
    k = k + 1
    if k > nbatches then
      finish()
      return nil
    end
    while next_put <= nbatches and next_put < k + ahead do
      pool:put((next_put - 1) % n + 1, next_put)
      next_put = next_put + 1
    end
    local w = (k - 1) % n + 1
    local ticket, ok, batch = pool:take(w, timeout)
    if not ok then
      pool:close()
      error(("DataLoader: worker %d (pid %d) failed on batch %d: %s"):format(w, pool:pid(w), ticket, batch), 0)
    end
    if k == nbatches then finish() end
    return batch
  end
end

return M
