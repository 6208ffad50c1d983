-- tests/tensor/test_stft.lua -- torch.stft and torch.istft
-- (lua_bindings/fft/_stft.lua) against PyTorch 1.13 (tests/ref/fft.lua, from
-- gen_fft.py): batched and single signals, windows shorter than n_fft,
-- center on and off, every pad mode, normalized, onesided both ways,
-- complex input, length=, and the gradients PyTorch's autograd gives; the
-- round trip istft(stft(x)) on real speech (espeak-ng), PyTorch 2.x's
-- return_complex rule, the NOLA error and the other argument errors;
-- gradcheck in float64.
local R = ref("fft")

local function weights(n)
  local t = {}
  for k = 0, n - 1 do t[k + 1] = math.cos(0.37 * k + 0.1) end
  return torch.tensor(t, {dtype = torch.float64})
end

local function rv(t) return t:is_complex() and torch.view_as_real(t) or t end

local function expected(t) return torch.tensor(t.values, {dtype = torch.float64}):view(t.shape) end

local function label(c)
  local parts = {}
  for k, v in pairs(c.opts) do parts[#parts + 1] = k .. "=" .. tostring(v) end
  table.sort(parts)
  return ("%s %s%s n_fft=%d window=%s {%s}"):format(c.fn, c.complex and "complex " or "", table.concat(c.x.shape, "x"),
    c.n_fft, c.window and c.window[1] .. "(" .. c.window[2] .. ")" or "none", table.concat(parts, " "))
end

for _, c in ipairs(R.stft) do
  test("torch." .. label(c) .. " matches PyTorch (values and gradient)", function()
    local leaf = torch.tensor(c.x.values, {dtype = torch.float64}):view(c.x.shape):requires_grad_()
    local x = c.complex and torch.view_as_complex(leaf) or leaf
    local opts = {}
    for k, v in pairs(c.opts) do opts[k] = v end
    if c.window then opts.window = torch[c.window[1]](c.window[2], {dtype = torch.float64}) end
    if c.fn == "stft" then opts.return_complex = true end
    local out = torch[c.fn](x, c.n_fft, opts)
    local r = rv(out)
    check_shape(r, c.out.shape)
    check_close(r, expected(c.out), {rtol = 1e-8, atol = 1e-9});
    (r * weights(r:numel()):view(r.shape)):sum():backward()
    check_close(leaf.grad, expected(c.grad), {rtol = 1e-8, atol = 1e-9})
  end)
end

test("stft of float32 signals matches the float64 result to float32 precision", function()
  torch.manual_seed(3)
  local x = torch.randn(3, 2000, {dtype = torch.float64})
  local w = torch.hann_window(512, {dtype = torch.float64})
  local a = torch.view_as_real(torch.stft(x, 512, {hop_length = 128, window = w, return_complex = true}))
  local b = torch.view_as_real(torch.stft(x:float(), 512, {hop_length = 128, window = w:float(), return_complex = true}))
  check(b.dtype == torch.float32)
  check_close(b:double(), a, {rtol = 1e-4, atol = 1e-3})
end)

test("return_complex=false gives the real view [..., freq, frames, 2]", function()
  local x = torch.randn(1000)
  local a = torch.stft(x, 256, {return_complex = false, window = torch.hann_window(256)})
  local b = torch.view_as_real(torch.stft(x, 256, {return_complex = true, window = torch.hann_window(256)}))
  check_shape(a, {129, 16, 2})
  check_close(a, b, {rtol = 0, atol = 0})
end)

-- speech from espeak-ng, read through a raw 16-bit file (no dependency on torch.audio.load)
local function speech()
  local dir = os.tmpname()
  os.remove(dir)
  os.execute("mkdir -p " .. dir)
  local wav = dir .. "/s.wav"
  local ok = os.execute(("espeak-ng -w %s 'the quick brown fox jumps over the lazy dog' >/dev/null 2>&1"):format(wav))
  local f = ok and io.open(wav, "rb")
  if not f then return nil end
  local bytes = f:read("a")
  f:close()
  os.execute("rm -rf " .. dir)
  local data = bytes:find("data", 1, true)
  local n = (#bytes - data - 7) // 2
  local t = {}
  for i = 1, n do t[i] = string.unpack("<i2", bytes, data + 8 + 2 * (i - 1)) / 32768 end
  return torch.tensor(t)
end

test("istft(stft(x)) gives back real speech (espeak-ng), with length= and without", function()
  local x = speech()
  check(x ~= nil and x:numel() > 10000, "espeak-ng speech")
  local w = torch.hann_window(400)
  local s = torch.stft(x, 400, {hop_length = 160, window = w, return_complex = true})
  check_shape(s, {201, 1 + x:numel() // 160})
  local y = torch.istft(s, 400, {hop_length = 160, window = w, length = x:numel()})
  check_shape(y, {x:numel()})
  check_close(y, x, {rtol = 1e-4, atol = 1e-5})
  local e = (torch.view_as_real(s) ^ 2):sum() / 1e3
  check(e:item() > 1, "speech has energy")
end)

test("stft and istft are differentiable: float64 gradcheck", function()
  torch.manual_seed(5)
  local w = torch.hann_window(16, {dtype = torch.float64})
  check(torch.autograd.gradcheck(function(x)
    return torch.view_as_real(torch.stft(x, 16, {hop_length = 4, window = w, return_complex = true}))
  end, {torch.randn(2, 40, {dtype = torch.float64}):requires_grad_()}))
  check(torch.autograd.gradcheck(function(xr)
    return torch.istft(torch.view_as_complex(xr), 16, {hop_length = 4, window = w, length = 40})
  end, {torch.randn(9, 11, 2, {dtype = torch.float64}):requires_grad_()}))
end)

test("bad arguments are errors naming the call and the values", function()
  local x = torch.randn(100)
  check_error(function() torch.stft(x, 32) end, "torch.stft: requires the return_complex parameter")
  check_error(function() torch.stft(torch.randn(2, 3, 100), 32, {return_complex = true}) end, "expected a 1D or 2D tensor")
  check_error(function() torch.stft(x, 32, {hop_length = 0, return_complex = true}) end, "hop_length > 0")
  check_error(function() torch.stft(x, 32, {win_length = 40, return_complex = true}) end, "0 < win_length <= n_fft")
  check_error(function() torch.stft(x, 32, {window = torch.ones(31), return_complex = true}) end, "equal to win_length=32")
  check_error(function() torch.stft(x, 300, {center = false, return_complex = true}) end, "expected 0 < n_fft <= 100")
  check_error(function() torch.stft(x, 32, {bogus = 1}) end, "unknown option 'bogus'")
  local s = torch.stft(x, 32, {window = torch.hann_window(32), return_complex = true})
  check_error(function() torch.istft(torch.view_as_real(s), 32) end, "requires a complex-valued input")
  check_error(function() torch.istft(s, 30) end, "n_fft / 2 + 1 (16)")
  check_error(function() torch.istft(s, 32, {window = torch.hann_window(32), center = false}) end,
    "window overlap add min")
  check_close(torch.istft(s, 32, {window = torch.hann_window(32), length = 100}), x, {atol = 1e-5}) -- the session goes on
end)
