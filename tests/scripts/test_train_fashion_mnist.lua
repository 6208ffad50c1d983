-- tests/scripts/test_train_fashion_mnist.lua -- the main job as a user runs
-- it: a short run on a slice of the data writes a loadable checkpoint,
-- --resume continues after the saved epoch, and bad options are errors.
local exe = arg and arg[-1] or "build/moontorch"
local here = debug.getinfo(1, "S").source:match("^@(.*)/[^/]*$") or "tests/scripts"
local script = here .. "/../../scripts/train_fashion_mnist.lua"
local data = "/usr/share/datasets/fashion-mnist"

local function have_data()
  local f = io.open(data .. "/train-images-idx3-ubyte.gz", "rb")
  if f then f:close() end
  return f ~= nil
end

local function run(args)
  local p = io.popen(("%s %s %s 2>&1"):format(exe, script, args))
  local out = p:read("a")
  local ok = p:close()
  return ok, out
end

test("a short run trains, reports accuracy and writes a checkpoint; --resume continues", function()
  if not have_data() then
    print("  (skipped: dataset-fashion-mnist is not installed)")
    return
  end
  local ckpt = os.tmpname()
  os.remove(ckpt)
  local ok, out = run(("--model mlp --epochs 1 --limit 512 --batch-size 64 --workers 1 --checkpoint %s"):format(ckpt))
  check(ok, out)
  check(out:find("Fashion-MNIST from", 1, true), out)
  local acc = tonumber(out:match("epoch 1: test accuracy ([%d.]+)%%"))
  check(acc and acc > 30, "accuracy after one short epoch: " .. tostring(acc) .. "\n" .. out)
  local ck = torch.load(ckpt)
  check_eq(ck.epoch, 1)
  check(torch.is_tensor(ck.model["2.weight"]), "the model's state dict is in the checkpoint")
  check_shape(ck.model["2.weight"], {256, 784})
  ok, out = run(("--model mlp --epochs 2 --limit 512 --workers 1 --checkpoint %s --resume"):format(ckpt))
  check(ok, out)
  check(out:find("resumed from", 1, true) and out:find("after epoch 1", 1, true), out)
  check(out:find("epoch 2: test accuracy", 1, true) and not out:find("epoch 1: test", 1, true), out)
  check_eq(torch.load(ckpt).epoch, 2)
  os.remove(ckpt)
end)

test("--compile trains with a compiled step to the same accuracy and loss as eager", function()
  if not have_data() then
    print("  (skipped: dataset-fashion-mnist is not installed)")
    return
  end
  local ckpt = os.tmpname()
  local args = "--epochs 1 --limit 384 --batch-size 64 --workers 1 --schedule none --checkpoint " .. ckpt
  local ok1, eager = run(args)
  local ok2, compiled = run(args .. " --compile")
  os.remove(ckpt)
  check(ok1, eager)
  check(ok2, compiled)
  local pat = "epoch 1: test accuracy ([%d.]+)%%, test loss ([%d.]+)"
  local ae, le = eager:match(pat)
  local ac, lc = compiled:match(pat)
  check(ae and ac, eager .. compiled)
  check(math.abs(tonumber(ae) - tonumber(ac)) <= 0.05, ("accuracy %s eager vs %s compiled"):format(ae, ac))
  check(math.abs(tonumber(le) - tonumber(lc)) <= 1e-3, ("test loss %s eager vs %s compiled"):format(le, lc))
  check(not compiled:find("running eagerly", 1, true), compiled)
end)

test("run as a sweep trial, it logs train_loss during the epoch and test loss and accuracy after it", function()
  if not have_data() then
    print("  (skipped: dataset-fashion-mnist is not installed)")
    return
  end
  local dir = os.tmpname()
  os.remove(dir)
  require("torch.experiment._proc").mkdir(dir)
  local p = io.popen(("MOONTORCH_TRIAL_DIR='%s' %s %s --model mlp --epochs 1 --limit 640 --workers 1 --checkpoint %s/c 2>&1")
    :format(dir, exe, script, dir))
  local out = p:read("a")
  check(p:close(), out)
  local rows = require("torch.experiment.runner").read_metrics(dir .. "/metrics.jsonl")
  check_eq(#rows, 10) -- nine tenths of the epoch, then its end
  check(rows[1].train_loss > 0 and rows[1].test_accuracy == nil and rows[1].epoch == 1, "during the epoch")
  local last = rows[#rows]
  check_eq(last.step, 10)
  check(last.test_accuracy > 0.3 and last.test_loss > 0 and last.train_loss > 0, "after the epoch")
  local acc = tonumber(out:match("epoch 1: test accuracy ([%d.]+)%%"))
  check_close(last.test_accuracy * 100, acc, {atol = 0.006})
  os.execute("rm -rf '" .. dir .. "'")
end)

test("bad options are errors with a clear message", function()
  local ok, out = run("--model rnn")
  check(not ok and out:find("--model must be cnn or mlp", 1, true), out)
  ok, out = run("--epochs")
  check(not ok and out:find("--epochs needs a value", 1, true), out)
  ok, out = run("--lr fast")
  check(not ok and out:find("--lr needs a number", 1, true), out)
  ok, out = run("--data /nonexistent")
  check(not ok and out:find("dataset file not found: looked for /nonexistent/FashionMNIST/raw/train-images-idx3-ubyte",
    1, true), out)
end)
