-- torch.utils: utilities; torch.utils.data loads on first use.
return require("torch")._package("torch.utils")
