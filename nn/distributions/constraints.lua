-- torch.distributions.constraints -- the sets parameters and samples must
-- lie in (PyTorch's names): each constraint has check(value) -> a bool
-- tensor (over the batch, the event dims reduced), event_dim, is_discrete,
-- and prints as PyTorch writes it. Only used for validation.
local torch = require "torch"

local C = {}

local MT = {__tostring = function(c) return c.repr end}

local function constraint(repr, check, o)
  o = o or {}
  return setmetatable({repr = repr, check = check, event_dim = o.event_dim or 0, is_discrete = o.is_discrete or false,
                       is_dependent = o.is_dependent or false}, MT)
end

local function num(v) return torch.is_tensor(v) and (v:numel() == 1 and v:item() or "tensor") or v end
local function fmt(v)
  v = num(v)
  if math.type(v) == "float" then
    local s = ("%g"):format(v)
    return s:find("[.en]") and s or s .. ".0"
  end
  return tostring(v)
end

C.real = constraint("Real()", function(v) return v:eq(v) end)
C.boolean = constraint("Boolean()", function(v) return v:eq(0):logical_or(v:eq(1)) end, {is_discrete = true})
C.dependent = constraint("Dependent()", function() error("constraints.dependent cannot be checked", 2) end,
                         {is_dependent = true})

function C.greater_than(lb)
  return constraint(("GreaterThan(lower_bound=%s)"):format(fmt(lb)), function(v) return v:gt(lb) end)
end
function C.greater_than_eq(lb)
  return constraint(("GreaterThanEq(lower_bound=%s)"):format(fmt(lb)), function(v) return v:ge(lb) end)
end
function C.interval(lb, ub)
  return constraint(("Interval(lower_bound=%s, upper_bound=%s)"):format(fmt(lb), fmt(ub)),
                    function(v) return v:ge(lb):logical_and(v:le(ub)) end)
end
function C.half_open_interval(lb, ub)
  return constraint(("HalfOpenInterval(lower_bound=%s, upper_bound=%s)"):format(fmt(lb), fmt(ub)),
                    function(v) return v:ge(lb):logical_and(v:lt(ub)) end)
end
-- integer_interval(lb, ub): integers lb..ub (categories are 1..K here).
function C.integer_interval(lb, ub)
  return constraint(("IntegerInterval(lower_bound=%s, upper_bound=%s)"):format(fmt(lb), fmt(ub)),
                    function(v) return v:eq(v:floor()):logical_and(v:ge(lb)):logical_and(v:le(ub)) end,
                    {is_discrete = true})
end

-- independent(base, n): base over the last n dims taken as one event.
function C.independent(base, n)
  return constraint(("IndependentConstraint(%s, %d)"):format(base.repr, n), function(v)
    local r = base.check(v)
    for _ = 1, n do r = r:all(-1) end
    return r
  end, {event_dim = base.event_dim + n, is_discrete = base.is_discrete})
end

C.positive = C.greater_than(0.0)
C.nonnegative = C.greater_than_eq(0.0)
C.unit_interval = C.interval(0.0, 1.0)
C.real_vector = C.independent(C.real, 1)
C.simplex = constraint("Simplex()", function(v)
  return v:ge(0):all(-1):logical_and((v:sum(-1) - 1):abs():lt(1e-6))
end, {event_dim = 1})
C.one_hot = constraint("OneHot()", function(v)
  return v:eq(0):logical_or(v:eq(1)):all(-1):logical_and(v:sum(-1):eq(1))
end, {event_dim = 1, is_discrete = true})

return C
