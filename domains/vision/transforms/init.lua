-- torch.vision.transforms: the transforms of torchvision's v2 API live in
-- torch.vision.transforms.v2 (and .v2.functional); this package loads them
-- on first use.
return require("torch")._package("torch.vision.transforms")
