-- tests/repl/test_long_ops.lua -- ops long enough to look at the Ctrl-C flag
-- between pieces (more than 1M elements in a row, a scan or a merge; see
-- docs/repl.md) give the same results across the piece boundaries.
-- References are closed forms (arange, counts), not our own output.

local N = 3 * 2 ^ 19 + 5 -- a piece and a half

test("cumsum of one long row crosses pieces", function()
  local y = torch.ones(N, {dtype = torch.float64}):cumsum(1)
  check_eq(y[1]:item(), 1)
  check_eq(y[2 ^ 20]:item(), 2 ^ 20)
  check_eq(y[2 ^ 20 + 1]:item(), 2 ^ 20 + 1)
  check_eq(y[N]:item(), N)
  check(y:eq(torch.arange(1, N + 1, {dtype = torch.float64})):all():item())
end)

test("cumsum and cummax down long columns cross pieces", function()
  local L = 2 ^ 20 + 3
  local x = torch.ones(L, 2, {dtype = torch.int64})
  local y = x:cumsum(1)
  check_eq(y[L]:totable(), {L, L})
  check_eq(y[2 ^ 19 + 1]:totable(), {2 ^ 19 + 1, 2 ^ 19 + 1})
  local a = torch.arange(1, L + 1, {dtype = torch.float64}):unsqueeze(2):expand(L, 2):contiguous()
  local v, i = a:cummax(1)
  check(v:eq(a):all():item(), "cummax values")
  check(i:select(2, 1):eq(torch.arange(1, L + 1)):all():item(), "cummax indices")
end)

test("a long sort, argsort and topk cross merge pieces", function()
  local p = torch.randperm(N)
  local s, idx = p:sort()
  check(s:eq(torch.arange(1, N + 1)):all():item(), "sorted values")
  check(p:index_select(1, idx):eq(s):all():item(), "sort indices")
  local d = p:sort(1, true)
  check_eq(d[1]:item(), N)
  check_eq(d[N]:item(), 1)
  local t = p:double():topk(5)
  check_eq(t:totable(), {N, N - 1, N - 2, N - 3, N - 4})
  check_eq(p:double():median():item(), math.floor((N + 1) / 2))
end)

test("unique over many values and long rows", function()
  local x = torch.arange(N) % 1000
  local u, inv, cnt = torch.unique(x, {return_inverse = true, return_counts = true})
  check_eq(u:numel(), 1000)
  check(u:eq(torch.arange(0, 1000)):all():item(), "unique values")
  check_eq(cnt:sum():item(), N)
  check(u:index_select(1, inv):eq(x):all():item(), "inverse")
  local rows = torch.stack({torch.arange(2 ^ 20 + 7) % 3, torch.arange(2 ^ 20 + 7) % 5}, 2)
  local ur = torch.unique(rows, {dim = 1})
  check_eq(ur:size(1), 15)
end)

test("softmax over many rows and nonzero over many elements", function()
  local x = torch.zeros(2 ^ 18 + 1, 4)
  local y = x:softmax(2)
  check(y:eq(0.25):all():item(), "uniform softmax")
  local m = torch.zeros(N, {dtype = torch.bool})
  m[1] = true
  m[2 ^ 20 + 1] = true
  m[N] = true
  check_eq(m:nonzero():view(-1):totable(), {1, 2 ^ 20 + 1, N})
  check_eq(torch.arange(N):masked_select(m):totable(), {0, 2 ^ 20, N - 1})
end)

test("an integer matmul with many rows", function()
  local a = torch.ones(2 ^ 16 + 3, 20, {dtype = torch.int64})
  local b = torch.ones(20, 20, {dtype = torch.int64})
  local c = a:matmul(b)
  check(c:eq(20):all():item(), "products")
end)
