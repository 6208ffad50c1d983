-- torch.utils.tensorboard.proto -- a minimal protocol-buffer encoder: each
-- function returns the bytes of one field (key + payload) as a Lua string,
-- and a message is the concatenation of its fields. Proto3 rules: callers
-- leave out fields that hold their default value.
local P = {}

local char, pack = string.char, string.pack

-- The base-128 varint of integer n (negative numbers as their 64-bit two's
-- complement, ten bytes, as protobuf does for int64).
function P.varint_bytes(n)
  local out, k = {}, 0
  repeat
    local b = n & 0x7f
    n = n >> 7 -- logical shift: terminates for negative n too
    k = k + 1
    out[k] = n ~= 0 and (b | 0x80) or b
  until n == 0
  return char(table.unpack(out, 1, k))
end
local varint = P.varint_bytes

local function key(field, wire) return varint(field << 3 | wire) end

-- wire type 0: int32/int64/uint/bool/enum
function P.varint(field, n) return key(field, 0) .. varint(n) end
function P.bool(field, b) return key(field, 0) .. (b and "\1" or "\0") end
-- wire type 1: double (fixed64)
function P.double(field, x) return key(field, 1) .. pack("<d", x) end
-- wire type 5: float (fixed32)
function P.float(field, x) return key(field, 5) .. pack("<f", x) end
-- wire type 2: string, bytes and embedded messages
function P.bytes(field, s) return key(field, 2) .. varint(#s) .. s end
P.string, P.message = P.bytes, P.bytes

-- A packed repeated double field holding the numbers of list xs.
function P.packed_doubles(field, xs)
  local parts, n = {}, #xs
  for i = 1, n, 256 do -- string.pack takes a bounded number of arguments
    local j = math.min(i + 255, n)
    parts[#parts + 1] = pack("<" .. ("d"):rep(j - i + 1), table.unpack(xs, i, j))
  end
  return P.bytes(field, table.concat(parts))
end

return P
