-- torch.audio: sound files, transforms and functional ops, datasets
-- (torchaudio's names and defaults); submodules load on first use.
return require("torch")._package("torch.audio")
