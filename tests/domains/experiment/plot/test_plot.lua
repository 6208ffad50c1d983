-- tests/plot/test_plot.lua -- torch.plot (lua/torch/plot/, lua_bindings/l_plot.c):
-- valid PNG files of the asked size, lines drawn where the layout says
-- (checked on the pixels read back from the file), gaps at missing points,
-- log axes, legend placement, nice ticks without overlapping labels, and
-- clear errors for bad input.
local plot = torch.plot
local ticks = plot.ticks

local function tmp_png()
  local p = os.tmpname()
  os.remove(p)
  return p .. ".png"
end

-- width, height from the PNG signature and IHDR chunk of the file
local function png_size(path)
  local f = assert(io.open(path, "rb"))
  local head = f:read(24)
  f:close()
  check(head and #head == 24, "file too short for a PNG")
  check(head:sub(1, 8) == "\137PNG\r\n\26\n", "PNG signature")
  check(head:sub(13, 16) == "IHDR", "IHDR chunk first")
  return string.unpack(">I4>I4", head, 17)
end

local function rgb255(c) return math.floor(c[1] * 255 + 0.5), math.floor(c[2] * 255 + 0.5), math.floor(c[3] * 255 + 0.5) end

local function near(img, x, y, want, tol)
  local r, g, b = img:pixel(math.floor(x), math.floor(y))
  local wr, wg, wb = table.unpack(want)
  return math.abs(r - wr) <= tol and math.abs(g - wg) <= tol and math.abs(b - wb) <= tol, ("%d,%d,%d"):format(r, g, b)
end

test("a plot is a PNG file of the asked size; the path is returned", function()
  local path = tmp_png()
  local got = table.pack(plot{series = {{name = "a", y = {1, 3, 2}}}, width = 640, height = 360, path = path,
    quiet = true})
  check_eq(got, {path, n = 1})
  local w, h = png_size(path)
  check_eq({w, h}, {640, 360})
  local img = require("torch.plot._canvas").read(path)
  check_eq({img:size()}, {640, 360})
  os.remove(path)
end)

test("lines are drawn where the layout maps the data; missing points leave a gap", function()
  local path = tmp_png()
  local nan = 0 / 0
  local _, L = plot{series = {{name = "flat", x = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, y = {1, 1, 1, 1, nan, nan, nan, 1, 1, 1, 1}},
                              {name = "low", x = {0, 10}, y = {0, 0}}},
                    path = path, quiet = true, width = 800, height = 500, layout = true}
  local img = require("torch.plot._canvas").read(path)
  local c1, c2 = {rgb255(plot.PALETTE[1])}, {rgb255(plot.PALETTE[2])}
  -- on the first line between points 1 and 2, on the second at x = 2.5
  local x1, y1 = L.to_pixel(1.5, 1)
  local ok, got = near(img, x1, y1, c1, 3)
  check(ok, "first series' color on its line, got " .. got)
  local x2, y2 = L.to_pixel(2.5, 0)
  ok, got = near(img, x2, y2, c2, 3)
  check(ok, "second series' color on its line, got " .. got)
  -- inside the gap (x = 5.5) there is no line
  local gx, gy = L.to_pixel(5.5, 1)
  ok = near(img, gx, gy, c1, 60)
  check(not ok, "no line across the missing points")
  -- halfway between the lines: background (white or a grid line)
  local mx, my = L.to_pixel(2.5, 0.5)
  local r, g, b = img:pixel(math.floor(mx), math.floor(my))
  check(r > 200 and g > 200 and b > 200, ("background between the lines, got %d,%d,%d"):format(r, g, b))
  check_eq(L.skipped, 3)
  -- the legend covers neither line
  local lg = L.legend
  check(lg, "two series get a legend")
  for _, pt in ipairs{{0, 1}, {3, 1}, {7, 1}, {10, 1}, {0, 0}, {5, 0}, {10, 0}} do
    local px, py = L.to_pixel(pt[1], pt[2])
    check(not (px >= lg.x and px <= lg.x + lg.w and py >= lg.y and py <= lg.y + lg.h),
      "legend over the point " .. pt[1] .. "," .. pt[2])
  end
  os.remove(path)
end)

test("logy puts 10 halfway between 1 and 100 and has decade ticks", function()
  local path = tmp_png()
  local _, L = plot{series = {{y = {1, 10, 100, 1000}}}, logy = true, path = path, quiet = true, layout = true}
  local _, y1 = L.to_pixel(1, 1)
  local _, y10 = L.to_pixel(1, 10)
  local _, y100 = L.to_pixel(1, 100)
  check_close(y10 - y100, y1 - y10, {atol = 1e-6})
  check_eq(L.yticks, {1, 10, 100, 1000})
  check_eq(L.ylabels, {"1", "10", "100", "1000"})
  os.remove(path)
end)

test("tick labels do not overlap, even on a narrow plot with long labels", function()
  local path = tmp_png()
  local x, y = {}, {}
  for i = 1, 50 do x[i], y[i] = 123456 + i * 1000.5, math.sin(i) end
  local _, L = plot{series = {{y = y, x = x}}, width = 300, height = 200, path = path, quiet = true, layout = true}
  local c = require("torch.plot._canvas").new(100, 100)
  c:font(11)
  for i = 2, #L.xticks do
    local a = L.to_pixel(L.xticks[i - 1], 0) + c:measure(L.xlabels[i - 1]) / 2
    local b = L.to_pixel(L.xticks[i], 0) - c:measure(L.xlabels[i]) / 2
    check(b - a >= 4, ("x labels %s and %s overlap"):format(L.xlabels[i - 1], L.xlabels[i]))
  end
  check(#L.xticks >= 2, "at least two x ticks")
  os.remove(path)
end)

test("nice ticks: steps of 1, 2 or 5 times a power of ten, labels with the digits the step needs", function()
  check_eq(ticks.step(0, 1, 5), 0.2)
  check_eq(ticks.step(0, 4500, 8), 1000)
  check_eq(ticks.step(0, 0.0007, 7), 0.0001)
  check_eq(ticks.next_step(0.2), 0.5)
  check_eq(ticks.next_step(5), 10)
  check_eq(ticks.linear(-0.03, 1.03, 0.2), {0, 0.2, 0.4, 0.6, 0.8, 1})
  check_eq(ticks.format(0.30000000000000004, 0.1), "0.3")
  check_eq(ticks.format(0.25, 0.05), "0.25")
  check_eq(ticks.format(2500000, 500000), "2.5e6")
  check_eq(ticks.format(1.5e-5, 5e-6), "1.5e-5")
  check_eq(ticks.format(200, 100), "200")
  check_eq((ticks.log(1e-4, 10, 8)), {0.0001, 0.001, 0.01, 0.1, 1, 10})
  check_eq((ticks.log(0.5, 30, 8)), {0.5, 1, 2, 5, 10, 20})
  local _, labels = ticks.log(1e-12, 1e3, 6)
  check_eq(labels, {"1e-12", "1e-9", "1e-6", "0.001", "1", "1000"})
end)

test("tensors are accepted as y and x; a single unnamed series has no legend", function()
  local path = tmp_png()
  local _, L = plot(torch.linspace(0, 1, 20):pow(2), {path = path, quiet = true, title = "t", layout = true})
  check(L.legend == nil, "no legend for one unnamed series")
  check_eq({L.xticks[1] >= 1, L.xticks[#L.xticks] <= 20}, {true, true})
  _, L = plot{series = {{name = "sq", x = torch.arange(0, 10), y = torch.arange(0, 10):float():pow(2)}},
    path = path, quiet = true, layout = true}
  check(L.legend ~= nil, "a named series has a legend")
  os.remove(path)
end)

test("plot prints where the picture went", function()
  local path = tmp_png()
  local out = os.tmpname()
  local exe = arg and arg[-1] or "build/moontorch"
  local p = io.popen(("%s -e \"torch.plot{series = {{name='a', y={1,2}}, {name='b', y={2,0/0,1}}}, path='%s'}\" 2>&1")
    :format(exe, path))
  local text = p:read("a")
  p:close()
  check(text:find("plot: wrote " .. path .. " (800x500, 2 series, 1 missing point skipped)", 1, true), text)
  os.remove(path)
  os.remove(out)
end)

test("bad input gives clear errors", function()
  local path = tmp_png()
  check_error(function() plot{series = {}, path = path} end, "plot: no series to draw")
  check_error(function() plot{path = path} end, "plot: no series given")
  check_error(function() plot{series = {{name = "a", y = {}}}, path = path} end, "plot: series 1 (a) is empty")
  check_error(function() plot{series = {{name = "a", y = {1}}, {name = "b", x = {1, 2, 3}, y = {1, 2}}}, path = path} end,
    "plot: series 2 (b): x has 3 values, y has 2")
  check_error(function() plot{series = {{y = {1, "x"}}}, path = path} end, "y[2] is a string, not a number")
  check_error(function() plot{series = {{y = torch.zeros(2, 2)}}, path = path} end, "must be 1-D")
  check_error(function() plot{series = {{y = {0 / 0, 0 / 0}}}, path = path} end, "every point is missing")
  check_error(function() plot{series = {{y = {-1, 0}}}, logy = true, path = path} end, "logy needs y > 0")
  check_error(function() plot{series = {{y = {1, 2}}}, width = 10, path = path} end, "width must be an integer")
  check_error(function() plot{series = {{y = {1, 2}}}, colour = "red", path = path} end, "unknown option 'colour'")
  check_error(function() plot{series = {{y = {1, 2}}}, path = "/nonexistent-dir/x.png", quiet = true} end,
    "plot: cannot write /nonexistent-dir/x.png: No such file or directory")
  check_error(function() plot("abc") end, "expected an options table")
end)
