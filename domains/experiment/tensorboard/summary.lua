-- torch.utils.tensorboard.summary -- builds the protobuf bytes TensorBoard
-- reads: Event and Summary messages for scalars, histograms, images, text
-- and hparams, as PyTorch's torch.utils.tensorboard writes them.
--
-- Field numbers (TensorBoard's event.proto, summary.proto, tensor.proto,
-- tensor_shape.proto, plugins/hparams/{api,plugin_data}.proto and
-- google/protobuf/struct.proto):
--   Event: wall_time 1 (double), step 2 (int64), file_version 3, summary 5
--   Summary: value 1 (repeated Value)
--   Summary.Value: tag 1, simple_value 2 (float), image 4, histo 5,
--     tensor 8, metadata 9
--   Summary.Image: height 1, width 2, colorspace 3, encoded_image_string 4
--   HistogramProto: min 1, max 2, num 3, sum 4, sum_squares 5 (doubles),
--     bucket_limit 6, bucket 7 (packed doubles)
--   SummaryMetadata: plugin_data 1; PluginData: plugin_name 1, content 2
--   TensorProto: dtype 1 (DT_STRING = 7), tensor_shape 2, string_val 8
--   TensorShapeProto: dim 2; Dim: size 1
--   HParamsPluginData: version 1, experiment 2, session_start_info 3,
--     session_end_info 4
--   Experiment: hparam_infos 4, metric_infos 5
--   HParamInfo: name 1, type 4 (STRING 1, BOOL 2, FLOAT64 3),
--     domain_discrete 5 (ListValue: values 1)
--   MetricInfo: name 1 (MetricName: group 1, tag 2)
--   SessionStartInfo: hparams 1 (map<string, Value>: key 1, value 2)
--   SessionEndInfo: status 1 (STATUS_SUCCESS = 1)
--   google.protobuf.Value: number_value 2, string_value 3, bool_value 4
local torch = require "torch"
local P = require "torch.utils.tensorboard.proto"
local C = require "torch.utils.tensorboard._summary"

local S = {}

-- Event bytes: a summary (bytes of a Summary) at step, or the file header
-- when summary is nil.
function S.event(wall_time, step, summary)
  local parts = {P.double(1, wall_time)}
  if step and step ~= 0 then parts[#parts + 1] = P.varint(2, step) end
  parts[#parts + 1] = summary and P.message(5, summary) or P.string(3, "brain.Event:2")
  return table.concat(parts)
end

local function summary_of(value) return P.message(1, value) end

local function plugin_metadata(name, content)
  local pd = P.string(1, name) .. (content ~= "" and P.bytes(2, content) or "")
  return P.message(1, pd)
end

-- fn's name in messages, e.g. "add_scalar"
local function check_tag(fn, tag)
  if type(tag) ~= "string" then
    error(("%s: tag must be a string, got %s"):format(fn, type(tag)), 3)
  end
end

-- A Lua number from a number or a one-element tensor.
function S.number(fn, what, v)
  if type(v) == "number" then return v end
  if torch.is_tensor(v) then
    if v:numel() ~= 1 then
      error(("%s: %s must be a number or a one-element tensor, got a tensor of %d elements"):format(fn, what, v:numel()), 3)
    end
    return v:item() + 0.0
  end
  error(("%s: %s must be a number, got %s"):format(fn, what, type(v)), 3)
end

function S.scalar(tag, value)
  check_tag("add_scalar", tag)
  return summary_of(P.string(1, tag) .. P.float(2, value))
end

-- TensorFlow's default buckets: +-1e-12 * 1.1^k up to 1e20, and 0.
local tf_edges
local function tensorflow_edges()
  if tf_edges then return tf_edges end
  local pos, v = {}, 1e-12
  while v < 1e20 do
    pos[#pos + 1] = v
    v = v * 1.1
  end
  local e = {}
  for i = #pos, 1, -1 do e[#e + 1] = -pos[i] end
  e[#e + 1] = 0
  for i = 1, #pos do e[#e + 1] = pos[i] end
  tf_edges = e
  return e
end

-- Histogram statistics of values (tensor or list of numbers) over bins
-- ("tensorflow", a bucket count or a list of edges). Empty buckets beyond
-- the first and last used ones are dropped, keeping one empty bucket in
-- front; bucket_limit holds each bucket's right edge.
function S.histogram_stats(values, bins)
  if type(values) == "table" then values = torch.tensor(values, {dtype = torch.float64}) end
  if not torch.is_tensor(values) then
    error(("add_histogram: values must be a tensor or a list of numbers, got %s"):format(type(values)), 3)
  end
  if bins == nil or bins == "tensorflow" then bins = tensorflow_edges() end
  if type(bins) ~= "number" and type(bins) ~= "table" then
    error(("add_histogram: bins must be 'tensorflow', a number of buckets or a list of edges, got %s"):format(
      tostring(bins)), 3)
  end
  if values.is_cuda then values = values:cpu() end -- the statistics are made on the host, as the file needs them
  local h = C.histogram(values, bins)
  local counts, edges = h.counts, h.edges
  local first, last
  for i = 1, #counts do
    if counts[i] > 0 then
      first = first or i
      last = i
    end
  end
  local limit, bucket = {}, {}
  if first then
    limit[1], bucket[1] = edges[first], 0 -- the empty bucket left of the first used one
    for i = first, last do
      limit[#limit + 1] = edges[i + 1]
      bucket[#bucket + 1] = counts[i] + 0.0
    end
  end
  h.bucket_limit, h.bucket = limit, bucket
  return h
end

function S.histogram(tag, values, bins)
  check_tag("add_histogram", tag)
  local h = S.histogram_stats(values, bins)
  local histo = table.concat{P.double(1, h.min), P.double(2, h.max), P.double(3, h.num), P.double(4, h.sum),
    P.double(5, h.sum_squares), P.packed_doubles(6, h.bucket_limit), P.packed_doubles(7, h.bucket)}
  return summary_of(P.string(1, tag) .. P.message(5, histo))
end

-- The image as a contiguous H x W x C uint8 tensor (C = 3 or 4; one
-- channel is repeated to RGB as PyTorch does). Floats are scaled by 255,
-- clipped to [0, 255] and truncated; uint8 is taken as is.
function S.image_hwc(img, dataformats)
  local fn = "add_image"
  if not torch.is_tensor(img) then error(("%s: img_tensor must be a tensor, got %s"):format(fn, type(img)), 3) end
  local fmt = (dataformats or "CHW"):upper()
  local valid = {CHW = 1, HWC = 1, HW = 1, WH = 1, HCW = 1, WHC = 1, CWH = 1, WCH = 1}
  if type(dataformats or "CHW") ~= "string" or not valid[fmt] then
    error(("%s: dataformats must be one of 'CHW', 'HWC', 'HW' (or another order of those letters), got %s"):format(
      fn, tostring(dataformats)), 3)
  end
  if img:dim() ~= #fmt then
    error(("%s: dataformats '%s' needs a %d-D tensor, got a %d-D tensor of shape [%s]"):format(fn, fmt, #fmt,
      img:dim(), table.concat(img.shape, ", ")), 3)
  end
  if #fmt == 2 then
    img = img:permute((fmt:find("H")), (fmt:find("W"))):unsqueeze(3)
  else
    img = img:permute((fmt:find("H")), (fmt:find("W")), (fmt:find("C")))
  end
  local c = img.shape[3]
  if c ~= 1 and c ~= 3 and c ~= 4 then
    error(("%s: an image needs 1, 3 or 4 channels, got %d (shape [%s] in %s order)"):format(fn, c,
      table.concat(img.shape, ", "), fmt), 3)
  end
  if img:numel() == 0 then error(("%s: the image is empty"):format(fn), 3) end
  if c == 1 then img = img:expand(img.shape[1], img.shape[2], 3) end
  if img.dtype ~= torch.uint8 then
    img = (img:double() * 255):clamp(0, 255):to(torch.uint8)
  end
  return img:cpu():contiguous() -- encoded on the host
end

function S.image(tag, img, dataformats)
  check_tag("add_image", tag)
  local hwc = S.image_hwc(img, dataformats)
  local png = C.png(hwc)
  local shape = hwc.shape
  local im = P.varint(1, shape[1]) .. P.varint(2, shape[2]) .. P.varint(3, shape[3]) .. P.bytes(4, png)
  return summary_of(P.string(1, tag) .. P.message(4, im))
end

function S.text(tag, text)
  check_tag("add_text", tag)
  if type(text) ~= "string" then error(("add_text: text_string must be a string, got %s"):format(type(text)), 3) end
  local shape = P.message(2, P.varint(1, 1))
  local tensor = P.varint(1, 7) .. P.message(2, shape) .. P.bytes(8, text)
  local value = P.string(1, tag .. "/text_summary") .. P.message(9, plugin_metadata("text", "")) .. P.message(8, tensor)
  return summary_of(value)
end

-- google.protobuf.Value of a number, string or boolean.
local function pb_value(v)
  if type(v) == "number" then return P.double(2, v) end
  if type(v) == "string" then return P.string(3, v) end
  return P.bool(4, v)
end

local function sorted_keys(t)
  local ks = {}
  for k in pairs(t) do ks[#ks + 1] = k end
  table.sort(ks, function(a, b) return tostring(a) < tostring(b) end)
  return ks
end

local function hparams_summary(tag, field, msg)
  local content = P.message(field, msg) -- version 0 is the default: left out
  return summary_of(P.string(1, tag) .. P.message(9, plugin_metadata("hparams", content)))
end

-- The three summaries of add_hparams: experiment, session start, session
-- end. hp: name -> number|string|boolean|one-element tensor; metrics: name
-- -> number; discrete: name -> list of allowed values (optional).
function S.hparams(hp, metrics, discrete)
  local fn = "add_hparams"
  if type(hp) ~= "table" then error(fn .. ": hparam_dict must be a table", 3) end
  if type(metrics) ~= "table" then error(fn .. ": metric_dict must be a table", 3) end
  discrete = discrete or {}
  local infos, entries = {}, {}
  for _, k in ipairs(sorted_keys(hp)) do
    if type(k) ~= "string" then error(fn .. ": hparam names must be strings", 3) end
    local v = hp[k]
    if torch.is_tensor(v) then v = S.number(fn, "hparam '" .. k .. "'", v) end
    local ty = ({number = 3, string = 1, boolean = 2})[type(v)]
    if not ty then
      error(("%s: hparam '%s' must be a number, string, boolean or one-element tensor, got %s"):format(fn, k, type(v)), 3)
    end
    local info = P.string(1, k) .. P.varint(4, ty)
    if discrete[k] then
      local vals = {}
      for _, d in ipairs(discrete[k]) do vals[#vals + 1] = P.message(1, pb_value(d)) end
      info = info .. P.message(5, table.concat(vals))
    end
    infos[#infos + 1] = P.message(4, info)
    entries[#entries + 1] = P.message(1, P.string(1, k) .. P.message(2, pb_value(v)))
  end
  for _, k in ipairs(sorted_keys(metrics)) do
    if type(k) ~= "string" then error(fn .. ": metric names must be strings", 3) end
    infos[#infos + 1] = P.message(5, P.message(1, P.string(2, k)))
  end
  local exp = hparams_summary("_hparams_/experiment", 2, table.concat(infos))
  local ssi = hparams_summary("_hparams_/session_start_info", 3, table.concat(entries))
  local sei = hparams_summary("_hparams_/session_end_info", 4, P.varint(1, 1))
  return exp, ssi, sei
end

S.sorted_keys = sorted_keys
return S
