"""The end-of-run report of ``torchup trace``: text for people, JSON for tools."""

from __future__ import annotations

import json
import os
from typing import Any

from torchup.trace.monitor import Finding

_BOUND_ADVICE = {
    "scalar": "scalar bound: in torch 2.14 these elements get gradient 0 instead of 1",
    "tensor": "tensor bound: in torch 2.14 these elements pass 0.5 of the gradient to the input and 0.5 to the bound",
}


def _where(finding: Finding) -> str:
    path = finding.site.path
    try:
        relative = os.path.relpath(path)
        path = relative if not relative.startswith("..") else path
    except ValueError:
        pass
    return f"{path}:{finding.site.line}"


def describe(finding: Finding) -> str:
    calls = f"{finding.calls} call{'s' * (finding.calls != 1)}"
    if finding.code == "TU201":
        if not finding.elements_on_bound:
            return ""
        kinds = "; ".join(_BOUND_ADVICE[k] for k in sorted(finding.bound_kinds))
        return (
            f"{finding.api}: {calls}, {finding.calls_on_bound} with elements exactly on a bound; "
            f"{finding.elements_on_bound:,} of {finding.elements:,} elements ({finding.share:.2%}). {kinds}. "
            'To keep 2.13\'s gradient: torchup.compat.clamp(..., boundary_grad="legacy")'
        )
    if finding.code == "TU202":
        if not finding.elements_on_bound:
            return ""
        return (
            f"{finding.api}: {calls}, {finding.calls_on_bound} with ties or NaN operands; "
            f"{finding.elements_on_bound:,} of {finding.elements:,} elements ({finding.share:.2%}). {finding.message}"
        )
    return f"{finding.api}: {calls}. {finding.message}"


def reportable(findings: list[Finding]) -> list[tuple[Finding, str]]:
    rows = [(finding, describe(finding)) for finding in findings]
    return [(finding, text) for finding, text in rows if text]


def render_text(findings: list[Finding], target: str) -> str:
    import torch

    rows = reportable(findings)
    header = f"torchup trace (torch {torch.__version__}, target {target})"
    if not rows:
        return f"\n{header}: no call in this run hits a torch 2.14 change.\n"
    lines = ["", f"{header}: {len(rows)} finding{'s' * (len(rows) != 1)}"]
    for finding, text in rows:
        lines.append(f"{_where(finding)}: {finding.code} {text}")
    return "\n".join(lines) + "\n"


def to_json(finding: Finding, text: str) -> dict[str, Any]:
    return {
        "code": finding.code,
        "api": finding.api,
        "path": finding.site.path,
        "line": finding.site.line,
        "function": finding.site.function,
        "calls": finding.calls,
        "calls_on_bound": finding.calls_on_bound,
        "elements_on_bound": finding.elements_on_bound,
        "elements": finding.elements,
        "share": finding.share,
        "bound_kinds": sorted(finding.bound_kinds),
        "message": text,
    }


def write_json(path: str, findings: list[Finding], exit_code: int) -> None:
    import torch

    document = {
        "torch": torch.__version__,
        "exit_code": exit_code,
        "findings": [to_json(finding, text) for finding, text in reportable(findings)],
    }
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(document, handle, indent=2)
        handle.write("\n")
