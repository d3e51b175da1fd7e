"""An image model and its preprocessing, written for torchvision before 0.13."""

import torchvision.models as models
from torchvision.transforms import v2


def backbone():
    """The ImageNet weights through the legacy keyword: TU706 (and the import above: TU708, a hint)."""
    return models.resnet50(pretrained=True)


def preprocess():
    """The deprecated v2 ToTensor: TU707."""
    return v2.Compose([v2.Resize(224), v2.ToTensor()])
