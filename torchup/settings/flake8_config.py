"""TorchFix's codes in a flake8 configuration (`[flake8]` of `setup.cfg`, `tox.ini` or `.flake8`).

TorchFix ran as a flake8 plugin, so its users chose its checks there: `select = E,F,TOR`,
`extend-ignore = TOR102`, `per-file-ignores = tests/*: TOR901`. Where no torchup configuration is
nearer, a `[flake8]` section that names TorchFix's codes is torchup's configuration, read so:

- `select` and `extend-select`: the TorchFix codes in them add the torchup rules that report the
  same (`extend-select`: flake8's `select` names other tools' codes too, so it cannot mean "only
  these" for torchup, whose own default rules stay on);
- `ignore` and `extend-ignore`: their TorchFix codes turn those rules off;
- `per-file-ignores`: the TorchFix codes of each pattern, for the files it matches.

Codes of other plugins are passed over; a TorchFix code torchup has no rule for yet is passed over
with a note (flake8 read it; it should not stop torchup). A section without any TorchFix code is no
torchup configuration: the search goes on up the tree.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from torchup.core import torchfix

FLAKE8_FILE_NAMES = ("setup.cfg", "tox.ini", ".flake8")  # flake8's own order in a directory
_TOKEN = re.compile(r"[^\s,:]+|:")


def read_flake8(path: Path) -> tuple[dict[str, Any], tuple[str, ...]] | None:
    """The torchup settings a `[flake8]` section's TorchFix codes make (as `Settings` fields), and
    notes for the codes passed over; None where the file has no such section or no TorchFix code."""
    import configparser  # (here: only a directory with one of these files pays for it)

    parser = configparser.RawConfigParser()
    try:
        parser.read_string(path.read_text(encoding="utf-8"), source=str(path))
    except (OSError, UnicodeDecodeError, configparser.Error):
        return None  # (flake8 reports its own configuration's problems; it is not torchup's)
    if not parser.has_section("flake8"):
        return None
    section = {key.replace("_", "-"): value for key, value in parser.items("flake8")}
    notes: list[str] = []
    selected = _torchfix_codes(section.get("select", "") + " " + section.get("extend-select", ""), notes)
    ignored = _torchfix_codes(section.get("ignore", "") + " " + section.get("extend-ignore", ""), notes)
    per_file = tuple(
        (glob, codes) for glob, raw in _per_file(section.get("per-file-ignores", ""))
        if (codes := _torchfix_codes(" ".join(raw), notes))
    )
    if not (selected or ignored or per_file or notes):
        return None
    fields: dict[str, Any] = {}
    if selected:
        fields["extend_select"] = selected
    if ignored:
        fields["ignore"] = ignored
    if per_file:
        fields["per_file_ignores"] = per_file
    notes.insert(0, f"TorchFix's codes read from [flake8] in {path}")
    return fields, tuple(dict.fromkeys(notes))


def _torchfix_codes(value: str, notes: list[str]) -> tuple[str, ...]:
    """The TorchFix codes of a flake8 list (commas or white space), those torchup has rules for."""
    found = []
    for token in _TOKEN.findall(value):
        code = token.upper()
        if token == ":" or not torchfix.is_torchfix(code):
            continue
        if not torchfix.torchfix_codes(code):
            notes.append(f"{code} in [flake8] names no TorchFix code: passed over")
        elif not torchfix.torchup_codes(code):
            notes.append(f"{code} in [flake8]: torchup has no rule for it yet (docs/torchfix.md): passed over")
        else:
            found.append(code)
    return tuple(dict.fromkeys(found))


def _per_file(value: str) -> list[tuple[str, list[str]]]:
    """flake8's `per-file-ignores`: `pattern: codes` pairs, one or more to a line (a token followed
    by `:` starts a pattern; the codes run to the next pattern)."""
    tokens = _TOKEN.findall(value)
    pairs: list[tuple[str, list[str]]] = []
    index = 0
    while index < len(tokens):
        if index + 1 < len(tokens) and tokens[index + 1] == ":" and tokens[index] != ":":
            pairs.append((tokens[index], []))
            index += 2
            continue
        if pairs and tokens[index] != ":":
            pairs[-1][1].append(tokens[index])
        index += 1
    return pairs
