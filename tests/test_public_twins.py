"""TU705's data (torchup/data/public_twins.json, made by tools/public_twins.py): every pair is a
private path and a public one, and names one object in each torch release CI installs."""

from __future__ import annotations

import pytest

from differential.envs import TORCH_VERSIONS, ensure_env
from helpers import check, load_script
from torchup.rules.tu705_private_alias import RULE, twins


def _private(path: str) -> bool:
    return any(part.startswith("_") for part in path.split("."))


def test_each_pair_is_a_private_path_and_a_public_one() -> None:
    pairs = twins()
    assert len(pairs) > 500  # (the wheels show some 900; a run drops what stubs alone claim)
    for private, pair in pairs.items():
        assert _private(private) and not _private(pair["public"]), private
        assert pair["since"] in {f"2.{minor}" for minor in range(16)}
    assert pairs["torch.utils.data._utils.collate.default_collate"]["public"] == "torch.utils.data.default_collate"
    assert RULE.renames == {private: pair["public"] for private, pair in pairs.items()}


def test_every_private_path_spells_a_word_the_rule_is_looked_for_by() -> None:
    """The rule is looked for by its private modules' words (`_utils`, `_C`), not by the last words
    of its names: each name's path holds one of them."""
    words = set(RULE.triggers)
    for private in twins():
        assert words & set(private.split(".")), private


@pytest.mark.parametrize(
    ("code", "found"),
    [
        ("import torch\ng = torch._C.Generator()\n", ["TU705"]),
        ("from torch._C import Generator\n\ndef f():\n    return Generator()\n", ["TU705", "TU705"]),
        ("import torch.utils.data._utils.collate as C\n\ndef f(b):\n    return C.default_collate(b)\n", ["TU705"]),
        ("import torch\ng = torch.Generator()\nstate = torch._C._get_tracing_state()\n", []),
    ],
)
def test_references_through_any_import_form(code: str, found: list[str]) -> None:
    assert [d.code for d in check(code, ["TU705"])] == found
    assert [d.code for d in check(code, ["TU705"], prefilter=False)] == found


@pytest.mark.differential
@pytest.mark.parametrize("version", TORCH_VERSIONS)
def test_each_pair_names_one_object_when_torch_runs(version: str) -> None:
    tool = load_script("tools/public_twins.py", "public_twins_tool")
    pairs = {private: pair["public"] for private, pair in twins().items()}
    release, same = tool.confirmed_by(ensure_env(version), pairs)
    assert release == version
    assert sorted(set(pairs) - same) == []
