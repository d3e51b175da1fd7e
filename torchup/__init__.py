"""torchup: the upgrade assistant for PyTorch."""

__version__ = "0.1.0"
