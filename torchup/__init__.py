"""torchup: the upgrade assistant for PyTorch.

The library API (``check_source``, ``fix_source``, ``Finding``, ``FixResult``) lives in
``torchup.api`` and is imported on first use, so ``torchup --version`` stays instant.
"""

__version__ = "0.1.0"
__all__ = ["Finding", "FixResult", "__version__", "check_source", "fix_source"]


def __getattr__(name: str) -> object:
    if name in ("check_source", "fix_source", "Finding", "FixResult"):
        from torchup import api

        return getattr(api, name)
    raise AttributeError(f"module 'torchup' has no attribute {name!r}")
