-- tests/scripts/test_train_spoken_digits.lua -- the spoken-digit script as a
-- user runs it: it synthesizes a small voice set (make_spoken_digits
-- --quick) when the data folder is empty, trains an epoch, evaluates the
-- held-out voice and the human voice (when Debian's Asterisk prompts are
-- installed), writes a checkpoint that --resume continues; bad options are
-- errors that name them.
local exe = arg and arg[-1] or "build/moontorch"
local here = debug.getinfo(1, "S").source:match("^@(.*)/[^/]*$") or "tests/scripts"
local script = here .. "/../../scripts/train_spoken_digits.lua"
local maker = here .. "/../../scripts/audio/make_spoken_digits.lua"

local function have(cmd) return os.execute(cmd .. " >/dev/null 2>&1") end

local function run(args)
  local p = io.popen(("%s %s %s 2>&1"):format(exe, script, args))
  local out = p:read("a")
  local ok = p:close()
  return ok, out
end

test("a short run on a quick voice set trains, evaluates held-out and real voices, checkpoints and resumes", function()
  if not (have("espeak-ng --version") and have("flite -lv") and have("sox --version")) then
    print("  (skipped: espeak-ng, flite or sox is not installed)")
    return
  end
  local dir = os.tmpname()
  os.remove(dir)
  check(os.execute(("%s %s --root %s --quick --quiet"):format(exe, maker, dir)), "make_spoken_digits --quick")
  local ckpt = os.tmpname()
  os.remove(ckpt)
  local ok, out = run(("--data %s --holdout flite_slt --epochs 1 --batch-size 16 --workers 1 --checkpoint %s"):format(dir, ckpt))
  check(ok, out)
  check(out:find("80 training clips (2 voices), 40 held-out clips (flite_slt)", 1, true), out)
  local acc = tonumber(out:match("epoch 1: held%-out voices accuracy ([%d.]+)%%"))
  check(acc and acc >= 0 and acc <= 100, out)
  local f = io.open("/usr/share/asterisk/sounds/en_US_f_Allison/digits/7.wav")
  if f then
    f:close()
    check(out:find("accuracy [%d.]+%% on 10 recordings"), out)
  end
  local ck = torch.load(ckpt)
  check_eq(ck.epoch, 1)
  check_eq(ck.features, "logmel")
  ok, out = run(("--data %s --holdout flite_slt --epochs 2 --batch-size 16 --workers 1 --checkpoint %s --resume"):format(dir, ckpt))
  check(ok, out)
  check(out:find("resumed from", 1, true) and out:find("after epoch 1", 1, true), out)
  check(out:find("epoch 2: held-out", 1, true), out)
  os.execute("rm -rf " .. dir)
  os.remove(ckpt)
end)

test("bad options are errors naming them", function()
  local ok, out = run("--features wavelets")
  check(not ok and out:find("--features must be logmel or mfcc", 1, true), out)
  ok, out = run("--device tpu")
  check(not ok and out:find("--device must be cpu or cuda", 1, true), out)
  ok, out = run("--data /nonexistent/digits --holdout nobody")
  check(not ok, out)
end)
