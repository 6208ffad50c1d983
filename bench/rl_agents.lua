-- bench/rl_agents.lua -- wall-clock to solve CartPole-v1 (mean greedy return
-- >= 475 over 100 evaluation episodes) with scripts/rl/cartpole_dqn.lua and
-- cartpole_ppo.lua, the median over seeds 1, 2, 3; the extra column is the
-- frames it took. The *_compiled_solve rows run the scripts with --compile
-- against the same (eager) peer. Peer: bench/peers/rl_agents.py (the same agents,
-- hyperparameters and evaluation written plainly in PyTorch, CleanRL-style,
-- on Gymnasium's CartPole equations in NumPy). Both run on one thread (the
-- scripts' default: the networks are tiny).
package.path = "bench/?.lua;" .. package.path
local B = require "common"
local only = arg and arg[1]
local exe = arg and arg[-1] or "build/moontorch"

-- solve(script, seed) -> seconds, frames of one run (from its result line)
local function solve(script, seed, flags)
  local p = io.popen(("%s scripts/rl/%s --seed %d --threads 1 %s--checkpoint /tmp/bench_rl_agents.ckpt 2>&1"):format(
    exe, script, seed, flags))
  local out = p:read("a")
  p:close()
  local frames, secs = out:match("result: solved at frame (%d+) in ([%d.]+) s")
  if not frames then
    frames, secs = out:match("not solved within (%d+) frames %(([%d.]+) s%)")
  end
  assert(frames, "no result line from " .. script .. ":\n" .. out)
  return tonumber(secs), tonumber(frames)
end

for _, r in ipairs{{"cartpole_dqn_solve", "cartpole_dqn.lua", ""}, {"cartpole_ppo_solve", "cartpole_ppo.lua", ""},
                   {"cartpole_dqn_compiled_solve", "cartpole_dqn.lua", "--compile "},
                   {"cartpole_ppo_compiled_solve", "cartpole_ppo.lua", "--compile "}} do
  if not only or only == "all" or only == r[1] then
    local runs = {}
    for seed = 1, 3 do
      local s, f = solve(r[2], seed, r[3])
      runs[#runs + 1] = {s, f}
    end
    table.sort(runs, function(a, b) return a[1] < b[1] end)
    B.report(r[1], runs[2][1], runs[2][2], "frames")
  end
end
os.remove("/tmp/bench_rl_agents.ckpt")
