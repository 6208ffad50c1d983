-- torch.audio.functional._edit_distance -- edit_distance: the Levenshtein
-- distance between two sequences (strings compare characters, lists
-- compare elements with ==), as torchaudio computes it for word or
-- character error rates. Plain Lua on the host: no tensors involved.
local torch = require "torch"
local U = require "torch.nn.util"

local F = {}
local P = "torch.audio.functional."

-- items(fname, what, s) -> a Lua list of s's elements: a string's
-- characters (bytes), a list's values or a 1-d tensor's numbers
local function items(fname, what, s)
  if type(s) == "string" then
    local t = {}
    for i = 1, #s do t[i] = s:sub(i, i) end
    return t
  end
  if torch.is_tensor(s) then
    if s:dim() ~= 1 then
      error(("%s: %s must be a 1-d tensor, got shape %s"):format(fname, what, U.shape_str(s)), 3)
    end
    return s:tolist()
  end
  if type(s) ~= "table" then
    error(("%s: %s must be a string, a list or a 1-d tensor, got %s"):format(fname, what, type(s)), 3)
  end
  return s
end

-- edit_distance(seq1, seq2) -> integer: the fewest insertions, deletions
-- and substitutions that turn seq1 into seq2
function F.edit_distance(seq1, seq2)
  local fname = P .. "edit_distance"
  local a, b = items(fname, "seq1", seq1), items(fname, "seq2", seq2)
  local prev, cur = {}, {}
  for j = 0, #b do prev[j] = j end
  for i = 1, #a do
    cur[0] = i
    for j = 1, #b do
      if a[i] == b[j] then cur[j] = prev[j - 1]
      else cur[j] = math.min(prev[j - 1], cur[j - 1], prev[j]) + 1 end
    end
    prev, cur = cur, prev
  end
  return prev[#b]
end

return U.public_table(F, P)
