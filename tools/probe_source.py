"""Source text the maintainer tools run inside a torch interpreter (``python -c``), shared."""

# `resolve("torch.utils.data.Sampler")`: the object a dotted path names, importing the longest
# module prefix that imports (LookupError when none does).
RESOLVE = """
import importlib
def resolve(path):
    parts = path.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            found = importlib.import_module(".".join(parts[:cut]))
            break
        except Exception:
            continue
    else:
        raise LookupError(path)
    for part in parts[cut:]:
        found = getattr(found, part)
    return found
"""
