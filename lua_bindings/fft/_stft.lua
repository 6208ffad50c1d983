-- torch.fft._stft -- torch.stft and torch.istft with PyTorch 2.x's
-- semantics: frames are a strided view of the (padded) signal, windowed
-- once and transformed by one batched r2c (c2c for complex data); istft
-- inverts each frame, windows it, overlap-adds (K shifted adds) and divides by
-- the window's squared overlap-add (refusing where it vanishes: NOLA).
local torch = require "torch"
local fft = require "torch.fft"
local C = torch._fft
local F = torch.nn.functional
local M = {}

local STFT = {"hop_length", "win_length", "window", "center", "pad_mode", "normalized", "onesided", "return_complex"}
local ISTFT = {"hop_length", "win_length", "window", "center", "normalized", "onesided", "length", "return_complex"}

local function fail(fname, fmt, ...) error(("torch.%s: " .. fmt):format(fname, ...), 3) end

local function posint(fname, name, v)
  if math.type(v) ~= "integer" and not (type(v) == "number" and v == math.floor(v)) then
    fail(fname, "%s must be an integer, got %s", name, tostring(v))
  end
  return math.tointeger(v)
end

-- hop, win_length and the window zero-padded (centered) to n_fft, of x's
-- dtype and device; checks PyTorch's conditions.
local function frame_setup(fname, n_fft, o, dtype, device)
  n_fft = posint(fname, "n_fft", n_fft)
  local hop = posint(fname, "hop_length", o.hop_length or n_fft // 4)
  local win = posint(fname, "win_length", o.win_length or n_fft)
  if n_fft <= 0 then fail(fname, "expected 0 < n_fft, but got n_fft=%d", n_fft) end
  if hop <= 0 then fail(fname, "expected hop_length > 0, but got hop_length=%d", hop) end
  if win <= 0 or win > n_fft then fail(fname, "expected 0 < win_length <= n_fft, but got win_length=%d", win) end
  local w = o.window
  if w == nil or w == false then
    w = torch.ones(win, {dtype = dtype, device = device})
  else
    if not torch.is_tensor(w) then fail(fname, "window must be a tensor, got %s", type(w)) end
    if w:dim() ~= 1 or w:size(1) ~= win then
      fail(fname, "expected a 1D window tensor of size equal to win_length=%d, but got window with size [%s]", win,
        table.concat(w.shape, ", "))
    end
    if fft._is_complex(w) then fail(fname, "complex windows are not supported") end
    w = w:to(dtype)
  end
  if win < n_fft then
    local left = (n_fft - win) // 2
    w = F.pad(w, {left, n_fft - win - left})
  end
  return n_fft, hop, w
end

-- x [B, T] (real) or [B, T, 2] (a complex signal's real view) padded by p
-- on both sides of T with mode
local function pad_signal(x, p, mode, cplx)
  if mode == "reflect" and not cplx and p > 0 and p < x:size(2) then
    -- two flipped slices and a cat: one pass, where F.pad's general path is slower
    local n = x:size(2)
    return torch.cat({x:narrow(2, 2, p):flip(2), x, x:narrow(2, n - p, p):flip(2)}, 2)
  end
  if cplx then
    local y = F.pad(x:transpose(2, 3), {p, p}, mode)
    return y:transpose(2, 3)
  end
  return F.pad(x:unsqueeze(2), {p, p}, mode):squeeze(2)
end

function M.stft(x, n_fft, ...)
  local o = fft._options("stft", STFT, ...)
  if not torch.is_tensor(x) then fail("stft", "expected a tensor, got %s", type(x)) end
  x = fft._floating(x)
  local cplx = fft._is_complex(x)
  if x:dim() ~= 1 and x:dim() ~= 2 then fail("stft", "expected a 1D or 2D tensor, got %d-d", x:dim()) end
  local rc = o.return_complex
  if rc == nil then
    if not cplx then
      fail("stft", "requires the return_complex parameter be given for real inputs (return_complex=true gives " ..
        "a complex tensor; PyTorch 2.x requires it too)")
    end
    rc = true
  end
  local batched = x:dim() == 2
  local xr = cplx and torch.view_as_real(x) or x
  if not batched then xr = xr:unsqueeze(1) end
  local hop, w
  n_fft, hop, w = frame_setup("stft", n_fft, o, xr.dtype, xr.device)
  if o.center ~= false then
    local mode = o.pad_mode or "reflect"
    xr = pad_signal(xr, n_fft // 2, mode, cplx)
  end
  local len = xr:size(2)
  if n_fft > len then fail("stft", "expected 0 < n_fft <= %d, but got n_fft=%d", len, n_fft) end
  local onesided = o.onesided
  if onesided == nil then onesided = not cplx end
  if onesided and cplx then fail("stft", "cannot have onesided output if window or input is complex") end
  local code = o.normalized and 1 or 0
  local spec
  if cplx then
    local frames = xr:unfold(2, n_fft, hop):transpose(3, 4) * w:view(n_fft, 1)  -- [B, F, n_fft, 2]
    spec = C.fft_c2c(frames, 4, true, code)
  else
    local frames = xr:unfold(2, n_fft, hop) * w  -- [B, F, n_fft]
    if onesided then spec = C.fft_r2c(frames, 4, code)
    else spec = C.fft_c2c(torch.stack({frames, torch.zeros_like(frames)}, -1), 4, true, code) end
  end
  spec = spec:transpose(2, 3)  -- [B, freq, frames, 2]
  if not batched then spec = spec:squeeze(1) end
  return rc and torch.view_as_complex(spec) or spec
end

-- Overlap-add of frames [B, nf, n] (hop apart) into [B, L]: each frame
-- cut in K = ceil(n / hop) pieces of at most hop samples; piece k of frame
-- f lands on hop block f + k, so the sum is K in-place adds of strided
-- views into one zeroed [B, nf + K - 1, hop] (no padded copies; F.fold's
-- general path is several times slower). Autograd sees the adds as writes
-- into views (CopySlices).
local function overlap_add(frames, n, hop, L)
  local B, nf = frames:size(1), frames:size(2)
  local K = (n + hop - 1) // hop
  local y = torch.zeros(B, nf + K - 1, hop, {dtype = frames.dtype, device = frames.device})
  for k = 0, K - 1 do
    local len = math.min(hop, n - k * hop)
    y:narrow(2, k + 1, nf):narrow(3, 1, len):add_(frames:narrow(3, k * hop + 1, len))
  end
  return y:view(B, (nf + K - 1) * hop):narrow(2, 1, L)
end
M._overlap_add = overlap_add -- torch.audio's istft-like ops share it

function M.istft(x, n_fft, ...)
  local o = fft._options("istft", ISTFT, ...)
  if not torch.is_tensor(x) then fail("istft", "expected a tensor, got %s", type(x)) end
  if not fft._is_complex(x) then fail("istft", "requires a complex-valued input tensor") end
  if x:dim() ~= 2 and x:dim() ~= 3 then
    fail("istft", "expected a tensor with 2 or 3 dimensions of complex dtype, got %d-d", x:dim())
  end
  local batched = x:dim() == 3
  local xr = torch.view_as_real(x)
  if not batched then xr = xr:unsqueeze(1) end
  local hop, w
  n_fft, hop, w = frame_setup("istft", n_fft, o, xr.dtype, xr.device)
  local nfreq, nf = xr:size(2), xr:size(3)
  local onesided = o.onesided
  if onesided == nil then onesided = nfreq ~= n_fft end
  if onesided and nfreq ~= n_fft // 2 + 1 then
    fail("istft", "expected the frequency dimension (%d) of the input to equal n_fft / 2 + 1 (%d) when onesided=true",
      nfreq, n_fft // 2 + 1)
  elseif not onesided and nfreq ~= n_fft then
    fail("istft", "expected the frequency dimension (%d) of the input to equal n_fft (%d) when onesided=false", nfreq, n_fft)
  end
  local code = o.normalized and 1 or 2
  local spec = xr:transpose(2, 3)  -- [B, frames, freq, 2]
  local L = n_fft + hop * (nf - 1)
  local y
  if o.return_complex then
    if onesided then fail("istft", "cannot have onesided output if window or input is complex") end
    local frames = C.fft_c2c(spec, 4, false, code) * w:view(n_fft, 1)  -- [B, F, n_fft, 2]
    local B = frames:size(1)
    local parts = frames:permute(1, 4, 2, 3):reshape(2 * B, nf, n_fft)  -- re and im as signals
    y = overlap_add(parts, n_fft, hop, L):view(B, 2, L):transpose(2, 3)  -- [B, L, 2]
  else
    if not onesided then spec = spec:narrow(3, 1, n_fft // 2 + 1) end
    local frames = C.fft_c2r(spec, 4, n_fft, code) * w  -- [B, F, n_fft]
    y = overlap_add(frames, n_fft, hop, L)
  end
  local env = overlap_add((w * w):view(1, 1, n_fft):expand(1, nf, n_fft), n_fft, hop, L):view(L)
  local start = o.center ~= false and n_fft // 2 or 0
  local stop
  if o.length ~= nil and o.length ~= false then
    stop = start + posint("istft", "length", o.length)
  elseif o.center ~= false then stop = L - n_fft // 2
  else stop = L end
  local keep = math.max(0, math.min(stop, L) - start)
  y, env = y:narrow(2, start + 1, keep), env:narrow(1, start + 1, keep)
  if keep > 0 and env:abs():min():item() < 1e-11 then
    fail("istft", "window overlap add min: %g < 1e-11 (the window's squared overlap-add vanishes somewhere: the " ..
      "NOLA condition fails for this window and hop_length)", env:abs():min():item())
  end
  if o.return_complex then y = y / env:view(keep, 1) else y = y / env end
  if stop > L then
    local pad = o.return_complex and {0, 0, 0, stop - L} or {0, stop - L}
    y = F.pad(y, pad)
  end
  if not batched then y = y:squeeze(1) end
  return o.return_complex and torch.view_as_complex(y:contiguous()) or y
end

return M
