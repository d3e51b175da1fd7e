"""Shared by the bench scripts: print a results section and, when asked, append it to RESULTS.md."""

from __future__ import annotations

from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "RESULTS.md"


def replace_section(section: str, start: str, end: str, heading: str) -> None:
    """Put ``section`` (which begins with the marker ``start`` and ends with ``end``) in RESULTS.md:
    in place of the marked one, or after a new ``heading`` at the end."""
    text = RESULTS.read_text(encoding="utf-8")
    if start in text:
        before, _, rest = text.partition(start)
        _, _, after = rest.partition(end + "\n")
        text = before + section + after
    else:
        text = text.rstrip("\n") + f"\n\n## {heading}\n\n" + section
    RESULTS.write_text(text, encoding="utf-8")


def publish(text: str, write: bool) -> None:
    print(text)
    if write:
        with open(RESULTS, "a", encoding="utf-8") as handle:
            handle.write("\n" + text)
