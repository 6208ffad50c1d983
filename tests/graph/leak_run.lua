-- tests/graph/leak_run.lua -- a short autograd workload (hooks, views, CopySlices,
-- create_graph, retain_grad, gradcheck) run under valgrind by test_graph_memory.lua.
local x = torch.randn(4, 3, {dtype=torch.float64, requires_grad=true})
local w = torch.randn(3, 2, {dtype=torch.float64, requires_grad=true})
for i = 1, 20 do
  local y = x:matmul(w):tanh()
  y:register_hook(function(g) return g * 2 end)
  local z = torch.zeros(4, 4, {dtype=torch.float64})
  z[{{1,4},{1,2}}] = y
  local l = (z * z):sum()
  local g = torch.autograd.grad(l, {x, w}, {create_graph = true})
  g[1]:sum():backward()
  local h = x * 2
  h:retain_grad()
  h:sum():backward()
end
print(torch.autograd.gradcheck(function(a) return a:exp():sum(1) end, {torch.randn(3, 2, {dtype=torch.float64, requires_grad=true})}))
