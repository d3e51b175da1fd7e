"""The README's table of the rules each floor runs by default is the one the registry gives."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

from helpers import load_tool

ROOT = Path(__file__).resolve().parent.parent


def _tool() -> ModuleType:
    return load_tool("window_table")


def test_the_readme_table_is_current() -> None:
    tool = _tool()
    assert tool.current((ROOT / "README.md").read_text(encoding="utf-8")) == tool.table(), \
        "run `python3 tools/window_table.py`"


def test_a_later_floor_turns_off_only_silent_changes() -> None:
    """Every rule that runs for a 2.8 floor runs for a 1.13 floor too; what 2.8 drops is silent."""
    tool = _tool()
    rows = [line.split("|")[1:-1] for line in tool.table().splitlines()[2:]]
    counts = [int(row[1]) for row in rows]
    assert counts == sorted(counts, reverse=True)
