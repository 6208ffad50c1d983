-- tests/tensorboard/write_sample.lua [LOGDIR] -- writes one of each summary kind for
-- read_with_tensorboard.py (TensorBoard's own reader, on a machine that has it).
local torch = require "torch"
local SummaryWriter = torch.utils.tensorboard.SummaryWriter
local w = SummaryWriter((arg and arg[1]) or "tbcheck/run1")
for step = 1, 5 do w:add_scalar("loss", 1 / step, step) end
w:add_scalars("lr", {a = 0.1, b = 0.2}, 3)
w:add_histogram("weights", torch.arange(0, 100):float() / 10, 7)
local img = torch.zeros(3, 4, 5)
img[{1}]:fill_(1)
img[{3, 2}]:fill_(0.5)
w:add_image("img", img, 2)
w:add_text("note", "hello tensorboard", 4)
w:add_hparams({lr = 0.01, bs = 64}, {["hparam/acc"] = 0.9})
w:close()
print("written")
