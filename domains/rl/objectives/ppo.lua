-- torch.rl.objectives.ppo -- ClipPPOLoss and KLPENPPOLoss: PPO's clipped
-- surrogate and its KL-penalized form (Schulman et al. 2017), with
-- TorchRL's entropy bonus and critic loss. Returns a TensorDict of
-- loss_objective, loss_entropy, loss_critic and diagnostics (entropy,
-- clip_fraction, ESS, kl_approx / kl).
local torch = require "torch"
local D = require "torch.distributions"
local C = require "torch.rl.objectives.common"
local PG = require "torch.rl.objectives._pg"

local M = {}
local PREFIX = C.PREFIX

-- log_weight(self, td) -> log(pi / pi_old) [*B, 1], the distribution, kl_approx.
local function log_weight(self, td, adv)
  local prev = self:_get(td, "sample_log_prob")
  if prev.requires_grad then
    error(PREFIX .. self:_get_name() .. ": the stored log-probability ('" .. tostring(self.tensor_keys.sample_log_prob)
          .. "') requires grad; collect it without gradients", 3)
  end
  local lp, dist = PG.log_prob(self, td)
  local lw = PG.like_adv(lp - prev, adv)
  return lw, dist, PG.like_adv(prev - lp, adv)
end

local function init(self, fname, actor_network, critic_network, extra, ...)
  local o = PG.args(fname, extra, ...)
  if critic_network == nil and o.critic ~= nil then critic_network = o.critic end
  PG.setup(self, fname, actor_network or o.actor, critic_network, o)
  PG.set_key_options(self, o)
  return o
end

---------------------------------------------------------------- ClipPPOLoss

local ClipPPOLoss = PG.class("ClipPPOLoss")
M.ClipPPOLoss = ClipPPOLoss

-- ClipPPOLoss(actor_network, critic_network[, {clip_epsilon=0.2,
-- entropy_bonus=true, samples_mc_entropy=1, entropy_coef=0.01,
-- critic_coef=1, loss_critic_type="smooth_l1", normalize_advantage=false,
-- gamma=}]).
function ClipPPOLoss:__init(actor_network, critic_network, ...)
  local fname = PREFIX .. "ClipPPOLoss"
  local o = init(self, fname, actor_network, critic_network, {"clip_epsilon"}, ...)
  self.clip_epsilon = o.clip_epsilon or 0.2
  if type(self.clip_epsilon) ~= "number" or self.clip_epsilon <= 0 or self.clip_epsilon >= 1 then
    error(("%s: clip_epsilon must be a number in (0, 1), got %s"):format(fname, tostring(o.clip_epsilon)), 2)
  end
end

-- forward(td) -> TensorDict{loss_objective, clip_fraction, ESS, kl_approx,
-- entropy, loss_entropy, loss_critic}: loss_objective =
-- -mean(min(r A, clip(r, 1 - eps, 1 + eps) A)), r = pi / pi_old.
function ClipPPOLoss:forward(td)
  td = td:copy()
  local adv = PG.advantage(self, td)
  local lw, dist, kl_approx = log_weight(self, td, adv)
  local lo, hi = math.log(1 - self.clip_epsilon), math.log(1 + self.clip_epsilon)
  local gain1 = lw:exp() * adv
  local lw_clip = lw:clamp(lo, hi)
  local gain2 = lw_clip:exp() * adv
  local gain = torch.minimum(gain1, gain2)
  local out = {loss_objective = -gain:mean()}
  torch.no_grad(function()
    local l = lw:detach():reshape({-1})
    out.ESS = (l:logsumexp(1) * 2 - (l * 2):logsumexp(1)):exp() / l:numel()
    out.clip_fraction = lw_clip:ne(lw):to(lw.dtype):mean()
  end)
  out.kl_approx = kl_approx:detach():mean()
  return PG.finish(self, out, td, dist)
end

---------------------------------------------------------------- KLPENPPOLoss

local KLPENPPOLoss = PG.class("KLPENPPOLoss")
M.KLPENPPOLoss = KLPENPPOLoss

-- KLPENPPOLoss(actor_network, critic_network[, {dtarg=0.01, beta=1,
-- increment=2, decrement=0.5, samples_mc_kl=1, ...ClipPPOLoss's}]).
function KLPENPPOLoss:__init(actor_network, critic_network, ...)
  local fname = PREFIX .. "KLPENPPOLoss"
  local o = init(self, fname, actor_network, critic_network,
                 {"dtarg", "beta", "increment", "decrement", "samples_mc_kl"}, ...)
  self.dtarg, self.increment, self.decrement = o.dtarg or 0.01, o.increment or 2.0, o.decrement or 0.5
  self.samples_mc_kl = o.samples_mc_kl or 1
  self:register_buffer("beta", torch.tensor(o.beta or 1.0))
  if self.increment < 1 or self.decrement > 1 then
    error(("%s: increment must be >= 1 and decrement <= 1, got %g and %g"):format(fname, self.increment,
          self.decrement), 2)
  end
end

-- forward(td) -> TensorDict{loss_objective, kl, kl_approx, entropy,
-- loss_entropy, loss_critic}: loss_objective = -mean(r A - beta KL(pi_old
-- || pi)); beta then doubles (halves) when the mean KL is above 1.5 dtarg
-- (below dtarg / 1.5). pi_old is built from the parameters stored in td.
function KLPENPPOLoss:forward(td)
  local orig = td
  td = td:copy()
  local adv = PG.advantage(self, td)
  local lw, dist, kl_approx = log_weight(self, td, adv)
  local neg = lw:exp() * adv
  local prev = self.actor_network:build_dist_from_params(orig)
  local ok, kl = pcall(D.kl_divergence, prev, dist)
  if not ok then
    local x = prev:sample({self.samples_mc_kl})
    kl = (prev:log_prob(x) - dist:log_prob(x)):mean(1)
  end
  kl = PG.like_adv(kl, adv)
  local beta = self.beta:item()
  neg = neg - kl * beta
  local klm = kl:detach():mean():item()
  if klm > self.dtarg * 1.5 then self.beta:mul_(self.increment)
  elseif klm < self.dtarg / 1.5 then self.beta:mul_(self.decrement) end
  local out = {loss_objective = -neg:mean(), kl = kl:detach():mean(), kl_approx = kl_approx:detach():mean()}
  return PG.finish(self, out, td, dist)
end

return M
