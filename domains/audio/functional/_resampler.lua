-- torch.audio.functional._resampler -- Resampler, resample as a stream:
-- r = Resampler(orig_freq, new_freq[, opts]) (resample's options), then
-- r:process(block) for each block [..., n] of a long signal (any sizes,
-- the same leading dims) and r:flush() at its end. Joined along time, the
-- pieces are resample(whole signal)'s samples, the first and the last
-- included. The sinc methods keep the input not yet used by a whole
-- output frame and run the filter (the engine op, without padding) over
-- it; soxr_hq keeps a libsoxr stream. flush ends the signal (the next
-- process starts a new one); reset drops it.
local torch = require "torch"
local C = require "torch.audio._resample"

return function(M, H)
  local Resampler = {}
  Resampler.__index = Resampler
  Resampler.__name = "torch.audio.functional.Resampler"

  -- Resampler(orig_freq, new_freq[, opts]); design_f32 (internal:
  -- transforms.Resample's) fixes the filter's design precision
  local function new(_, orig_freq, new_freq, opts, design_f32)
    local fname = "torch.audio.functional.Resampler"
    local self = setmetatable({}, Resampler)
    self.orig = H.check_freq(fname, "orig_freq", orig_freq)
    self.new = H.check_freq(fname, "new_freq", new_freq)
    self.opts = H.options(fname, opts)
    self.opts.design_f32 = design_f32
    self.width, self.ro, self.rn = C.width(self.orig, self.new, self.opts.lowpass_filter_width, self.opts.rolloff)
    self.ntaps = 2 * self.width + self.ro
    self:reset()
    return self
  end
  M.Resampler = setmetatable(Resampler, {__call = new})

  -- drops the signal in progress
  function Resampler:reset()
    if self.soxr then self.soxr:close() end
    self.buf, self.soxr, self.lead = nil, nil, nil
    self.frames, self.pos0, self.n_in, self.n_out = 0, 0, 0, 0
  end

  -- the block's leading dims (the first block's) and checks
  function Resampler:_check(x)
    local fname = "torch.audio.functional.Resampler:process"
    H.check_waveform(fname, x)
    local lead = {}
    for d = 1, x:dim() - 1 do lead[d] = x.shape[d] end
    if self.lead then
      local same = #lead == #self.lead
      for d = 1, #lead do same = same and lead[d] == self.lead[d] end
      if not same then
        error(("%s: a block of shape %s after blocks of leading dims %s"):format(fname,
          torch.pformat(x.shape), torch.pformat(self.lead)), 3)
      end
    end
    self.lead = lead
  end

  -- the filter's frames [self.frames, f_end) from the buffer (which starts
  -- at padded position self.pos0), out_len samples of them
  function Resampler:_frames(f_end, out_len)
    local d = self.buf:dim()
    local start = self.frames * self.ro - self.pos0
    local x = self.buf:narrow(d, start + 1, self.buf.shape[d] - start)
    local y = H.sinc(x, self.ro, self.rn, self.opts, 0, out_len)
    local keep = math.min(f_end * self.ro - self.pos0, self.buf.shape[d])
    self.buf = self.buf:narrow(d, keep + 1, self.buf.shape[d] - keep)
    self.frames, self.pos0 = f_end, f_end * self.ro
    return y
  end

  -- r:process(block [..., n]) -> the output samples now determined [..., m]
  function Resampler:process(x)
    self:_check(x)
    local d = x:dim()
    self.n_in = self.n_in + x.shape[d]
    if self.orig == self.new then return x end
    if self.opts.resampling_method == "soxr_hq" then return self:_soxr_process(x) end
    if not self.buf then
      local shape = {}
      for k = 1, d - 1 do shape[k] = x.shape[k] end
      shape[d] = self.width -- torchaudio's left padding
      self.buf = torch.zeros(shape, {dtype = x.dtype, device = x.device})
    end
    self.buf = torch.cat({self.buf, x}, d)
    local avail = self.pos0 + self.buf.shape[d]
    local f_end = avail >= self.ntaps and (avail - self.ntaps) // self.ro + 1 or 0
    if f_end < self.frames then f_end = self.frames end
    local y = self:_frames(f_end, (f_end - self.frames) * self.rn)
    self.n_out = self.n_out + y.shape[d]
    return y
  end

  -- r:flush() -> the last samples [..., m]; the stream is then ready for a new signal
  function Resampler:flush()
    if not self.lead then error("torch.audio.functional.Resampler:flush: no block was processed", 2) end
    local rest
    local target = H.out_length(self.rn, self.n_in, self.ro)
    if self.orig == self.new then
      local shape = {}
      for k = 1, #self.lead do shape[k] = self.lead[k] end
      shape[#shape + 1] = 0
      rest = torch.zeros(shape)
    elseif self.opts.resampling_method == "soxr_hq" then
      rest = self:_soxr_flush(target)
    else
      local n = target - self.n_out
      local f_end = self.frames + (n + self.rn - 1) // self.rn
      rest = self:_frames(f_end, n)
    end
    self:reset()
    return rest
  end

  function Resampler:_soxr_process(x)
    local rows, lead = H.soxr_rows("torch.audio.functional.Resampler:process", x)
    if not self.soxr then
      self.soxr = (require "torch.audio._soxr").stream(self.ro, self.rn, rows.shape[1],
        rows.dtype == torch.float64)
      self.like = x
    end
    local y = self.soxr:process(rows)
    self.n_out = self.n_out + y.shape[2]
    return H.soxr_back(y, lead, x)
  end

  function Resampler:_soxr_flush(target)
    local y = self.soxr:process()
    local n = target - self.n_out
    if y.shape[2] > n then y = y:narrow(2, 1, n):contiguous()
    elseif y.shape[2] < n then y = torch.cat({y, torch.zeros(y.shape[1], n - y.shape[2], {dtype = y.dtype})}, 2) end
    return H.soxr_back(y, self.lead, self.like)
  end

  function Resampler:__tostring()
    return ("Resampler(%d -> %d, %s)"):format(self.orig, self.new, self.opts.resampling_method)
  end
end
