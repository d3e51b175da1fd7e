"""Proof by execution: each fixable rule example, run as written under torch 2.13.0 and as fixed
under torch 2.14.1, computes the same values bit for bit (dtype, shape, bytes, gradients).

Inputs (``A``, ``B``) come in several variants, including a non-Hermitian one for ``upper=True``,
complex, batched, wide and empty matrices; each runs with and without gradients.
"""

from __future__ import annotations

import json
import math
import re
import subprocess
import textwrap
from pathlib import Path
from typing import Any

import pytest

from differential.envs import ensure_env
from helpers import fix
from torchup.core.facts import FACTS
from torchup.rules import all_rules

PROBE = Path(__file__).parent / "differential" / "probe.py"

EXAMPLES = {
    f"{rule.code}-{example.title}": (example.source, fix(example.source, unsafe=example.unsafe, select=[rule.code]))
    for rule in all_rules()
    for example in rule.examples
    if example.fixed is not None and example.executable
}
INEXACT = {
    f"{rule.code}-{example.title}" for rule in all_rules() for example in rule.examples if not example.bit_exact
}


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
            pairs = zip(before["floats"], after["floats"], strict=False)
            return before["dtype"] == after["dtype"] and before["shape"] == after["shape"] and all(
                math.isclose(a, b, rel_tol=1e-5, abs_tol=1e-6) for a, b in pairs
            ) and (before["floats"] or before["hex"] == after["hex"])
        return all(close(before[k], after[k]) for k in before)
    if isinstance(before, list) and isinstance(after, list):
        return len(before) == len(after) and all(close(a, b) for a, b in zip(before, after, strict=True))
    return before == after

pytestmark = pytest.mark.differential


def probe(python: Path, cases: dict[str, str]) -> dict[str, Any]:
    completed = subprocess.run(
        [str(python), str(PROBE)],
        input=json.dumps({"cases": cases}),
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert completed.returncode == 0, completed.stderr[-3000:]
    return json.loads(completed.stdout)


@pytest.fixture(scope="module")
def runs() -> dict[str, dict[str, Any]]:
    old = probe(ensure_env("2.13.0"), {case: source for case, (source, _) in EXAMPLES.items()})
    new = probe(ensure_env("2.14.1"), {case: fixed for case, (_, fixed) in EXAMPLES.items()})
    unfixed = probe(ensure_env("2.14.1"), {case: source for case, (source, _) in EXAMPLES.items()})
    assert old["torch"].startswith("2.13.0") and new["torch"].startswith("2.14.1")
    return {"old": old["results"], "new": new["results"], "unfixed": unfixed["results"]}


def test_examples_exist() -> None:
    codes = {case.split("-", 1)[0] for case in EXAMPLES}
    assert {"TU101", "TU102", "TU103", "TU104", "TU110", "TU120", "TU130"} <= codes


@pytest.mark.parametrize("case", sorted(EXAMPLES))
def test_fixed_code_on_2_14_matches_original_on_2_13(runs: dict[str, dict[str, Any]], case: str) -> None:
    assert_same_results(case, runs["old"][case], runs["new"][case])


def assert_same_results(case: str, old: dict[str, Any], new: dict[str, Any]) -> None:
    """What ran under 2.13 computes the same under 2.14, and what raised raises the same error."""
    succeeded = 0
    for variant, before in old.items():
        after = new[variant]
        if before["ok"]:
            assert after["ok"], f"{variant}: the fixed code raised {after.get('error')}: {after.get('message')}"
            if case in INEXACT:
                assert close(before["values"], after["values"]), f"{variant}: results differ beyond 1e-5"
            else:
                assert strip_floats(after["values"]) == strip_floats(before["values"]), f"{variant}: bits differ"
            succeeded += 1
        else:
            assert not after["ok"] and after["error"] == before["error"], f"{variant}: {before} vs {after}"
    assert succeeded, "no input variant ran: the comparison would prove nothing"


@pytest.mark.parametrize("case", sorted(EXAMPLES))
def test_original_code_breaks_on_2_14(runs: dict[str, dict[str, Any]], case: str) -> None:
    """The control: without the fix, 2.14 fails, or computes something else (a gradient), where
    2.13 worked, so the rule is needed."""
    old, unfixed = runs["old"][case], runs["unfixed"][case]

    def changed(variant: str) -> bool:
        before, after = old[variant], unfixed[variant]
        return before["ok"] and (not after["ok"] or strip_floats(after["values"]) != strip_floats(before["values"]))

    assert any(changed(v) for v in old), "the original behaves the same on 2.14"


def test_harness_catches_the_mH_rewrite() -> None:
    """The rewrite TorchFix and the 2.14 error message suggest differs on non-Hermitian input."""
    old = probe(ensure_env("2.13.0"), {"c": "import torch\nU = torch.cholesky(A, upper=True)\n"})
    new = probe(ensure_env("2.14.1"), {"c": "import torch\nU = torch.linalg.cholesky(A).mH\n"})
    variant = "float32-non-hermitian"
    assert old["results"]["c"][variant]["ok"] and new["results"]["c"][variant]["ok"]
    assert strip_floats(old["results"]["c"][variant]["values"]) != strip_floats(new["results"]["c"][variant]["values"])


# TU105 fixes some functions gone since torch 1.2, whose originals cannot run on 2.13. torch 1.1.0,
# the last release that had them, defined each as one call of a function 2.13 still has
# (torch/functional.py:874, 907; torch/tensor.py:261, 304: the "evidence" in torch_api.json). Each
# such example, spelled as those definitions, runs under 2.13 against its fix under 2.14.
LAST_DEFINITIONS = {
    "TU105-btrifact and btriunpack": """
        import torch
        LU, pivots = torch.lu(A, pivot=True, get_infos=False)
        P, L, U = torch.lu_unpack(LU_data=LU, LU_pivots=pivots, unpack_data=True, unpack_pivots=True)
        """,
    "TU105-methods of an evident tensor": """
        import torch
        M = torch.as_tensor(A)
        LU, pivots, info = torch._lu_with_info(M, pivot=True, check_errors=False)
        U = M.cholesky(upper=True)
        """,
}
TU105_EXAMPLES = {
    f"{rule.code}-{example.title}": example for rule in all_rules() if rule.code == "TU105" for example in rule.examples
}
_GONE = sorted({name.rsplit(".", 1)[1] for name, facts in FACTS["removed"].items() if facts.get("absent")})
ABSENT = re.compile(rf"\b({'|'.join(_GONE)})\b")


def test_every_fix_of_a_long_gone_function_has_its_last_definition() -> None:
    unproven = [case for case, example in TU105_EXAMPLES.items()
                if example.fixed and ABSENT.search(example.source) and case not in LAST_DEFINITIONS]
    assert not unproven and set(LAST_DEFINITIONS) <= set(TU105_EXAMPLES), unproven


@pytest.fixture(scope="module")
def last_definition_runs() -> dict[str, dict[str, Any]]:
    fixed = {case: fix(TU105_EXAMPLES[case].source, unsafe=True, select=["TU105"]) for case in LAST_DEFINITIONS}
    assert all(fixed[case] == TU105_EXAMPLES[case].fixed for case in LAST_DEFINITIONS)
    old = probe(ensure_env("2.13.0"), {case: textwrap.dedent(source) for case, source in LAST_DEFINITIONS.items()})
    new = probe(ensure_env("2.14.1"), fixed)
    return {"old": old["results"], "new": new["results"]}


@pytest.mark.parametrize("case", sorted(LAST_DEFINITIONS))
def test_fix_on_2_14_matches_the_last_definition_on_2_13(
    last_definition_runs: dict[str, dict[str, Any]], case: str
) -> None:
    assert_same_results(case, last_definition_runs["old"][case], last_definition_runs["new"][case])
