"""legacy-project: a small classifier with input whitening and fused loss."""

from legacy_project.model import TinyClassifier, train

__all__ = ["TinyClassifier", "train"]
__version__ = "0.3.1"
