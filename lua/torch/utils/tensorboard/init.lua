-- torch.utils.tensorboard -- experiment logging: SummaryWriter writes
-- TensorBoard event files (writer.lua); CSVWriter and JSONLWriter write the
-- same calls as plain text files (text_writer.lua). docs/logging.md.
local tb = {}
tb.SummaryWriter = require "torch.utils.tensorboard.writer"
local text = require "torch.utils.tensorboard.text_writer"
tb.CSVWriter = text.CSVWriter
tb.JSONLWriter = text.JSONLWriter
return tb
