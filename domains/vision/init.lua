-- torch.vision: vision datasets and tools; torch.vision.datasets loads on
-- first use.
return require("torch")._package("torch.vision")
