-- torch.vision.utils._colors -- the color arguments of torch.vision.utils'
-- drawing functions: the CSS color keywords PIL's ImageColor knows (any
-- case), "#rgb", "#rrggbb", "rgb(r, g, b)" and {r, g, b} tables; and
-- torchvision's default palette for objects 1..n.
local C = {}

-- the CSS3 / X11 color keywords as 0xRRGGBB
local NAMES = {
  aliceblue = 0xf0f8ff, antiquewhite = 0xfaebd7, aqua = 0x00ffff, aquamarine = 0x7fffd4, azure = 0xf0ffff,
  beige = 0xf5f5dc, bisque = 0xffe4c4, black = 0x000000, blanchedalmond = 0xffebcd, blue = 0x0000ff,
  blueviolet = 0x8a2be2, brown = 0xa52a2a, burlywood = 0xdeb887, cadetblue = 0x5f9ea0, chartreuse = 0x7fff00,
  chocolate = 0xd2691e, coral = 0xff7f50, cornflowerblue = 0x6495ed, cornsilk = 0xfff8dc, crimson = 0xdc143c,
  cyan = 0x00ffff, darkblue = 0x00008b, darkcyan = 0x008b8b, darkgoldenrod = 0xb8860b, darkgray = 0xa9a9a9,
  darkgreen = 0x006400, darkgrey = 0xa9a9a9, darkkhaki = 0xbdb76b, darkmagenta = 0x8b008b,
  darkolivegreen = 0x556b2f, darkorange = 0xff8c00, darkorchid = 0x9932cc, darkred = 0x8b0000,
  darksalmon = 0xe9967a, darkseagreen = 0x8fbc8f, darkslateblue = 0x483d8b, darkslategray = 0x2f4f4f,
  darkslategrey = 0x2f4f4f, darkturquoise = 0x00ced1, darkviolet = 0x9400d3, deeppink = 0xff1493,
  deepskyblue = 0x00bfff, dimgray = 0x696969, dimgrey = 0x696969, dodgerblue = 0x1e90ff, firebrick = 0xb22222,
  floralwhite = 0xfffaf0, forestgreen = 0x228b22, fuchsia = 0xff00ff, gainsboro = 0xdcdcdc,
  ghostwhite = 0xf8f8ff, gold = 0xffd700, goldenrod = 0xdaa520, gray = 0x808080, green = 0x008000,
  greenyellow = 0xadff2f, grey = 0x808080, honeydew = 0xf0fff0, hotpink = 0xff69b4, indianred = 0xcd5c5c,
  indigo = 0x4b0082, ivory = 0xfffff0, khaki = 0xf0e68c, lavender = 0xe6e6fa, lavenderblush = 0xfff0f5,
  lawngreen = 0x7cfc00, lemonchiffon = 0xfffacd, lightblue = 0xadd8e6, lightcoral = 0xf08080,
  lightcyan = 0xe0ffff, lightgoldenrodyellow = 0xfafad2, lightgray = 0xd3d3d3, lightgreen = 0x90ee90,
  lightgrey = 0xd3d3d3, lightpink = 0xffb6c1, lightsalmon = 0xffa07a, lightseagreen = 0x20b2aa,
  lightskyblue = 0x87cefa, lightslategray = 0x778899, lightslategrey = 0x778899, lightsteelblue = 0xb0c4de,
  lightyellow = 0xffffe0, lime = 0x00ff00, limegreen = 0x32cd32, linen = 0xfaf0e6, magenta = 0xff00ff,
  maroon = 0x800000, mediumaquamarine = 0x66cdaa, mediumblue = 0x0000cd, mediumorchid = 0xba55d3,
  mediumpurple = 0x9370db, mediumseagreen = 0x3cb371, mediumslateblue = 0x7b68ee, mediumspringgreen = 0x00fa9a,
  mediumturquoise = 0x48d1cc, mediumvioletred = 0xc71585, midnightblue = 0x191970, mintcream = 0xf5fffa,
  mistyrose = 0xffe4e1, moccasin = 0xffe4b5, navajowhite = 0xffdead, navy = 0x000080, oldlace = 0xfdf5e6,
  olive = 0x808000, olivedrab = 0x6b8e23, orange = 0xffa500, orangered = 0xff4500, orchid = 0xda70d6,
  palegoldenrod = 0xeee8aa, palegreen = 0x98fb98, paleturquoise = 0xafeeee, palevioletred = 0xdb7093,
  papayawhip = 0xffefd5, peachpuff = 0xffdab9, peru = 0xcd853f, pink = 0xffc0cb, plum = 0xdda0dd,
  powderblue = 0xb0e0e6, purple = 0x800080, rebeccapurple = 0x663399, red = 0xff0000, rosybrown = 0xbc8f8f,
  royalblue = 0x4169e1, saddlebrown = 0x8b4513, salmon = 0xfa8072, sandybrown = 0xf4a460, seagreen = 0x2e8b57,
  seashell = 0xfff5ee, sienna = 0xa0522d, silver = 0xc0c0c0, skyblue = 0x87ceeb, slateblue = 0x6a5acd,
  slategray = 0x708090, slategrey = 0x708090, snow = 0xfffafa, springgreen = 0x00ff7f, steelblue = 0x4682b4,
  tan = 0xd2b48c, teal = 0x008080, thistle = 0xd8bfd8, tomato = 0xff6347, turquoise = 0x40e0d0,
  violet = 0xee82ee, wheat = 0xf5deb3, white = 0xffffff, whitesmoke = 0xf5f5f5, yellow = 0xffff00,
  yellowgreen = 0x9acd32,
}

local function triple(v)
  return {(v >> 16) & 255, (v >> 8) & 255, v & 255}
end

-- parse(fname, c) -> {r, g, b} (0..255 integers) for one color, or an
-- error naming fname and the value
function C.parse(fname, c)
  if type(c) == "table" then
    if #c == 3 then
      local out = {}
      for k = 1, 3 do
        local v = c[k]
        if math.type(v) == "float" and v == math.floor(v) then v = math.tointeger(v) end
        if math.type(v) ~= "integer" or v < 0 or v > 255 then
          error(("%s: a color {r, g, b} needs integers 0..255, got {%s}"):format(fname,
            table.concat({tostring(c[1]), tostring(c[2]), tostring(c[3])}, ", ")), 0)
        end
        out[k] = v
      end
      return out
    end
    error(("%s: a color table must be {r, g, b}, got %d values"):format(fname, #c), 0)
  end
  if type(c) ~= "string" then
    error(("%s: a color must be a name, \"#rrggbb\" or {r, g, b}, got a %s"):format(fname, type(c)), 0)
  end
  local s = c:lower():gsub("%s+", "")
  if NAMES[s] then return triple(NAMES[s]) end
  local hex = s:match("^#(%x%x%x%x%x%x)$")
  if hex then return triple(tonumber(hex, 16)) end
  local r, g, b = s:match("^#(%x)(%x)(%x)$")
  if r then return {tonumber(r .. r, 16), tonumber(g .. g, 16), tonumber(b .. b, 16)} end
  r, g, b = s:match("^rgb%((%d+),(%d+),(%d+)%)$")
  if r and tonumber(r) <= 255 and tonumber(g) <= 255 and tonumber(b) <= 255 then
    return {tonumber(r), tonumber(g), tonumber(b)}
  end
  error(("%s: unknown color '%s' (use a CSS color name, \"#rrggbb\" or {r, g, b})"):format(fname, c), 0)
end

-- true when c is one color (a string or an {r, g, b} of numbers), not a list
function C.is_single(c)
  return type(c) == "string" or (type(c) == "table" and type(c[1]) == "number")
end

-- torchvision's default colors of objects 1..n: object k gets
-- ((k - 1) * (2^25 - 1, 2^15 - 1, 2^21 - 1)) mod 255
function C.palette(n)
  local out = {}
  for k = 1, n do
    local i = k - 1
    out[k] = {i * 33554431 % 255, i * 32767 % 255, i * 2097151 % 255}
  end
  return out
end

-- colors(fname, c, n, what) -> n {r, g, b}: c is nil (the palette), one color
-- for all, or a list of at least n colors
function C.list(fname, c, n, what)
  if c == nil or c == false then return C.palette(n) end
  local out = {}
  if C.is_single(c) then
    local one = C.parse(fname, c)
    for k = 1, n do out[k] = one end
    return out
  end
  if type(c) ~= "table" then
    error(("%s: colors must be a color or a list of colors, got a %s"):format(fname, type(c)), 0)
  end
  if #c < n then
    error(("%s: %d colors for %d %s"):format(fname, #c, n, what), 0)
  end
  for k = 1, n do out[k] = C.parse(fname, c[k]) end
  return out
end

return C
