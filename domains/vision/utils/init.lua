-- torch.vision.utils -- torchvision.utils in Lua: make_grid and save_image
-- (tensor ops and torch.vision.io's encoders), draw_bounding_boxes,
-- draw_segmentation_masks and draw_keypoints. Drawing follows PIL's pixel
-- rules as torchvision uses them (domains/vision/l_draw.c); label text is
-- drawn with Cairo (l_text.c). Box corners and keypoints are 0-based pixel
-- coordinates as in torchvision; connectivity pairs are 1-based keypoint
-- indices.
local torch = require "torch"
local U = require "torch.nn.util"
local colors = require "torch.vision.utils._colors"
local draw = require "torch.vision._draw"
local utils = {}

local function is_list_of_tensors(t)
  if type(t) ~= "table" or torch.is_tensor(t) or #t == 0 then return false end
  for _, v in ipairs(t) do if not torch.is_tensor(v) then return false end end
  return true
end

local function shape(t) return table.concat(t.shape, "x") end

-- the batch of make_grid's input: N x C x H x W with C = 3 for gray images
local function as_batch(fname, tensor)
  if type(tensor) == "table" and not torch.is_tensor(tensor) then
    if not is_list_of_tensors(tensor) then
      error(fname .. ": expected a tensor or a non-empty list of tensors", 0)
    end
    local s1 = shape(tensor[1])
    for k, t in ipairs(tensor) do
      if shape(t) ~= s1 then
        error(("%s: the images must have one shape; image 1 is %s, image %d is %s"):format(fname, s1, k, shape(t)), 0)
      end
    end
    tensor = torch.stack(tensor)
  elseif not torch.is_tensor(tensor) then
    error(("%s: expected a tensor or a list of tensors, got a %s"):format(fname, type(tensor)), 0)
  end
  if tensor:dim() == 2 then tensor = tensor:unsqueeze(1) end
  if tensor:dim() == 3 then
    if tensor:size(1) == 1 then tensor = torch.cat({tensor, tensor, tensor}, 1) end
    tensor = tensor:unsqueeze(1)
  end
  if tensor:dim() ~= 4 then
    error(("%s: expected images of 2, 3 or 4 dims (H x W, C x H x W, N x C x H x W), got %s"):format(fname,
      shape(tensor)), 0)
  end
  if tensor:size(1) == 0 then error(fname .. ": the batch holds no image", 0) end
  if tensor:size(2) == 1 then tensor = torch.cat({tensor, tensor, tensor}, 2) end
  return tensor
end

-- img clamped to [low, high] and scaled to [0, 1], in place
local function norm_ip(img, low, high)
  img:clamp_(low, high)
  img:sub_(low):div_(math.max(high - low, 1e-5))
end

local function norm_range(t, range)
  if range then norm_ip(t, range[1], range[2])
  else norm_ip(t, t:min():item(), t:max():item()) end
end

local GRID = {"nrow", "padding", "normalize", "value_range", "scale_each", "pad_value"}
local GRID_DEFAULTS = {nrow = 8, padding = 2, normalize = false, scale_each = false, pad_value = 0}

local function check_grid_opts(fname, o)
  for _, k in ipairs({"nrow", "padding"}) do
    if math.type(o[k]) ~= "integer" or o[k] < (k == "nrow" and 1 or 0) then
      error(("%s: %s must be a%s integer, got %s"):format(fname, k, k == "nrow" and " positive" or " non-negative",
        tostring(o[k])), 0)
    end
  end
  local r = o.value_range
  if r ~= nil and r ~= false and (type(r) ~= "table" or type(r[1]) ~= "number" or type(r[2]) ~= "number") then
    error(fname .. ": value_range must be a table {min, max} of numbers", 0)
  end
  if type(o.pad_value) ~= "number" then error(fname .. ": pad_value must be a number", 0) end
end

-- make_grid(tensor[, nrow=8, padding=2, normalize=false, value_range=,
-- scale_each=false, pad_value=0]) -> C x H' x W'
function utils.make_grid(tensor, ...)
  local fname = "make_grid"
  local o = U.args(fname, GRID, GRID_DEFAULTS, ...)
  check_grid_opts(fname, o)
  tensor = as_batch(fname, tensor)
  if o.normalize then
    tensor = tensor:clone()
    local range = o.value_range or nil
    if o.scale_each then
      for k = 1, tensor:size(1) do norm_range(tensor[k], range) end
    else
      norm_range(tensor, range)
    end
  end
  if tensor:size(1) == 1 then return tensor[1] end
  local n, pad = tensor:size(1), o.padding
  local xmaps = math.min(o.nrow, n)
  local ymaps = (n + xmaps - 1) // xmaps
  local h, w, c = tensor:size(3) + pad, tensor:size(4) + pad, tensor:size(2)
  local grid = torch.full({c, h * ymaps + pad, w * xmaps + pad}, o.pad_value, {dtype = tensor.dtype, device = tensor.device})
  local k = 1
  for y = 0, ymaps - 1 do
    for x = 0, xmaps - 1 do
      if k > n then break end
      grid:narrow(2, y * h + pad + 1, h - pad):narrow(3, x * w + pad + 1, w - pad):copy_(tensor[k])
      k = k + 1
    end
  end
  return grid
end

-- save_image(tensor, fp[, format][, {nrow=, padding=, ...}]): the grid of
-- make_grid, values in [0, 1] scaled to bytes (x * 255 + 0.5, clamped),
-- written as PNG or JPEG (by format or by the file's extension)
function utils.save_image(tensor, fp, ...)
  local fname = "save_image"
  if type(fp) ~= "string" then
    error(("%s: fp must be a file path (a string), got a %s"):format(fname, type(fp)), 0)
  end
  local n = select("#", ...)
  local format, rest = nil, {...}
  if n > 0 and (type(rest[1]) == "string" or rest[1] == false) then
    format = rest[1] or nil
    table.remove(rest, 1)
  end
  local opts = rest[1]
  if #rest > 1 or (opts ~= nil and not (type(opts) == "table" and getmetatable(opts) == nil)) then
    error(fname .. ": expected save_image(tensor, fp[, format][, {nrow=, padding=, normalize=, ...}])", 0)
  end
  opts = opts or {}
  local names = {"format"}
  for _, k in ipairs(GRID) do names[#names + 1] = k end
  torch._check_options(fname, opts, names)
  format = format or opts.format
  local grid_opts = {}
  for _, k in ipairs(GRID) do grid_opts[k] = opts[k] end
  local grid = utils.make_grid(tensor, grid_opts)
  local bytes = grid:detach():to("cpu", torch.float32):mul(255):add_(0.5):clamp_(0, 255):to(torch.uint8)
  if not format then
    local ext = fp:match("%.([^./]+)$")
    format = ext and ext:lower()
    if not format then error(("%s: cannot tell the format of %s (no extension); give format='png' or 'jpeg'"):format(
      fname, fp), 0) end
  end
  format = format:lower()
  local vio = torch.vision.io
  if format == "png" then
    vio.write_png(bytes, fp)
  elseif format == "jpeg" or format == "jpg" then
    vio.write_jpeg(bytes, fp)
  else
    error(("%s: unsupported format '%s' (png or jpeg)"):format(fname, format), 0)
  end
end

-- The image argument of the draw_* functions as a contiguous uint8
-- 3 x H x W copy (gray tiled when gray_ok), and how to give it back
-- (float images in [0, 1] are drawn on as bytes and returned as floats).
local function canvas(fname, image, gray_ok)
  if not torch.is_tensor(image) then
    error(("%s: the image must be a tensor, got a %s"):format(fname, type(image)), 0)
  end
  local dt = image.dtype
  if dt ~= torch.uint8 and not image:is_floating_point() then
    error(("%s: the image must be uint8 (or float in [0, 1]), got %s"):format(fname, tostring(dt)), 0)
  end
  if image:dim() ~= 3 then
    error(("%s: pass one C x H x W image, not a batch (got shape %s)"):format(fname, shape(image)), 0)
  end
  local c = image:size(1)
  if not (c == 3 or (gray_ok and c == 1)) then
    error(("%s: the image must have %s channels, got %d"):format(fname, gray_ok and "1 or 3" or "3", c), 0)
  end
  local dev = image.device
  local img = image:detach():cpu()
  if dt ~= torch.uint8 then img = img:mul(255):to(torch.uint8) end
  if c == 1 then img = img:expand(3, img:size(2), img:size(3)) end
  img = img:contiguous():clone()
  local function back(out)
    if dt ~= torch.uint8 then out = out:to(dt):div(255) end
    return out:to(dev)
  end
  return img, back
end

local function warn(msg) io.stderr:write("warning: ", msg, "\n") end

-- draw_bounding_boxes(image, boxes[, labels, colors, fill=false, width=1,
-- font, font_size, label_colors]) -> a uint8 3 x H x W copy with the boxes
function utils.draw_bounding_boxes(image, boxes, ...)
  local fname = "draw_bounding_boxes"
  local o = U.args(fname, {"labels", "colors", "fill", "width", "font", "font_size", "label_colors"},
    {fill = false, width = 1}, ...)
  local img, back = canvas(fname, image, true)
  if not torch.is_tensor(boxes) or boxes:dim() ~= 2 or boxes:size(2) ~= 4 then
    error(("%s: boxes must be a K x 4 tensor (xmin, ymin, xmax, ymax), got %s"):format(fname,
      torch.is_tensor(boxes) and shape(boxes) or type(boxes)), 0)
  end
  local b = boxes:detach():cpu()
  if b:is_floating_point() and not b:isfinite():all():item() then
    error(fname .. ": boxes must be finite numbers", 0)
  end
  if b:select(2, 1):gt(b:select(2, 3)):any():item() or b:select(2, 2):gt(b:select(2, 4)):any():item() then
    error(fname .. ": boxes must be (xmin, ymin, xmax, ymax) with xmin <= xmax and ymin <= ymax; "
      .. "torch.vision.ops.box_convert converts other formats", 0)
  end
  local k = b:size(1)
  if k == 0 then
    warn(fname .. ": boxes holds no box; nothing was drawn")
    return image
  end
  if math.type(o.width) ~= "integer" or o.width < 0 then
    error(fname .. ": width must be a non-negative integer, got " .. tostring(o.width), 0)
  end
  local labels = o.labels or nil
  if labels ~= nil then
    if type(labels) ~= "table" or #labels ~= k then
      error(("%s: %s labels for %d boxes (give one string per box)"):format(fname,
        type(labels) == "table" and tostring(#labels) or "no list of", k), 0)
    end
  end
  local box_colors = colors.list(fname, o.colors, k, "boxes")
  local text_colors = o.label_colors and colors.list(fname, o.label_colors, k, "labels") or box_colors
  if o.font ~= nil and o.font ~= false and type(o.font) ~= "string" then
    error(fname .. ": font must be a font file path or a font family name", 0)
  end
  local size = o.font_size or 10
  if type(size) ~= "number" or size <= 0 then error(fname .. ": font_size must be a positive number", 0) end
  local text = labels and require("torch.vision._text").text
  local xy = b:double():clamp(-2 ^ 50, 2 ^ 50):to(torch.int64):totable() -- far corners draw the same
  for i = 1, k do
    local x0, y0, x1, y1 = table.unpack(xy[i])
    local c = box_colors[i]
    if o.fill then draw.fill_rect(img, x0, y0, x1, y1, c[1], c[2], c[3], 100) end
    if o.width > 0 then draw.rect(img, x0, y0, x1, y1, c[1], c[2], c[3], o.width) end
    if labels and labels[i] ~= nil and labels[i] ~= false then
      local t, m = text_colors[i], o.width + 1
      text(img, x0 + m, y0 + m, tostring(labels[i]), t[1], t[2], t[3], o.font or nil, size)
    end
  end
  return back(img)
end

-- draw_segmentation_masks(image, masks[, alpha=0.8, colors]) -> the image
-- with each (bool H x W) mask painted in its color, blended by alpha
function utils.draw_segmentation_masks(image, masks, ...)
  local fname = "draw_segmentation_masks"
  local o = U.args(fname, {"alpha", "colors"}, {alpha = 0.8}, ...)
  local img = canvas(fname, image, false)
  if not torch.is_tensor(masks) then error(fname .. ": masks must be a bool tensor", 0) end
  if masks:dim() == 2 then masks = masks:unsqueeze(1) end
  if masks:dim() ~= 3 then
    error(("%s: masks must be H x W or N x H x W, got %s"):format(fname, shape(masks)), 0)
  end
  if masks.dtype ~= torch.bool then
    error(("%s: masks must be bool, got %s"):format(fname, tostring(masks.dtype)), 0)
  end
  if masks:size(2) ~= img:size(2) or masks:size(3) ~= img:size(3) then
    error(("%s: masks of %s do not fit the image of %s"):format(fname, shape(masks), shape(image)), 0)
  end
  if type(o.alpha) ~= "number" or o.alpha < 0 or o.alpha > 1 then
    error(fname .. ": alpha must be a number in [0, 1], got " .. tostring(o.alpha), 0)
  end
  local n = masks:size(1)
  if n == 0 then
    warn(fname .. ": masks holds no mask; nothing was drawn")
    return image
  end
  local cs = colors.list(fname, o.colors, n, "masks")
  local m = masks:detach():to(image.device)
  -- float images blend in float with the colors scaled to [0, 1]
  local float = image:is_floating_point()
  local base = float and image:detach() or image:detach():to(torch.uint8)
  local painted = base:clone()
  local h, w = m:size(2), m:size(3)
  for i = 1, n do
    local where = m[i]:unsqueeze(1):expand(3, h, w)
    local color = torch.tensor(cs[i], {dtype = base.dtype, device = base.device})
    if float then color = color / 255 end
    painted = torch.where(where, color:view(3, 1, 1):expand(3, h, w), painted)
  end
  local out = base:to(float and base.dtype or torch.float32) * (1 - o.alpha)
    + painted:to(float and base.dtype or torch.float32) * o.alpha
  return float and out or out:to(torch.uint8)
end

-- draw_keypoints(image, keypoints[, connectivity, colors, radius=2,
-- width=3, visibility]) -> the image with each visible keypoint a disk of
-- colors (none when colors is nil, as torchvision) and each connection
-- {i, j} (1-based keypoint indices) a white line of width
function utils.draw_keypoints(image, keypoints, ...)
  local fname = "draw_keypoints"
  local o = U.args(fname, {"connectivity", "colors", "radius", "width", "visibility"}, {radius = 2, width = 3}, ...)
  local img, back = canvas(fname, image, false)
  if not torch.is_tensor(keypoints) or keypoints:dim() ~= 3 or keypoints:size(3) ~= 2 then
    error(("%s: keypoints must be N x K x 2 (x, y), got %s"):format(fname,
      torch.is_tensor(keypoints) and shape(keypoints) or type(keypoints)), 0)
  end
  local n, k = keypoints:size(1), keypoints:size(2)
  local vis = o.visibility
  if vis ~= nil and vis ~= false then
    if not torch.is_tensor(vis) or vis:dim() ~= 2 or vis:size(1) ~= n or vis:size(2) ~= k then
      error(("%s: visibility must be an N x K tensor (%dx%d), got %s"):format(fname, n, k,
        torch.is_tensor(vis) and shape(vis) or type(vis)), 0)
    end
    vis = vis:detach():cpu():bool():totable()
  else
    vis = nil
  end
  for _, key in ipairs({"radius", "width"}) do
    if math.type(o[key]) ~= "integer" or o[key] < 0 then
      error(("%s: %s must be a non-negative integer, got %s"):format(fname, key, tostring(o[key])), 0)
    end
  end
  local conn = o.connectivity or {}
  if type(conn) ~= "table" then error(fname .. ": connectivity must be a list of {i, j} pairs", 0) end
  for _, pair in ipairs(conn) do
    if type(pair) ~= "table" or math.type(pair[1]) ~= "integer" or math.type(pair[2]) ~= "integer"
      or pair[1] < 1 or pair[1] > k or pair[2] < 1 or pair[2] > k then
      error(("%s: connectivity pairs must be 1-based keypoint indices in 1..%d"):format(fname, k), 0)
    end
  end
  local dot = nil
  if o.colors ~= nil and o.colors ~= false then
    if not colors.is_single(o.colors) then error(fname .. ": colors must be one color", 0) end
    dot = colors.parse(fname, o.colors)
  end
  local kp = keypoints:detach():cpu()
  if kp:is_floating_point() and not kp:isfinite():all():item() then
    error(fname .. ": keypoints must be finite numbers", 0)
  end
  local pts = kp:double():clamp(-2 ^ 50, 2 ^ 50):to(torch.int64):totable()
  for i = 1, n do
    local p, v = pts[i], vis and vis[i]
    if dot then
      for j = 1, k do
        if not v or v[j] then draw.disk(img, p[j][1], p[j][2], o.radius, dot[1], dot[2], dot[3]) end
      end
    end
    for _, pair in ipairs(conn) do
      local a, b = pair[1], pair[2]
      if not v or (v[a] and v[b]) then
        draw.line(img, p[a][1], p[a][2], p[b][1], p[b][2], 255, 255, 255, o.width)
      end
    end
  end
  return back(img)
end

utils.__help = "torch.vision.utils: make_grid, save_image, draw_bounding_boxes, draw_segmentation_masks, "
  .. "draw_keypoints"

return U.public_table(utils, "")
