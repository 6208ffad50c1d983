-- torch.rl.modules.exploration -- the interaction type every probabilistic
-- module reads when it turns a distribution into an action: RANDOM
-- (sample), DETERMINISTIC (deterministic_sample), MODE or MEAN; nil means
-- "each module's default_interaction_type". One global, set for the
-- duration of a function (TorchRL's set_exploration_type context manager).
local M = {}

local TYPES = {"RANDOM", "DETERMINISTIC", "MODE", "MEAN"}
local ExplorationType = {}
for _, n in ipairs(TYPES) do ExplorationType[n] = n:lower() end
M.ExplorationType = ExplorationType
M.InteractionType = ExplorationType

local current = nil

-- check(fname, t) -> t when t is one of ExplorationType's values (or nil).
local function check(fname, t)
  if t == nil then return nil end
  for _, n in ipairs(TYPES) do if t == ExplorationType[n] then return t end end
  error(("%s: unknown exploration type %s (use torch.rl.modules.ExplorationType.RANDOM, DETERMINISTIC, MODE or MEAN)")
        :format(fname, tostring(t)), 3)
end
M._check = check

-- exploration_type() -> the type set by the innermost set_exploration_type, or nil.
function M.exploration_type() return current end
M.interaction_type = M.exploration_type

-- set_exploration_type(type, fn, ...) -> fn(...)'s results, with the global
-- type set to `type` while fn runs (restored even when fn raises).
-- set_exploration_type(type) without fn sets it until changed.
function M.set_exploration_type(t, fn, ...)
  check("set_exploration_type", t)
  if fn == nil then current = t; return end
  if type(fn) ~= "function" then
    error("set_exploration_type: the second argument must be a function to run, got " .. type(fn), 2)
  end
  local saved = current
  current = t
  local res = table.pack(pcall(fn, ...))
  current = saved
  if not res[1] then error(res[2], 0) end
  return table.unpack(res, 2, res.n)
end
M.set_interaction_type = M.set_exploration_type

return M
