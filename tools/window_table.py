#!/usr/bin/env python3
"""The README's table of what runs by default for the floors of most projects.

    python3 tools/window_table.py            # rewrite the table in README.md
    python3 tools/window_table.py --check    # exit 1 when README.md's table is not current

For each floor: how many rules run by default (``Rule.on_by_default`` for that floor, and the target,
2.15, still has the change: ``applies_to_release``), and which of them report a silent change (of
behaviour, a move): those are the ones the floor turns off once it reaches their release.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from torchup.analysis.rule import Change
from torchup.check.checker import applies_to_release
from torchup.rules import all_rules
from torchup.settings.config import KNOWN_RELEASES

FLOORS = ("1.13", "2.0", "2.4", "2.8")
README = Path(__file__).resolve().parent.parent / "README.md"
_TABLE = re.compile(r"(<!-- window-table:[^\n]*-->\n)(.*?)(<!-- /window-table -->)", re.DOTALL)
_SILENT = (Change.BEHAVES, Change.MOVED)


def table(target: str = KNOWN_RELEASES[-1]) -> str:
    lines = ["| floor | rules on by default | changes of behaviour and moves reported |", "|---|---:|---|"]
    for floor in FLOORS:
        on = [rule for rule in all_rules()
              if not rule.engine_emitted and rule.on_by_default(floor) and applies_to_release(rule, target)]
        silent = ", ".join(rule.code for rule in on if rule.change in _SILENT)
        lines.append(f"| {floor} | {len(on)} | {silent or '-'} |")
    return "\n".join(lines) + "\n"


def current(readme: str) -> str:
    match = _TABLE.search(readme)
    if match is None:
        raise SystemExit("README.md has no window-table markers")
    return match.group(2)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args()
    text = README.read_text(encoding="utf-8")
    wanted = table()
    if args.check:
        return 0 if current(text) == wanted else 1
    README.write_text(_TABLE.sub(lambda m: m.group(1) + wanted + m.group(3), text), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
