-- torch.audio.compliance: features computed as other toolkits compute them
-- (torch.audio.compliance.kaldi); loaded on first use.
return require("torch")._package("torch.audio.compliance")
