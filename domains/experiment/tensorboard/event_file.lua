-- torch.utils.tensorboard.event_file -- one TensorBoard event file:
-- events.out.tfevents.<time>.<host>.<pid>.<n><suffix> in a log directory,
-- a sequence of TFRecords each holding one Event, the first of them the
-- file_version header. Events wait in a queue that is written when it holds
-- max_queue events, when flush_secs have passed since the last write, and
-- on flush()/close(); the file is created (and the header written) at once,
-- so an unwritable directory fails when the writer is made.
local torch = require "torch"
local S = require "torch.utils.tensorboard.summary"
local C = require "torch.utils.tensorboard._summary"

local EventFile = {}
EventFile.__index = EventFile

local uid = 0 -- the <n> of file names: files made by this process so far

-- fn names the caller in error messages.
function EventFile.new(logdir, opts, fn)
  opts = opts or {}
  local ok, err = C.makedirs(logdir)
  if not ok then error(("%s: cannot create log directory '%s': %s"):format(fn, logdir, err), 3) end
  local name = ("events.out.tfevents.%010d.%s.%d.%d%s"):format(math.floor(C.walltime()), C.hostname(), C.getpid(),
    uid, opts.filename_suffix or "")
  uid = uid + 1
  local path = logdir .. "/" .. name
  local f, msg = io.open(path, "wb")
  if not f then error(("%s: cannot write to log directory '%s': %s"):format(fn, logdir, msg), 3) end
  local self = setmetatable({logdir = logdir, path = path, file = f, queue = {}, max_queue = opts.max_queue or 10,
    flush_secs = opts.flush_secs or 120, last_flush = C.walltime()}, EventFile)
  f:setvbuf("full", 65536)
  local okw, werr = f:write(C.tfrecord(S.event(C.walltime(), nil, nil)))
  if okw then okw, werr = f:flush() end
  if not okw then
    f:close()
    error(("%s: cannot write to '%s': %s"):format(fn, path, werr), 3)
  end
  return self
end

-- Queues one Event holding summary (Summary bytes) at step.
function EventFile:add(summary, step, walltime)
  if not self.file then error("SummaryWriter: the writer is closed", 3) end
  local q = self.queue
  q[#q + 1] = C.tfrecord(S.event(walltime or C.walltime(), step, summary))
  if #q >= self.max_queue or C.walltime() - self.last_flush >= self.flush_secs then self:flush() end
end

-- Writes the queued events and flushes the file to the OS.
function EventFile:flush()
  local f = self.file
  if not f then return end
  if #self.queue > 0 then
    local ok, err = f:write(table.concat(self.queue))
    self.queue = {}
    if not ok then error(("SummaryWriter: cannot write to '%s': %s"):format(self.path, err), 3) end
  end
  f:flush()
  self.last_flush = C.walltime()
end

function EventFile:close()
  if not self.file then return end
  self:flush()
  self.file:close()
  self.file = nil
end

-- A collected writer still writes what it queued.
EventFile.__gc = function(self) pcall(EventFile.close, self) end

return EventFile
