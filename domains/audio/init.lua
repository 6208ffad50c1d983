-- torch.audio: sound files, transforms and functional ops, datasets
-- (torchaudio's names and defaults); submodules load on first use, except
-- the io functions, which are fields as in torchaudio (torch.audio.load).
local A = require("torch")._package("torch.audio")
local io = require "torch.audio.io"
A.load, A.save, A.info = io.load, io.save, io.info
A.StreamReader = io.StreamReader
return A
