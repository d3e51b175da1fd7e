"""TorchFix's codes, understood where a TorchFix user has them (issue 23): `--select TOR102`,
`--select TOR0,TOR1`, `--ignore TOR4`, the same in `[tool.torchup]`, and `# noqa: TOR102`. Each
stands for the torchup rules that report what it did (torchup/data/torchfix.toml, docs/torchfix.md).
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from functools import cache

from torchup.core.data import data_text

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

PREFIX = "TOR"


@cache
def table() -> dict[str, dict[str, object]]:
    """TorchFix code -> {title, torchup (codes), note?, missing?}."""
    text = data_text("torchfix.toml")
    return tomllib.loads(text)


def is_torchfix(selector: str) -> bool:
    return selector.strip().upper().startswith(PREFIX)


def torchfix_codes(selector: str) -> list[str]:
    """The TorchFix codes a selector names (`TOR1` -> TOR101 ... TOR108)."""
    wanted = selector.strip().upper()
    return [code for code in table() if code.startswith(wanted)]


def torchup_codes(selector: str) -> list[str]:
    """The torchup codes that report what the TorchFix codes of ``selector`` did."""
    found: list[str] = []
    for code in torchfix_codes(selector):
        found += [c for c in table()[code]["torchup"] if c not in found]  # type: ignore[union-attr]
    return found


def translate(selectors: Sequence[str], option: str) -> list[str]:
    """``selectors`` with TorchFix codes replaced by torchup's. A TorchFix code torchup has no
    rule for, alone, is an error that says so (one a broader prefix covers is passed over)."""
    out: list[str] = []
    for selector in selectors:
        if not is_torchfix(selector):
            out.append(selector)
            continue
        codes = torchfix_codes(selector)
        if not codes:
            known = ", ".join(table())
            raise ValueError(f"{option} {selector!r} names no TorchFix code; TorchFix's codes: {known}")
        mapped = torchup_codes(selector)
        if not mapped:
            missing = "; ".join(f"{code} ({table()[code]['title']})" for code in codes)
            raise ValueError(f"{option} {selector!r}: torchup has no rule for {missing} yet (docs/torchfix.md)")
        out += mapped
    return out


def notes(selectors: Sequence[str]) -> list[str]:
    """One line per TorchFix selector: the torchup codes it stands for, and what it leaves out."""
    lines = []
    for selector in selectors:
        if not is_torchfix(selector) or not torchfix_codes(selector):
            continue
        mapped = torchup_codes(selector)
        missing = [code for code in torchfix_codes(selector) if not table()[code]["torchup"]]
        line = f"TorchFix's {selector.strip().upper()} is torchup's {', '.join(mapped) or 'nothing yet'}"
        if missing and mapped:
            line += f" (no torchup rule yet for {', '.join(missing)})"
        lines.append(line + " (docs/torchfix.md)")
    return lines


def noqa_notes(by_path: Mapping[str, Sequence[str]]) -> list[str]:
    """One line per TorchFix code whose `# noqa` silenced a finding (``by_path``: the codes of each
    file): the torchup codes it was read as, and where."""
    files: dict[str, list[str]] = {}
    for path, codes in sorted(by_path.items()):
        for code in codes:
            files.setdefault(code, []).append(path)
    lines = []
    for code, paths in sorted(files.items()):
        where = paths[0] if len(paths) == 1 else f"{paths[0]} and {len(paths) - 1} more file{'s' * (len(paths) > 2)}"
        lines.append(f"`# noqa: {code}` in {where} silenced a finding: TorchFix's {code} is torchup's "
                     f"{', '.join(torchup_codes(code))} (docs/torchfix.md)")
    return lines
