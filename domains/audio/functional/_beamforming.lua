-- torch.audio.functional._beamforming -- torchaudio's multi-channel
-- beamforming: psd, mvdr_weights_souden, mvdr_weights_rtf, rtf_evd,
-- rtf_power, apply_beamforming, on complex tensors. The engine has no
-- complex matmul, solve or eigh: products of the small channel matrices
-- are broadcast multiplies and sums, and solve / eigh run on the real
-- 2C x 2C form [[Re, -Im], [Im, Re]] of the complex matrix.
-- reference_channel is a 1-based channel index or a weight tensor [..., C].
local torch = require "torch"
local U = require "torch.nn.util"

local F = {}
local P = "torch.audio.functional."

local function check_complex(fname, what, x, min_dim, dims)
  if not torch.is_tensor(x) or not x:is_complex() or x:dim() < min_dim then
    error(("%s: %s must be a complex tensor %s, got %s"):format(fname, what, dims,
      torch.is_tensor(x) and tostring(x.dtype) .. " " .. U.shape_str(x) or type(x)), 3)
  end
end

-- has_shape(t, sizes): t's sizes are the list sizes
local function has_shape(t, sizes)
  if t:dim() ~= #sizes then return false end
  for i = 1, #sizes do if t:size(i) ~= sizes[i] then return false end end
  return true
end
local function same_shape(a, b) return has_shape(a, b:size()) end

-- cmatmul(a [..., m, k], b [..., k, n]) -> [..., m, n] (complex)
local function cmatmul(a, b) return (a:unsqueeze(-1) * b:unsqueeze(-3)):sum(-2) end

local function trace(m) return m:diagonal(0, -2, -1):sum(-1) end

-- real_form(a [..., n, n] complex) -> [..., 2n, 2n] real
local function real_form(a)
  local re, im = a.real, a.imag
  return torch.cat({torch.cat({re, -im}, -1), torch.cat({im, re}, -1)}, -2)
end

-- csolve(a [..., n, n], b [..., n, k]) -> x with a x = b (complex)
local function csolve(a, b)
  local n = a:size(-1)
  local x = torch.linalg.solve(real_form(a), torch.cat({b.real, b.imag}, -2))
  return torch.complex(x:narrow(-2, 1, n):contiguous(), x:narrow(-2, n + 1, n):contiguous())
end

-- loaded(m, reg, eps) -> m + (reg trace(m).real + eps) I (torchaudio's
-- diagonal loading)
local function loaded(m, reg, eps)
  local C = m:size(-1)
  local e = trace(m).real * reg + eps
  local eye = torch.eye(C, {dtype = e.dtype, device = e.device})
  return torch.complex(m.real + e:unsqueeze(-1):unsqueeze(-1) * eye, m.imag:contiguous())
end

-- pick(fname, m [..., C1, C2], ref) -> [..., C1]: column ref of m (1-based)
-- or m times the weights ref [..., C2]
local function pick(fname, m, ref, lead)
  if math.type(ref) == "integer" then
    if ref < 1 or ref > m:size(-1) then
      error(("%s: reference_channel %d is out of range 1..%d"):format(fname, ref, m:size(-1)), 3)
    end
    return m:select(-1, ref)
  end
  if not torch.is_tensor(ref) then
    error(("%s: reference_channel must be a 1-based channel index or a tensor [..., channel], got %s"):format(fname,
      type(ref)), 3)
  end
  local r = ref:to(m.dtype)
  for _ = 1, lead do r = r:unsqueeze(-2) end
  return (m * r):sum(-1)
end

local function check_pair(fname, psd_s, psd_n)
  check_complex(fname, "psd_s", psd_s, 3, "[..., freq, channel, channel]")
  check_complex(fname, "psd_n", psd_n, 3, "[..., freq, channel, channel]")
  if not same_shape(psd_s, psd_n) or psd_s:size(-1) ~= psd_s:size(-2) then
    error(("%s: psd_s and psd_n must have one shape [..., freq, channel, channel], got %s and %s"):format(fname,
      U.shape_str(psd_s), U.shape_str(psd_n)), 3)
  end
end

-- psd(specgram[, mask=false, normalize=true, eps=1e-10]) -> [..., freq,
-- channel, channel]: the sum over time of the outer products of the
-- channel vectors of specgram [..., channel, freq, time] (complex),
-- weighted by mask [..., freq, time] (normalized over time) when given
function F.psd(specgram, ...)
  local fname = P .. "psd"
  check_complex(fname, "specgram", specgram, 3, "[..., channel, freq, time]")
  local o = U.args(fname, {"mask", "normalize", "eps"}, {mask = false, normalize = true, eps = 1e-10}, ...)
  local s = specgram:transpose(-3, -2) -- [..., F, C, T]
  local outer = s:unsqueeze(-2) * s:conj():unsqueeze(-3) -- [..., F, C, C, T]
  if o.mask then
    local mask = o.mask
    local want = specgram:size()
    table.remove(want, #want - 2)
    if not torch.is_tensor(mask) or not has_shape(mask, want) then
      error(("%s: mask must be [..., freq, time] = %s, got %s"):format(fname, U.shape_str(want),
        torch.is_tensor(mask) and U.shape_str(mask) or type(mask)), 2)
    end
    if o.normalize then mask = mask / (mask:sum(-1, true) + o.eps) end
    outer = outer * mask:unsqueeze(-2):unsqueeze(-2)
  end
  return outer:sum(-1)
end

-- mvdr_weights_souden(psd_s, psd_n, reference_channel[, diagonal_loading=true,
-- diag_eps=1e-7, eps=1e-8]) -> [..., freq, channel]: Souden's MVDR weights,
-- (psd_n^-1 psd_s / trace) at the reference channel
function F.mvdr_weights_souden(psd_s, psd_n, reference_channel, ...)
  local fname = P .. "mvdr_weights_souden"
  check_pair(fname, psd_s, psd_n)
  local o = U.args(fname, {"diagonal_loading", "diag_eps", "eps"},
    {diagonal_loading = true, diag_eps = 1e-7, eps = 1e-8}, ...)
  if o.diagonal_loading then psd_n = loaded(psd_n, o.diag_eps, 1e-8) end
  local num = csolve(psd_n, psd_s)
  local ws = num / (trace(num):unsqueeze(-1):unsqueeze(-1) + o.eps)
  return pick(fname, ws, reference_channel, 2)
end

-- mvdr_weights_rtf(rtf, psd_n[, reference_channel=false, diagonal_loading=true,
-- diag_eps=1e-7, eps=1e-8]) -> [..., freq, channel]: psd_n^-1 rtf / (rtf^H
-- psd_n^-1 rtf), scaled by the reference channel's conj(rtf) when given
function F.mvdr_weights_rtf(rtf, psd_n, ...)
  local fname = P .. "mvdr_weights_rtf"
  check_complex(fname, "rtf", rtf, 2, "[..., freq, channel]")
  check_complex(fname, "psd_n", psd_n, 3, "[..., freq, channel, channel]")
  local rows = psd_n:size()
  table.remove(rows)
  if not has_shape(rtf, rows) or psd_n:size(-1) ~= psd_n:size(-2) then
    error(("%s: rtf [..., freq, channel] and psd_n [..., freq, channel, channel] do not match: %s and %s"):format(
      fname, U.shape_str(rtf), U.shape_str(psd_n)), 2)
  end
  local o = U.args(fname, {"reference_channel", "diagonal_loading", "diag_eps", "eps"},
    {reference_channel = false, diagonal_loading = true, diag_eps = 1e-7, eps = 1e-8}, ...)
  if o.diagonal_loading then psd_n = loaded(psd_n, o.diag_eps, 1e-8) end
  local num = csolve(psd_n, rtf:unsqueeze(-1)):squeeze(-1)
  local den = (rtf:conj() * num):sum(-1)
  local w = num / (den.real:unsqueeze(-1) + o.eps)
  if o.reference_channel then
    local scale = pick(fname, rtf:conj(), o.reference_channel, 1)
    w = w * scale:unsqueeze(-1)
  end
  return w
end

-- rtf_evd(psd_s) -> [..., freq, channel]: the unit eigenvector of each
-- Hermitian psd_s [..., freq, channel, channel] with the largest eigenvalue
-- (defined up to a unit complex factor; the phase may differ from
-- torchaudio's LAPACK)
function F.rtf_evd(psd_s)
  local fname = P .. "rtf_evd"
  check_complex(fname, "psd_s", psd_s, 2, "[..., channel, channel]")
  if psd_s:size(-1) ~= psd_s:size(-2) then
    error(("%s: psd_s must be square in its last two dims, got %s"):format(fname, U.shape_str(psd_s)), 2)
  end
  local C = psd_s:size(-1)
  -- the real form's eigenvalues are psd_s's, each twice; its top
  -- eigenvector [re; im] is a top eigenvector of psd_s
  local _, v = torch.linalg.eigh(real_form(psd_s))
  local top = v:select(-1, 2 * C)
  return torch.complex(top:narrow(-1, 1, C):contiguous(), top:narrow(-1, C + 1, C):contiguous())
end

-- rtf_power(psd_s, psd_n, reference_channel[, n_iter=3, diagonal_loading=true,
-- diag_eps=1e-7]) -> [..., freq, channel]: the relative transfer function by
-- n_iter power iterations of psd_n^-1 psd_s from the reference channel
function F.rtf_power(psd_s, psd_n, reference_channel, ...)
  local fname = P .. "rtf_power"
  check_pair(fname, psd_s, psd_n)
  local o = U.args(fname, {"n_iter", "diagonal_loading", "diag_eps"},
    {n_iter = 3, diagonal_loading = true, diag_eps = 1e-7}, ...)
  U.size(fname, "n_iter", o.n_iter, 1)
  if o.diagonal_loading then psd_n = loaded(psd_n, o.diag_eps, 1e-8) end
  local phi = csolve(psd_n, psd_s)
  local rtf = pick(fname, phi, reference_channel, 2):unsqueeze(-1)
  if o.n_iter >= 2 then
    for _ = 1, o.n_iter - 2 do rtf = cmatmul(phi, rtf) end
    rtf = cmatmul(psd_s, rtf)
  else
    rtf = cmatmul(psd_n, rtf)
  end
  return rtf:squeeze(-1)
end

-- apply_beamforming(beamform_weights [..., freq, channel], specgram [...,
-- channel, freq, time]) -> [..., freq, time]: sum over channels of
-- conj(weight) times the spectrum
function F.apply_beamforming(w, specgram)
  local fname = P .. "apply_beamforming"
  check_complex(fname, "beamform_weights", w, 2, "[..., freq, channel]")
  check_complex(fname, "specgram", specgram, 3, "[..., channel, freq, time]")
  local ok = w:dim() == specgram:dim() - 1 and w:size(-1) == specgram:size(-3) and w:size(-2) == specgram:size(-2)
  for i = 1, w:dim() - 2 do ok = ok and w:size(i) == specgram:size(i) end
  if not ok then
    error(("%s: beamform_weights %s [..., freq, channel] does not fit specgram %s [..., channel, freq, time]")
      :format(fname, U.shape_str(w), U.shape_str(specgram)), 2)
  end
  return (w:conj():transpose(-1, -2):unsqueeze(-1) * specgram):sum(-3)
end

return U.public_table(F, P)
