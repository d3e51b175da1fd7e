"""What tests/test_differential.py and tools/run_examples.py share: the fixed rule examples, the
releases each runs on, the probe that runs them, and the comparison of two runs.

An example's original runs under ``versions[0]`` (the release before the change, or an older one),
its fix under ``versions[1]`` (the target). CI has two releases installed (envs.TORCH_VERSIONS); an
example that needs any other runs by the maintainer command only, and its result is committed in
docs/proofs.md (tests/test_proofs.py fails when that is missing or stale).
"""

from __future__ import annotations

import hashlib
import json
import math
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from differential.envs import TORCH_VERSIONS, release

if TYPE_CHECKING:
    from collections.abc import Iterable

    from torchup.analysis.rule import Example, Rule

PROBE = Path(__file__).parent / "probe.py"
COMMAND = "python3 tools/run_examples.py"


@dataclass(frozen=True)
class Case:
    """One fixed, executable rule example, as the harness runs it."""

    case: str  # "TU101-title": the test id and the key of docs/proofs.md
    code: str
    rule: str  # the rule's name
    change: str  # what the release does to the original (Rule.change: "raises", "warns", ...)
    title: str  # the example's
    source: str
    fixed: str  # what `fix` makes of source (tests/test_rule_examples.py: equal to Example.fixed)
    versions: tuple[str, str]  # full releases: (original, fixed)
    bit_exact: bool
    fingerprint: str  # changes when the example does: a proof of another text is stale


def fingerprint(example: Example) -> str:
    text = json.dumps([example.source, example.fixed, list(example.versions), example.bit_exact])
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def cases(rules: Iterable[Rule], fix: Any) -> dict[str, Case]:
    """The examples with a fix that can run stand-alone; ``fix(source, unsafe=, select=)`` fixes one."""
    found = {}
    for rule in rules:
        for example in rule.examples:
            if example.fixed is None or not example.executable:
                continue
            case = f"{rule.code}-{example.title}"
            found[case] = Case(
                case=case,
                code=rule.code,
                rule=rule.name,
                change=rule.change.value,
                title=example.title,
                source=example.source,
                fixed=fix(example.source, unsafe=example.unsafe, select=[rule.code]),
                versions=(release(example.versions[0]), release(example.versions[1])),
                bit_exact=example.bit_exact,
                fingerprint=fingerprint(example),
            )
    return found


def ci_runs(versions: tuple[str, str]) -> bool:
    """Whether CI has both releases (full versions) installed."""
    return all(v in TORCH_VERSIONS for v in versions)


def skip_reason(case: Case) -> str | None:
    """None where CI runs the example; otherwise why not, and the command that does."""
    if ci_runs(case.versions):
        return None
    return (
        f"runs under torch {case.versions[0]} and {case.versions[1]}; CI has {' and '.join(TORCH_VERSIONS)} only: "
        f"`{COMMAND} --codes {case.code}` runs it and writes docs/proofs.md"
    )


# The changes after which the original, unfixed, must fail or compute something else on the target
# (the control); a deprecation, a move or a new feature leaves it working.
BREAKING = frozenset({"raises", "behaves differently"})


def params(chosen: dict[str, Case]) -> list[Any]:
    """pytest parameters, one a case: a case whose releases CI does not have is skipped, saying why
    and how to run it."""
    import pytest  # only the tests need it, not the maintainer command

    return [
        pytest.param(case, marks=pytest.mark.skip(reason=reason)) if (reason := skip_reason(c)) else case
        for case, c in sorted(chosen.items())
    ]


def pairs(chosen: Iterable[Case]) -> dict[tuple[str, str], list[Case]]:
    """The cases by the two releases they run on, oldest original first."""
    grouped: dict[tuple[str, str], list[Case]] = {}
    for case in chosen:
        grouped.setdefault(case.versions, []).append(case)
    return dict(sorted(grouped.items(), key=lambda item: [tuple(map(int, v.split("."))) for v in item[0]]))


def run_probe(python: Path, snippets: dict[str, str], timeout: float = 900) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(python), str(PROBE)], input=json.dumps({"cases": snippets}), capture_output=True, text=True,
        timeout=timeout,
    )


def probe(python: Path, snippets: dict[str, str]) -> dict[str, Any]:
    """{"torch": version, "results": {case: {variant: record}}}; asserts the probe itself worked."""
    completed = run_probe(python, snippets)
    assert completed.returncode == 0, completed.stderr[-3000:]
    return json.loads(completed.stdout)


def strip_floats(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: strip_floats(v) for k, v in value.items() if k != "floats"}
    if isinstance(value, list):
        return [strip_floats(v) for v in value]
    return value


def close(before: Any, after: Any) -> bool:
    """Same structure, dtypes and shapes; floating values within 1e-5 relative (documented drift)."""
    if isinstance(before, dict) and isinstance(after, dict):
        if before.keys() != after.keys():
            return False
        if "floats" in before:
            both = zip(before["floats"], after["floats"], strict=False)
            return before["dtype"] == after["dtype"] and before["shape"] == after["shape"] and all(
                math.isclose(a, b, rel_tol=1e-5, abs_tol=1e-6) for a, b in both
            ) and (before["floats"] or before["hex"] == after["hex"])
        return all(close(before[k], after[k]) for k in before)
    if isinstance(before, list) and isinstance(after, list):
        return len(before) == len(after) and all(close(a, b) for a, b in zip(before, after, strict=True))
    return before == after


def differences(old: dict[str, Any], new: dict[str, Any], bit_exact: bool = True) -> list[str]:
    """Why the fixed run (``new``) is not the same result as the original (``old``); empty when it
    is: what ran computes the same (bit for bit, or within 1e-5 where not ``bit_exact``), and what
    raised raises the same error. At least one variant must have run, or nothing was proven."""
    problems = []
    succeeded = 0
    for variant, before in old.items():
        after = new.get(variant)
        if after is None:
            problems.append(f"{variant}: the fixed run has no such variant")
        elif before["ok"]:
            if not after["ok"]:
                problems.append(f"{variant}: the fixed code raised {after.get('error')}: {after.get('message')}")
            elif bit_exact and strip_floats(after["values"]) != strip_floats(before["values"]):
                problems.append(f"{variant}: bits differ")
            elif not bit_exact and not close(before["values"], after["values"]):
                problems.append(f"{variant}: results differ beyond 1e-5")
            else:
                succeeded += 1
        elif after["ok"] or after["error"] != before["error"]:
            fixed = "ran" if after["ok"] else f"raised {after['error']}"
            problems.append(f"{variant}: the original raised {before['error']}, the fixed code {fixed}")
    if not succeeded:
        problems.append("no input variant ran: the comparison would prove nothing")
    return problems


def changed(old: dict[str, Any], unfixed: dict[str, Any]) -> list[str]:
    """The control: the variants where the original, run unfixed on the target, fails or computes
    something else where it worked on the older release (empty: the rule is not needed there)."""
    return [
        variant for variant, before in old.items()
        if before["ok"] and variant in unfixed
        and (not unfixed[variant]["ok"] or strip_floats(unfixed[variant]["values"]) != strip_floats(before["values"]))
    ]
