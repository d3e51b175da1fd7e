"""Release facts, loaded once from ``data/torch_api.json`` (data, not constants in code)."""

from __future__ import annotations

import json
from typing import Any

from torchup.core.data import data_text


def _load() -> dict[str, Any]:
    return json.loads(data_text("torch_api.json"))


FACTS: dict[str, Any] = _load()


def removed(qualname: str) -> dict[str, str]:
    """What the data says about a removed API; KeyError if the data does not know it."""
    return FACTS["removed"][qualname]
