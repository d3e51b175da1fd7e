import os

# Soft in production, loud in tests: internal errors show their traceback.
os.environ.setdefault("TORCHUP_DEBUG", "1")
