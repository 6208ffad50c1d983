-- torch.vision.datasets -- torchvision's datasets over local files (nothing
-- is downloaded): MNIST, FashionMNIST, KMNIST, EMNIST (idx files), CIFAR10,
-- CIFAR100 (binary version), DatasetFolder, ImageFolder (folders of image
-- files) and FakeData. Samples are {image, target} with 1-based targets;
-- every dataset takes transform, target_transform and transforms.
local mnist = require "torch.vision.datasets.mnist"
local cifar = require "torch.vision.datasets.cifar"
local folder = require "torch.vision.datasets.folder"

local datasets = {
  MNIST = mnist.MNIST,
  FashionMNIST = mnist.FashionMNIST,
  KMNIST = mnist.KMNIST,
  EMNIST = mnist.EMNIST,
  FASHION_MNIST_DIR = mnist.FASHION_MNIST_DIR,
  FashionMNIST_classes = mnist.FashionMNIST_classes,
  CIFAR10 = cifar.CIFAR10,
  CIFAR100 = cifar.CIFAR100,
  DatasetFolder = folder.DatasetFolder,
  ImageFolder = folder.ImageFolder,
  IMG_EXTENSIONS = folder.IMG_EXTENSIONS,
  default_loader = folder.default_loader,
  has_file_allowed_extension = folder.has_file_allowed_extension,
  find_classes = folder.find_classes,
  make_dataset = folder.make_dataset,
  FakeData = require "torch.vision.datasets.fakedata",
}
return datasets
