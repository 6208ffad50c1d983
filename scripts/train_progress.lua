-- scripts/train_progress.lua -- the one-line progress bar of the training
-- scripts: redrawn in place on a terminal, printed every tenth of an epoch
-- otherwise (logs, sweeps).
local P = {}

P.tty = os.getenv("TERM") and os.execute("test -t 1") or false

-- show(epoch, epochs, done, total, loss, rate, unit, last_tenth): draws the
-- bar for done of total items at rate items/s ("samples/s", "images/s");
-- returns the tenth last printed (pass it back on the next call, -1 first)
function P.show(epoch, epochs, done, total, loss, rate, unit, last_tenth)
  local frac = done / total
  local eta = (total - done) / rate
  local width = 30
  local bar = string.rep("=", math.floor(frac * width)) .. string.rep(" ", width - math.floor(frac * width))
  local line = ("epoch %d/%d [%s] %5.1f%%  loss %.4f  %6.0f %s  ETA %s"):format(epoch, epochs, bar,
    100 * frac, loss, rate, unit, eta >= 60 and ("%dm%02ds"):format(eta // 60, math.floor(eta % 60))
      or ("%.0fs"):format(eta))
  if P.tty then
    io.write("\r", line, done == total and "\n" or "")
    io.flush()
    return last_tenth
  end
  local tenth = math.floor(frac * 10)
  if tenth > last_tenth or done == total then
    print(line)
    return tenth
  end
  return last_tenth
end

return P
