"""Release facts, loaded once from ``data/torch_api.json`` (data, not constants in code)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def _load() -> dict[str, Any]:
    # A plain file read: importlib.resources would cost more start-up than the whole file.
    text = (Path(__file__).resolve().parents[1] / "data" / "torch_api.json").read_text(encoding="utf-8")
    return json.loads(text)


FACTS: dict[str, Any] = _load()


def removed(qualname: str) -> dict[str, str]:
    """What the data says about a removed API; KeyError if the data does not know it."""
    return FACTS["removed"][qualname]
