-- tests/tensor/test_shape.lua -- shape and movement ops (tensor/shape.c,
-- tensor/view.c through lua_bindings/l_shape.c) against PyTorch values in
-- tests/ref/shape.lua: views share storage, non-contiguous inputs work,
-- 1-based dims and indices, and bad calls raise messages naming the op.
local R = ref("shape")

local function input(c) return torch.tensor(c.input) end

-- x must have the case's shape, values and (when recorded) dtype exactly
local function same(x, c)
  check_shape(x, c.shape)
  check_close(x, c.expected, {atol = 0, rtol = 0})
  if c.dtype then check_eq(x.dtype.name, c.dtype, "dtype") end
end

local function same_pieces(list, c)
  check_eq(#list, #c.expected, "number of pieces")
  for i, p in ipairs(list) do
    check_shape(p, c.shapes[i])
    check_close(p, c.expected[i], {atol = 0, rtol = 0})
  end
end

local function unpack_args(c) return table.unpack(c.args) end

---------------------------------------------------------------- views

test("view, reshape and flatten match PyTorch", function()
  same(input(R.view_4x6):view(4, 6), R.view_4x6)
  same(input(R.view_infer):view({-1, 8}), R.view_infer)
  same(input(R.reshape_transposed):t():reshape(12), R.reshape_transposed)
  same(torch.reshape(input(R.reshape_transposed):t(), {12}), R.reshape_transposed)
  same(input(R.flatten_from2):flatten(unpack_args(R.flatten_from2)), R.flatten_from2)
  same(input(R.flatten_permuted):permute(3, 1, 2):flatten(unpack_args(R.flatten_permuted)), R.flatten_permuted)
  same(torch.flatten(input(R.flatten_from2), {start_dim = 2}), R.flatten_from2)
  local x = input(R.view_4x6)
  check_shape(x:view_as(torch.zeros(6, 4)), {6, 4})
  check_shape(x:transpose(1, 3):reshape_as(torch.zeros(24)), {24})
  check_shape(x:view(x:view(4, 6).shape), {4, 6})
  check_shape(torch.ravel(x:transpose(1, 3)), {24})
end)

test("unflatten, squeeze and unsqueeze match PyTorch", function()
  same(input(R.unflatten_last):unflatten(unpack_args(R.unflatten_last)), R.unflatten_last)
  same(torch.unflatten(input(R.unflatten_infer), unpack_args(R.unflatten_infer)), R.unflatten_infer)
  same(input(R.squeeze_all):squeeze(), R.squeeze_all)
  same(input(R.squeeze_dim3):squeeze(unpack_args(R.squeeze_dim3)), R.squeeze_dim3)
  same(input(R.squeeze_dim2_noop):squeeze{dim = 2}, R.squeeze_dim2_noop)
  check_shape(input(R.squeeze_all):squeeze({1, 3}), {3, 2})
  same(input(R.unsqueeze_first):unsqueeze(unpack_args(R.unsqueeze_first)), R.unsqueeze_first)
  same(torch.unsqueeze(input(R.unsqueeze_neg1), -1), R.unsqueeze_neg1)
  same(input(R.unsqueeze_middle):unsqueeze(2), R.unsqueeze_middle)
  check_shape(torch.tensor(3):unsqueeze(1), {1})
  check_shape(torch.tensor(3):squeeze(1), {})
end)

test("permute, transpose, t and movedim match PyTorch", function()
  same(input(R.permute_312):permute(unpack_args(R.permute_312)), R.permute_312)
  same(input(R.permute_312):permute(R.permute_312.args), R.permute_312)
  same(torch.transpose(input(R.transpose_13), unpack_args(R.transpose_13)), R.transpose_13)
  same(input(R.transpose_13):swapaxes(1, -1), R.transpose_13)
  same(input(R.transpose_13):swapdims(3, 1), R.transpose_13)
  same(input(R.t_matrix):t(), R.t_matrix)
  same(torch.t(input(R.t_matrix)), R.t_matrix)
  check_shape(torch.ones(3):t(), {3})
  same(input(R.movedim_1to3):movedim(unpack_args(R.movedim_1to3)), R.movedim_1to3)
  same(torch.movedim(input(R.movedim_multi), unpack_args(R.movedim_multi)), R.movedim_multi)
  same(input(R.movedim_multi):moveaxis(unpack_args(R.movedim_multi)), R.movedim_multi)
end)

test("expand, broadcast_to and broadcast_tensors match PyTorch", function()
  same(input(R.expand_cols):expand(unpack_args(R.expand_cols)), R.expand_cols)
  same(input(R.expand_lead):expand(R.expand_lead.args), R.expand_lead)
  same(input(R.expand_cols):expand_as(torch.zeros(3, 4)), R.expand_cols)
  same(torch.broadcast_to(input(R.broadcast_to), R.broadcast_to.args), R.broadcast_to)
  local a, b = torch.broadcast_tensors(torch.tensor({{0}, {1}, {2}}), torch.tensor({0, 1, 2, 3}))
  local c = R.broadcast_tensors
  check_shape(a, c.shape)
  check_close(a, c.expected[1])
  check_close(b, c.expected[2])
  local a2, b2 = torch.broadcast_tensors({torch.tensor({{0}, {1}, {2}}), torch.tensor({0, 1, 2, 3})})
  check_close(a2, c.expected[1])
  check_close(b2, c.expected[2])
end)

test("repeat (Tensor.repeat) and tile (numpy) match PyTorch", function()
  for _, name in ipairs({"repeat_more_dims", "repeat_2x3", "repeat_zero", "repeat_1d"}) do
    local c = R[name]
    same(input(c)["repeat"](input(c), unpack_args(c)), c)
  end
  same(input(R.tile_fewer):tile(unpack_args(R.tile_fewer)), R.tile_fewer)
  same(torch.tile(input(R.tile_transposed):t(), R.tile_transposed.args), R.tile_transposed)
  same(input(R.tile_1d_to_2d):tile(2, 2), R.tile_1d_to_2d)
  -- float, and a strided (sliced) input
  local x = torch.tensor({{1.5, -2, 3}, {4, 5, 6}}, {dtype = torch.float64})
  local sl = x:narrow(2, 2, 2) -- {{-2, 3}, {5, 6}}
  check_close(sl:tile(1, 2), {{-2, 3, -2, 3}, {5, 6, 5, 6}})
  check_eq(sl:tile(1, 2).dtype, torch.float64)
end)

test("narrow, select and unfold match PyTorch (1-based starts and indices)", function()
  same(input(R.narrow_cols):narrow(unpack_args(R.narrow_cols)), R.narrow_cols)
  same(torch.narrow(input(R.narrow_neg_start), unpack_args(R.narrow_neg_start)), R.narrow_neg_start)
  same(input(R.narrow_transposed):t():narrow(unpack_args(R.narrow_transposed)), R.narrow_transposed)
  check_shape(torch.ones(5):narrow(1, 6, 0), {0})
  same(input(R.select_mid):select(unpack_args(R.select_mid)), R.select_mid)
  same(torch.select(input(R.select_last), unpack_args(R.select_last)), R.select_last)
  same(input(R.unfold_1d):unfold(unpack_args(R.unfold_1d)), R.unfold_1d)
  same(input(R.unfold_rows):unfold(unpack_args(R.unfold_rows)), R.unfold_rows)
end)

test("diagonal matches PyTorch (a view)", function()
  same(input(R.diagonal_default):diagonal(), R.diagonal_default)
  same(torch.diagonal(input(R.diagonal_off), unpack_args(R.diagonal_off)), R.diagonal_off)
  same(input(R.diagonal_off):diagonal{offset = 1, dim1 = 2, dim2 = 3}, R.diagonal_off)
  same(input(R.diagonal_neg):diagonal(-1), R.diagonal_neg)
end)

test("views share storage with their base", function()
  local base = torch.zeros(3, 4)
  base:view(12):narrow(1, 2, 1):fill_(1)                -- element (1, 2)
  base:t():select(1, 3):narrow(1, 3, 1):fill_(2)        -- element (3, 3)
  base:unsqueeze(1):squeeze(1):permute(2, 1):select(2, 2):fill_(3) -- row 2
  base:diagonal(1):narrow(1, 3, 1):fill_(4)             -- element (3, 4)
  base:unfold(2, 2, 2):select(3, 2):select(1, 1):fill_(5) -- (1, 2) and (1, 4)
  base:flatten():movedim(1, 1):narrow(1, 9, 1):fill_(6) -- element (3, 1)
  check_close(base, {{0, 5, 0, 5}, {3, 3, 3, 3}, {6, 0, 2, 4}})
  local ex = torch.zeros(3, 1)
  local e = ex:expand(3, 4)
  ex:fill_(7)
  check_close(e, {{7, 7, 7, 7}, {7, 7, 7, 7}, {7, 7, 7, 7}})
  local pieces = base:split(2)
  pieces[2]:fill_(-1)
  check_close(base:select(1, 3), {-1, -1, -1, -1})
  local ch = base:chunk(2, 2)
  ch[1]:zero_()
  check_close(base:select(2, 1), {0, 0, 0})
  local u = base:unbind(2)
  u[4]:fill_(9)
  check_close(base:select(2, 4), {9, 9, 9})
  local X, Y = torch.meshgrid(torch.zeros(2), torch.zeros(3))
  check_shape(X, {2, 3})
  check_eq(X:stride(), {1, 0})
end)

---------------------------------------------------------------- pieces

test("split, chunk, tensor_split and unbind match PyTorch", function()
  same_pieces(input(R.chunk_5by3):chunk(unpack_args(R.chunk_5by3)), R.chunk_5by3)
  same_pieces(torch.chunk(input(R.chunk_6by4), 4), R.chunk_6by4)
  same_pieces(input(R.chunk_cols):chunk(unpack_args(R.chunk_cols)), R.chunk_cols)
  same_pieces(input(R.chunk_cols):chunk(2, {dim = 2}), R.chunk_cols)
  same_pieces(torch.zeros(0):chunk(3), R.chunk_empty)
  same_pieces(input(R.split_2):split(2), R.split_2)
  same_pieces(torch.split(input(R.split_sizes), unpack_args(R.split_sizes)), R.split_sizes)
  same_pieces(input(R.split_cols):split(unpack_args(R.split_cols)), R.split_cols)
  same_pieces(input(R.tensor_split_sections):tensor_split(3), R.tensor_split_sections)
  same_pieces(input(R.tensor_split_indices):tensor_split(unpack_args(R.tensor_split_indices)), R.tensor_split_indices)
  same_pieces(input(R.tensor_split_neg):tensor_split(unpack_args(R.tensor_split_neg)), R.tensor_split_neg)
  same_pieces(input(R.tensor_split_unsorted):tensor_split(unpack_args(R.tensor_split_unsorted)),
              R.tensor_split_unsorted)
  same_pieces(input(R.unbind_dim2):unbind(unpack_args(R.unbind_dim2)), R.unbind_dim2)
  -- a transposed input splits along its own (logical) dims
  local m = input(R.chunk_cols)
  local p = m:t():split(2)
  check_eq(#p, 2)
  check_close(p[1], {{0, 4, 8}, {1, 5, 9}})
end)

---------------------------------------------------------------- cat and stack

test("cat matches PyTorch, promoting dtypes and skipping 1-D empty tensors", function()
  same(torch.cat({input(R.cat_rows), torch.tensor(R.cat_rows.other)}), R.cat_rows)
  same(torch.cat({input(R.cat_cols), torch.tensor(R.cat_cols.other)}, 2), R.cat_cols)
  same(torch.cat({input(R.cat_cols), torch.tensor(R.cat_cols.other)}, {dim = 2}), R.cat_cols)
  same(torch.cat{input(R.cat_cols), torch.tensor(R.cat_cols.other), dim = -1}, R.cat_cols)
  same(torch.cat({input(R.cat_transposed):t(), torch.tensor(R.cat_transposed.other)}, -1), R.cat_transposed)
  same(torch.cat({input(R.cat_promote):int(), torch.tensor(R.cat_promote.other):half()}), R.cat_promote)
  local m = input(R.cat_legacy_empty)
  same(torch.cat({m, torch.tensor({}):long(), m}), R.cat_legacy_empty)
  local v = input(R.cat_three_1d)
  same(torch.concat({v, v * 2, v:narrow(1, 1, 2)}), R.cat_three_1d)
  same(torch.concatenate({v, v * 2, v:narrow(1, 1, 2)}), R.cat_three_1d)
end)

test("cat writes into out= and returns it", function()
  local a, b = torch.ones(2, 2), torch.zeros(1, 2)
  local out = torch.empty(3, 2, {dtype = torch.float64})
  local r = torch.cat({a, b}, 1, {out = out})
  check(rawequal(r, out), "cat returns the out= tensor")
  check_close(out, {{1, 1}, {1, 1}, {0, 0}})
  check_eq(out.dtype, torch.float64)
  check_error(function() return torch.cat({a, b}, {out = torch.empty(2, 2)}) end, "cat: out= has shape 2x2")
  check_error(function() return torch.cat({a, b}, {out = a}) end, "cat: out= must not share memory")
end)

test("stack, hstack, vstack and dstack match PyTorch", function()
  local c = R.stack_first
  same(torch.stack({input(c), torch.tensor(c.other)}), c)
  same(torch.stack({input(R.stack_second), torch.tensor(R.stack_second.other)}, 2), R.stack_second)
  local m = input(R.stack_last_2d)
  same(torch.stack({m, m + 1}, -1), R.stack_last_2d)
  same(torch.stack({m, m + 1}, {dim = 3}), R.stack_last_2d)
  same(torch.stack({m:t(), m:t() * 3}, 2), R.stack_transposed)
  same(torch.hstack({input(R.hstack_1d), torch.tensor(R.hstack_1d.other)}), R.hstack_1d)
  same(torch.hstack({input(R.hstack_2d), torch.tensor(R.hstack_2d.other)}), R.hstack_2d)
  same(torch.vstack({input(R.vstack_1d), torch.tensor(R.vstack_1d.other)}), R.vstack_1d)
  same(torch.dstack({input(R.dstack_2d), input(R.dstack_2d) * 2}), R.dstack_2d)
  local out = torch.empty(2, 5, {dtype = torch.int64})
  check(rawequal(torch.stack({input(c), torch.tensor(c.other)}, {out = out}), out))
  check_close(out, c.expected)
end)

---------------------------------------------------------------- flip, roll, rot90

test("flip, fliplr and flipud match PyTorch and copy", function()
  same(input(R.flip_13):flip(unpack_args(R.flip_13)), R.flip_13)
  same(torch.flip(input(R.flip_13), R.flip_13.args), R.flip_13)
  same(input(R.flip_transposed):t():flip(1), R.flip_transposed)
  same(input(R.flip_neg):flip(-1), R.flip_neg)
  same(input(R.flip_neg):flip{dims = {-1}}, R.flip_neg)
  check_close(input(R.flip_float):flip(1, 2), R.flip_float.expected, {atol = 0, rtol = 0})
  same(torch.fliplr(input(R.fliplr)), R.fliplr)
  same(input(R.flipud):flipud(), R.flipud)
  local x = torch.tensor({1, 2, 3})
  local f = x:flip(1)
  f:fill_(0)
  check_close(x, {1, 2, 3}) -- flip returns a copy, as in PyTorch
  check(f:is_contiguous())
  check_close(torch.tensor(7):flip(1), 7)
end)

test("roll matches PyTorch (flattened, per dim, repeated dims)", function()
  same(input(R.roll_flat):roll(1), R.roll_flat)
  same(input(R.roll_dim1):roll(unpack_args(R.roll_dim1)), R.roll_dim1)
  same(torch.roll(input(R.roll_two_dims), unpack_args(R.roll_two_dims)), R.roll_two_dims)
  same(input(R.roll_transposed):t():roll(unpack_args(R.roll_transposed)), R.roll_transposed)
  same(input(R.roll_big_shift):roll(unpack_args(R.roll_big_shift)), R.roll_big_shift)
  same(input(R.roll_same_dim_twice):roll(unpack_args(R.roll_same_dim_twice)), R.roll_same_dim_twice)
  same(input(R.roll_dim1):roll{shifts = 1, dims = 1}, R.roll_dim1)
  same(input(R.roll_flat):t():t():roll(1), R.roll_flat)
  check_close(input(R.roll_flat):t():roll(1), {{11, 0, 4, 8}, {1, 5, 9, 2}, {6, 10, 3, 7}})
end)

test("rot90 matches PyTorch", function()
  same(input(R.rot90_k1):rot90(), R.rot90_k1)
  same(torch.rot90(input(R.rot90_k2), 2), R.rot90_k2)
  same(input(R.rot90_kneg1):rot90(-1), R.rot90_kneg1)
  same(input(R.rot90_k1_dims):rot90(unpack_args(R.rot90_k1_dims)), R.rot90_k1_dims)
  same(input(R.rot90_k1):rot90{k = 5}, R.rot90_k1)
end)

---------------------------------------------------------------- triangles, diagonals

test("tril and triu match PyTorch (any diagonal, batched, transposed)", function()
  for _, name in ipairs({"tril", "tril_1", "tril_neg1", "tril_batched", "tril_big"}) do
    same(input(R[name]):tril(unpack_args(R[name])), R[name])
  end
  for _, name in ipairs({"triu", "triu_2", "triu_neg2", "triu_big_neg"}) do
    same(torch.triu(input(R[name]), unpack_args(R[name])), R[name])
  end
  same(input(R.triu_transposed):t():triu(1), R.triu_transposed)
  same(input(R.tril_1):tril{diagonal = 1}, R.tril_1)
  local b = torch.ones(3, 3):bool():tril()
  check_close(b, {{true, false, false}, {true, true, false}, {true, true, true}})
end)

test("tril_ and triu_ work in place, also through a view", function()
  local x = input(R.tril_1)
  local r = x:tril_(1)
  check(rawequal(r, x), "tril_ returns x")
  same(x, R.tril_1)
  local y = input(R.triu_transposed)
  y:t():triu_(1) -- writes through the transposed view
  same(y:t(), R.triu_transposed)
  local out = torch.zeros(3, 4)
  check(rawequal(torch.tril(input(R.tril), 0, {out = out}), out))
  check_close(out, R.tril.expected)
end)

test("diag and diag_embed match PyTorch", function()
  for _, name in ipairs({"diag_vec", "diag_vec_1", "diag_vec_neg2", "diag_mat", "diag_mat_1", "diag_mat_neg1"}) do
    same(input(R[name]):diag(unpack_args(R[name])), R[name])
  end
  same(torch.diag(input(R.diag_mat_transposed):t(), 1), R.diag_mat_transposed)
  same(input(R.diag_embed):diag_embed(), R.diag_embed)
  same(torch.diag_embed(input(R.diag_embed_off), unpack_args(R.diag_embed_off)), R.diag_embed_off)
  local m = input(R.diag_mat)
  local d = m:diag()
  d:fill_(-1)
  check_close(m:select(1, 1), {0, 1, 2, 3}) -- diag of a matrix is a copy
end)

---------------------------------------------------------------- grids

test("meshgrid (ij default, xy) and atleast_nd match PyTorch", function()
  local c = R.meshgrid
  local x, y = torch.tensor(c.x), torch.tensor(c.y)
  local X, Y = torch.meshgrid(x, y)
  check_close(X, c.ij[1])
  check_close(Y, c.ij[2])
  X, Y = torch.meshgrid({x, y}, {indexing = "xy"})
  check_close(X, c.xy[1])
  check_close(Y, c.xy[2])
  X, Y = torch.meshgrid(x, y, {indexing = "ij"})
  check_close(Y, c.ij[2])
  local a = R.atleast
  check_shape(torch.atleast_1d(torch.tensor(5)), a.d1)
  local s2, v2 = torch.atleast_2d(torch.tensor(5), torch.tensor({0, 1, 2, 3, 4}))
  check_shape(s2, a.d2[1])
  check_shape(v2, a.d2[2])
  local s3, v3, m3 = torch.atleast_3d(torch.tensor(5), torch.zeros(5), torch.zeros(3, 4))
  check_shape(s3, a.d3[1])
  check_shape(v3, a.d3[2])
  check_shape(m3, a.d3[3])
  local m = torch.zeros(2, 3)
  check(rawequal(torch.atleast_2d(m), m), "atleast_2d returns a 2-D input itself")
  local l1, l2 = torch.atleast_1d({m, torch.tensor(1)})
  check(rawequal(l1, m))
  check_shape(l2, {1})
end)

---------------------------------------------------------------- dtypes and sizes

test("movement ops keep every dtype", function()
  for _, dt in ipairs({torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int8, torch.int16,
                       torch.int32, torch.int64, torch.uint8, torch.bool}) do
    local x = torch.tensor({{1, 0, 1}, {0, 1, 1}}):to(dt)
    for _, r in ipairs({x:flip(1), x:roll(1, 2), x:tril(), x["repeat"](x, 1, 2), torch.cat({x, x}), x:t():contiguous()}) do
      check_eq(r.dtype, dt, tostring(dt))
    end
    local want = dt == torch.bool and {{false, true, true}, {true, false, true}} or {{0, 1, 1}, {1, 0, 1}}
    check_close(x:flip(1), want)
  end
end)

test("larger inputs: cat, repeat, roll, flip agree with closed forms", function()
  local n = 300
  local rows = {}
  for i = 1, n do rows[i] = {i, -i} end
  local x = torch.tensor(rows, {dtype = torch.float64})   -- n x 2
  local c = torch.cat({x, x:flip(1)}, 1)                    -- 2n x 2
  check_close(c:select(1, n + 1), {n, -n})
  local r = x:t()["repeat"](x:t(), 3, 5)                      -- 6 x 5n
  check_shape(r, {6, 5 * n})
  check_close(r:select(1, 6):narrow(1, 4 * n + 1, 2), {-1, -2})
  local rl = x:roll(n + 7, 1)
  check_close(rl:select(1, 8), {1, -1})
  local tl = torch.ones(n, n):tril(-1)
  check_close(tl:select(1, n):narrow(1, n - 1, 2), {1, 0})
end)

---------------------------------------------------------------- bad input

test("bad calls of view ops name the op and the values", function()
  local a = torch.ones(2, 3)
  check_error(function() return a:view(4, 2) end, "view: shape 4x2 is invalid for a tensor of 6 elements")
  check_error(function() return a:t():view(6) end, "use reshape")
  check_error(function() return a:view(torch.float64) end, "view: viewing a tensor as another dtype")
  check_error(function() return a:view(2, "x") end, "view: sizes must be integers")
  check_error(function() return a:reshape(-2, 3) end, "reshape: invalid size -2")
  check_error(function() return a:flatten(3) end, "flatten: dimension 3 out of range (tensor has 2 dimensions")
  check_error(function() return a:flatten(2, 1) end, "flatten: start_dim 2 comes after end_dim 1")
  check_error(function() return a:unflatten(2, {2, 2}) end, "unflatten: sizes 2x2 don't multiply up to the size of dimension 2 (3)")
  check_error(function() return a:unflatten(2, {-1, -1}) end, "unflatten: only one size can be -1")
  check_error(function() return a:unflatten(0, {3}) end, "unflatten: dimension 0 out of range")
  check_error(function() return a:squeeze(3) end, "squeeze: dimension 3 out of range")
  check_error(function() return a:unsqueeze(4) end, "unsqueeze: dimension 4 out of range (tensor has 2 dimensions; use 1..3")
  check_error(function() return a:unsqueeze() end, "unsqueeze: expected a dimension")
  check_error(function() return a:permute(2) end, "permute: got 1 dimensions for a tensor with 2")
  check_error(function() return a:permute(2, 2) end, "permute: dimension 2 appears twice")
  check_error(function() return a:permute({1, 0}) end, "permute: dimension 0 out of range")
  check_error(function() return a:transpose(1, 3) end, "transpose: dimension 3 out of range")
  check_error(function() return a:transpose(1.5, 2) end, "transpose: dim0 must be an integer, got 1.5")
  check_error(function() return torch.ones(2, 3, 4):t() end, "t: expects a tensor with at most 2 dimensions, got shape 2x3x4")
  check_error(function() return a:movedim({1, 2}, {2}) end, "movedim: source and destination must have the same number")
  check_error(function() return a:movedim({1, 1}, {1, 2}) end, "movedim: dimension 1 repeated in source")
  check_error(function() return a:movedim(1, 3) end, "movedim: dimension 3 out of range")
  check_error(function() return a:expand(4, 3) end, "expand: cannot expand shape 2x3 to 4x3")
  check_error(function() return a:expand(3) end, "expand: cannot expand shape 2x3 to 3 (fewer dimensions)")
  check_error(function() return torch.broadcast_to(a, {3, 3}) end, "broadcast_to: cannot broadcast shape 2x3 to 3x3 (size 2 ~= 3 at dimension 1)")
  check_error(function() return torch.broadcast_to(a, {-1, 2, 3}) end, "broadcast_to: size -1 is not allowed for the new dimension 1")
  check_error(function() return torch.broadcast_tensors(a, torch.ones(4)) end, "broadcast_tensors: shapes 2x3 and 4 cannot be broadcast")
  check_error(function() return torch.broadcast_tensors(a, 3) end, "broadcast_tensors: expected a tensor as argument #2, got number")
  check_shape(a, {2, 3})
  check_close(a, {{1, 1, 1}, {1, 1, 1}})
end)

test("bad calls of narrow, select, unfold, split and chunk", function()
  local a = torch.ones(2, 3)
  check_error(function() return a:narrow(2, 3, 2) end, "narrow: range [3, 4] is out of bounds for dimension 2 of size 3")
  check_error(function() return a:narrow(2, 0, 1) end, "narrow: start 0 is invalid")
  check_error(function() return a:narrow(2, -4, 1) end, "narrow: start -4 out of range for dimension 2 of size 3")
  check_error(function() return a:narrow(3, 1, 1) end, "narrow: dimension 3 out of range")
  check_error(function() return a:select(1, 3) end, "select: index 3 is out of bounds for dimension 1 with size 2")
  check_error(function() return a:select(1, 0) end, "select: index 0 is invalid")
  check_error(function() return a:select(2, -4) end, "select: index -4 is out of bounds for dimension 2 with size 3")
  check_error(function() return a:unfold(2, 4, 1) end, "unfold: size 4 is larger than dimension 2 of size 3")
  check_error(function() return a:unfold(2, 2, 0) end, "unfold: step must be positive, got 0")
  check_error(function() return a:chunk(0) end, "chunk: number of chunks must be positive, got 0")
  check_error(function() return a:chunk(2, 3) end, "chunk: dimension 3 out of range")
  check_error(function() return torch.tensor(1):chunk(2) end, "chunk: expects a tensor with at least 1 dimension")
  check_error(function() return a:split(0, 2) end, "split: split size can only be 0 if the dimension size is 0, but dimension 2 has size 3")
  check_error(function() return a:split(-1) end, "split: split size must be non-negative, got -1")
  check_error(function() return a:split({1, 1}, 2) end, "split: split sizes add up to 2 but dimension 2 has size 3")
  check_error(function() return a:split({4, -1}, 2) end, "split: split sizes must be non-negative, got -1 at position 2")
  check_error(function() return a:split("x") end, "split: expected a size or a table of sizes")
  check_error(function() return a:tensor_split(0) end, "tensor_split: number of sections must be positive, got 0")
  check_error(function() return a:tensor_split({0}) end, "tensor_split: index 0 is invalid")
  check_error(function() return a:unbind(3) end, "unbind: dimension 3 out of range")
  check_close(a, {{1, 1, 1}, {1, 1, 1}})
end)

test("bad calls of cat, stack and friends", function()
  local a, v = torch.ones(2, 3), torch.ones(3)
  check_error(function() return torch.cat({}) end, "cat: expected a non-empty table of tensors")
  check_error(function() return torch.cat(a) end, "cat: expected a table of tensors as argument #1, got a tensor")
  check_error(function() return torch.cat({a, torch.ones(2, 4)}, 1) end,
              "cat: sizes must match except in dimension 1: tensor 1 has shape 2x3, tensor 2 has shape 2x4 (size 3 ~= 4 at dimension 2)")
  check_error(function() return torch.cat({a, v}) end,
              "cat: tensors must have the same number of dimensions: tensor 1 has shape 2x3, tensor 2 has shape 3")
  check_error(function() return torch.cat({a, 3}) end, "cat: expected a tensor at position 2 of the list, got number")
  check_error(function() return torch.cat({a, a}, 3) end, "cat: dimension 3 out of range (tensor has 2 dimensions)")
  check_error(function() return torch.cat({a, a}, 0) end, "cat: dimension 0 is invalid")
  check_error(function() return torch.cat({torch.tensor(1), torch.tensor(2)}) end,
              "cat: zero-dimensional tensor (at position 1) cannot be concatenated")
  check_error(function() return torch.cat({a, a}, "x") end, "cat: dim must be an integer, got string")
  check_error(function() return torch.stack({a, torch.ones(3, 2)}) end,
              "stack: expects each tensor to be equal size, but got 2x3 at position 1 and 3x2 at position 2")
  check_error(function() return torch.stack({}) end, "stack: expected a non-empty table of tensors")
  check_error(function() return torch.stack({a, a}, 4) end, "stack: dimension 4 out of range (the result has 3 dimensions")
  check_error(function() return torch.hstack({a, torch.ones(3, 3)}) end, "hstack: sizes must match except in dimension 2")
  check_error(function() return torch.vstack({a, torch.ones(4)}) end, "vstack: sizes must match except in dimension 1")
  check_error(function() return torch.dstack({}) end, "dstack: expected a non-empty table of tensors")
  check_error(function() return torch.meshgrid(a, v) end, "meshgrid: expected 0-D or 1-D tensors, got shape 2x3 at position 1")
  check_error(function() return torch.meshgrid(v, v:long()) end,
              "meshgrid: expected all tensors to have the same dtype, got float32 at position 1 and int64 at position 2")
  check_error(function() return torch.meshgrid(v, v, {indexing = "yx"}) end, "meshgrid: indexing must be 'ij' or 'xy', got 'yx'")
  check_error(function() return torch.atleast_2d(a, "x") end, "atleast_2d: expected a tensor as argument #2, got string")
  check_close(torch.cat({a, a}), torch.ones(4, 3))
end)

test("bad calls of flip, roll, rot90, tril, diag, repeat and tile", function()
  local a, v = torch.ones(2, 3), torch.ones(3)
  check_error(function() return a:flip(3) end, "flip: dimension 3 out of range")
  check_error(function() return a:flip(1, -2) end, "flip: dimension 1 appears more than once in dims")
  check_error(function() return a:flip() end, "flip: expected dims")
  check_error(function() return v:fliplr() end, "fliplr: expected a tensor with at least 2 dimensions, got 1")
  check_error(function() return torch.tensor(1):flipud() end, "flipud: expected a tensor with at least 1 dimension")
  check_error(function() return a:roll(1, 3) end, "roll: dimension 3 out of range")
  check_error(function() return a:roll({1, 2}, {1}) end, "roll: shifts and dims must have the same length, got 2 and 1")
  check_error(function() return a:roll({1, 2}) end, "roll: without dims, shifts must be a single number (got 2 values)")
  check_error(function() return a:roll() end, "roll: expected shifts")
  check_error(function() return a:roll(1.5) end, "roll: shifts must be an integer, got 1.5")
  check_error(function() return v:rot90() end, "rot90: expected a tensor with at least 2 dimensions, got shape 3")
  check_error(function() return a:rot90(1, {1, 1}) end, "rot90: the two rotation dimensions must differ, both are 1")
  check_error(function() return a:rot90(1, {1, 2, 3}) end, "rot90: dims must hold exactly 2 dimensions, got 3")
  check_error(function() return v:tril() end, "tril: expected a tensor with at least 2 dimensions, got shape 3")
  check_error(function() return v:triu_() end, "triu: expected a tensor with at least 2 dimensions")
  check_error(function() return a:tril("x") end, "tril: diagonal must be an integer, got string")
  check_error(function() return a:tril(0, {out = torch.empty(3, 2)}) end, "tril: out= has shape 3x2 but the result has shape 2x3")
  check_error(function() return torch.ones(2, 2, 2):diag() end, "diag: expected a 1-D or 2-D tensor, got shape 2x2x2")
  check_error(function() return torch.tensor(1):diag_embed() end, "diag_embed: dimension -2 out of range")
  check_error(function() return v:diag_embed(0, 1, 1) end, "diag_embed: dim1 and dim2 must differ, both are 1")
  check_error(function() return v:diagonal() end, "diagonal: expected a tensor with at least 2 dimensions, got 1")
  check_error(function() return a:diagonal(0, 1, 1) end, "diagonal: dimensions must differ, both are 1")
  check_error(function() return a["repeat"](a, 2) end,
              "repeat: the number of repeats (1) cannot be smaller than the number of dimensions (2)")
  check_error(function() return a["repeat"](a, 2, -1) end, "repeat: repeats must be non-negative, got -1 at position 2")
  check_error(function() return a:tile("x") end, "tile: sizes must be integers, got string")
  check_error(function() return a:tile(1, 1, 1, 1, 1, 1, 1, 1, 1) end, "tile: tensors have at most 8 dimensions")
  check_error(function() return a:flip(1, {out = a}) end, "flip: out= must not share memory with an input")
  check_close(a:flip(1), torch.ones(2, 3))
  check_close(v, {1, 1, 1})
end)

test("extreme integer arguments raise clear errors (no overflow)", function()
  local x, big, small = torch.ones(5), math.maxinteger, math.mininteger
  check_error(function() return x:split({3, big}) end, "split: split sizes add up to more than 5")
  check_error(function() return x:narrow(1, 2, big) end, "narrow: length 9223372036854775807 out of range")
  check_error(function() return x:narrow(1, small, 1) end, "narrow: start -9223372036854775808 out of range")
  check_error(function() return x:select(1, small) end, "select: index -9223372036854775808 is out of bounds")
  check_error(function() return x:diag(small) end, "diag: diagonal -9223372036854775808 is too large")
  check_error(function() return x:unflatten(1, {big, 4}) end, "unflatten: sizes 9223372036854775807x4 are too large")
  check_error(function() return x["repeat"](x, big, 2) end, "repeat: shape 9223372036854775807x10 is too large")
  check_eq(#x:chunk(big), 5)
  check_close(x:roll(small), x)
  check_close(torch.ones(2, 2):rot90(small), torch.ones(2, 2))
end)

test("every shape function has a help text", function()
  for _, name in ipairs({"reshape", "flatten", "ravel", "unflatten", "squeeze", "unsqueeze", "permute", "transpose",
                         "swapaxes", "swapdims", "t", "movedim", "moveaxis", "broadcast_to", "broadcast_tensors",
                         "tile", "narrow", "select", "split", "chunk", "tensor_split", "unbind", "cat", "concat",
                         "concatenate", "stack", "hstack", "vstack", "dstack", "flip", "fliplr", "flipud", "roll",
                         "rot90", "tril", "triu", "diag", "diagonal", "diag_embed", "atleast_1d", "atleast_2d",
                         "atleast_3d", "meshgrid"}) do
    check(type(torch[name]) == "function", "torch." .. name)
    check(#(torch._helptext(torch[name]) or "") > 10, "help of torch." .. name)
  end
  local x = torch.ones(2)
  for _, name in ipairs({"view", "view_as", "reshape_as", "expand", "expand_as", "repeat", "unfold", "tril_",
                         "triu_"}) do
    check(type(x[name]) == "function", "x:" .. name)
    check(#(torch._helptext(x[name]) or "") > 10, "help of x:" .. name)
  end
end)
