"""Proof by execution: each fixable rule example, run as written under the release it names first
(``Example.versions[0]``, default torch 2.13.0) and as fixed under the target (default 2.14.1),
computes the same values bit for bit (dtype, shape, bytes, gradients).

Inputs (``A``, ``B``) come in several variants, including a non-Hermitian one for ``upper=True``,
complex, batched, wide and empty matrices; each runs with and without gradients. CI has 2.13.0 and
2.14.1 only: an example that names another release is skipped here, with the command that runs it
(tools/run_examples.py, whose results are docs/proofs.md, checked by tests/test_proofs.py).
"""

from __future__ import annotations

import re
import textwrap
from typing import Any

import pytest

from differential.envs import TORCH_VERSIONS, ensure_env
from differential.harness import BREAKING, cases, changed, differences, pairs, params, probe, skip_reason, strip_floats
from helpers import fix
from torchup.api import check_source
from torchup.core.facts import FACTS
from torchup.rules import all_rules, rule_by_code

pytestmark = pytest.mark.differential

CASES = cases(all_rules(), fix)
INEXACT = {f"{rule.code}-{example.title}" for rule in all_rules() for example in rule.examples if not example.bit_exact}


@pytest.fixture(scope="module")
def runs() -> dict[str, dict[str, Any]]:
    """The CI-runnable cases, each pair of releases probed once: original on the old release, fixed
    and (the control) original on the target."""
    results: dict[str, dict[str, Any]] = {"old": {}, "new": {}, "unfixed": {}, "floor": {}}
    for (before, target), chosen in pairs(c for c in CASES.values() if skip_reason(c) is None).items():
        old = probe(ensure_env(before), {c.case: c.source for c in chosen})
        new = probe(ensure_env(target), {c.case: c.fixed for c in chosen})
        unfixed = probe(ensure_env(target), {c.case: c.source for c in chosen})
        floor = probe(ensure_env(before), {c.case: c.fixed for c in chosen})
        assert old["torch"].startswith(before) and new["torch"].startswith(target)
        results["old"].update(old["results"])
        results["new"].update(new["results"])
        results["unfixed"].update(unfixed["results"])
        results["floor"].update(floor["results"])
    return results


def test_examples_exist() -> None:
    codes = {c.code for c in CASES.values() if skip_reason(c) is None}
    assert {"TU101", "TU102", "TU103", "TU104", "TU110", "TU120", "TU130"} <= codes


@pytest.mark.parametrize("case", params(CASES))
def test_fixed_code_on_2_14_matches_original_on_2_13(runs: dict[str, dict[str, Any]], case: str) -> None:
    assert_same_results(case, runs["old"][case], runs["new"][case])


def assert_same_results(case: str, old: dict[str, Any], new: dict[str, Any]) -> None:
    """What ran under 2.13 computes the same under 2.14, and what raised raises the same error."""
    problems = differences(old, new, bit_exact=case not in INEXACT)
    assert not problems, "; ".join(problems)


@pytest.mark.parametrize("case", params(CASES))
def test_fixed_code_on_the_floor_matches_the_original_there(runs: dict[str, dict[str, Any]], case: str) -> None:
    """A fix holds on the whole window: under the example's first release (the floor of a project
    that runs there), the fixed code computes what the original did. Where it cannot, because the fix
    writes what only a newer release has, torchup must know it (torchup.analysis.fix_window): checked
    with that floor, the finding keeps no fix and says what it needs."""
    problems = differences(runs["old"][case], runs["floor"][case], bit_exact=case not in INEXACT)
    if not problems:
        return
    chosen = CASES[case]
    floor = ".".join(chosen.versions[0].split(".")[:2])
    found = [d for d in check_source(chosen.source, path="snippet.py", select=[chosen.code], from_version=floor)
             if d.code == chosen.code]
    assert found and all(d.fix is None and any("fix needs torch>=" in note for note in d.notes) for d in found), (
        f"the fix does not run on torch {chosen.versions[0]} ({'; '.join(problems)}), yet torchup offers it "
        f"to a project whose floor is {floor}: add what it writes to torchup/data/introduced.json"
    )


def control_params() -> list[Any]:
    """The control's cases: a rule whose change leaves the original working (a deprecation, a
    move) is skipped, saying so."""
    return [
        pytest.param(p, marks=pytest.mark.skip(reason=f"{CASES[p].code} {CASES[p].change}: the original still runs"))
        if isinstance(p, str) and CASES[p].change not in BREAKING else p
        for p in params(CASES)
    ]


@pytest.mark.parametrize("case", control_params())
def test_original_code_breaks_on_2_14(runs: dict[str, dict[str, Any]], case: str) -> None:
    """The control: without the fix, 2.14 fails, or computes something else (a gradient), where
    2.13 worked, so the rule is needed (for a change that raises or behaves differently)."""
    assert changed(runs["old"][case], runs["unfixed"][case]), "the original behaves the same on 2.14"


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


def test_the_require_grad_fix_does_what_the_typo_meant() -> None:
    """TU701 reports a mistake, not a release's change: its fix changes the result on purpose. Under
    the target, the module example's original leaves every parameter trainable; the fixed code
    (`requires_grad_`, not an attribute) freezes them."""
    example = next(e for e in rule_by_code("TU701").examples if "module" in e.title)  # type: ignore[union-attr]
    source = textwrap.dedent(example.source)
    fixed = fix(source, unsafe=True, select=["TU701"])
    assert fixed == textwrap.dedent(example.fixed or "")
    results = probe(ensure_env(TORCH_VERSIONS[-1]), {"original": source, "fixed": fixed})["results"]
    for variant, record in results["original"].items():
        assert record["ok"] and record["values"]["frozen"] == "False", variant
        assert results["fixed"][variant]["values"]["frozen"] == "True", variant


def test_a_state_dict_loads_the_same_with_weights_only() -> None:
    """TU601's fix where the loaded object goes to `load_state_dict`: `weights_only=True`, which
    loads a state dict of tensors as the original did, on both releases CI has."""
    example = next(e for e in rule_by_code("TU601").examples if "load_state_dict" in e.title)  # type: ignore[union-attr]
    source = textwrap.dedent(example.source)
    fixed = fix(source, unsafe=True, select=["TU601"])
    assert fixed == textwrap.dedent(example.fixed or "") and "weights_only=True" in fixed
    runs = {version: probe(ensure_env(version), {"original": source, "fixed": fixed})["results"]
            for version in TORCH_VERSIONS}
    reference = runs[TORCH_VERSIONS[0]]["original"]
    for version, results in runs.items():
        for case in ("original", "fixed"):
            assert all(record["ok"] for record in results[case].values()), (version, case)
            assert_same_results(f"TU601-{version}-{case}", reference, results[case])
