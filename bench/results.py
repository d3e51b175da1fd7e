"""Shared by the bench scripts: print a results section and, when asked, append it to RESULTS.md."""

from __future__ import annotations

from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "RESULTS.md"


def publish(text: str, write: bool) -> None:
    print(text)
    if write:
        with open(RESULTS, "a", encoding="utf-8") as handle:
            handle.write("\n" + text)
