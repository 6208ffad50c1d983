-- torch.utils.tensorboard -- experiment logging: SummaryWriter writes
-- TensorBoard event files (writer.lua); CSVWriter and JSONLWriter write the
-- same calls as plain text files (text_writer.lua). docs/logging.md.
local tb = {__help = "torch.utils.tensorboard: SummaryWriter (TensorBoard event files), CSVWriter, JSONLWriter "
  .. "-- add_scalar, add_scalars, add_histogram, add_image, add_text, add_hparams, flush, close (docs/logging.md)"}
tb.SummaryWriter = require "torch.utils.tensorboard.writer"
local text = require "torch.utils.tensorboard.text_writer"
tb.CSVWriter = text.CSVWriter
tb.JSONLWriter = text.JSONLWriter
return tb
