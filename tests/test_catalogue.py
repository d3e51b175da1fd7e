"""The catalogue family (torchup/data/catalogue.toml, torchup/rules/_catalogue.py): what an entry can
say, and the forms of reference each rule finds and rewrites."""

from __future__ import annotations

import ast
import textwrap

import pytest

from helpers import check, fix
from torchup.analysis.rule import Change
from torchup.rules import all_rules
from torchup.rules._catalogue import CallTemplate, load_entries


def dedent(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


def lines(source: str, select: str) -> list[int]:
    return [d.line for d in check(dedent(source), select=[select])]


def test_every_entry_is_complete_and_a_registered_rule() -> None:
    codes = {rule.code for rule in all_rules()}
    seen = set()
    for entry in load_entries():
        assert entry.code not in seen and entry.code in codes
        seen.add(entry.code)
        assert entry.names or entry.modules or entry.keywords, entry.code
        assert entry.evidence and entry.why and entry.what, entry.code
        assert any(example.findings for example in entry.examples), f"{entry.code}: no positive example"
        for old, template in entry.calls.items():
            assert template.call.startswith(("torch.", "math.")), old
        assert isinstance(entry.change, Change)


def test_a_template_binds_positional_and_keyword_arguments() -> None:
    template = CallTemplate(("b", "LU_data", "LU_pivots"), "torch.linalg.lu_solve", "{LU_data}, {LU_pivots}, {b}")
    call = ast.parse("torch.lu_solve(B, LU_pivots=p, LU_data=lu)").body[0].value  # type: ignore[attr-defined]
    bound = template.bind(call, ast.unparse)
    assert bound is not None and template.render(bound) == "lu, p, B"


def test_a_template_reorders_only_plain_arguments() -> None:
    template = CallTemplate(("b", "LU_data", "LU_pivots"), "torch.linalg.lu_solve", "{LU_data}, {LU_pivots}, {b}")
    call = ast.parse("torch.lu_solve(make_b(), LU, piv)").body[0].value  # type: ignore[attr-defined]
    assert template.bind(call, ast.unparse) is None  # make_b() would run after LU and piv


def test_an_argument_the_template_has_no_place_for_means_no_rewrite() -> None:
    template = CallTemplate(("A", "pivot"), "torch.linalg.lu_factor", "{A}, pivot={pivot?}")
    assert template.render({"A": ["A"]}) == "A"
    assert template.render({"A": ["A"], "pivot": ["False"]}) == "A, pivot=False"
    call = ast.parse("torch.lu(A, get_infos=True)").body[0].value  # type: ignore[attr-defined]
    assert template.bind(call, ast.unparse) is None


def test_star_parameters_and_their_minimum() -> None:
    source = "import torch\ny = torch.chain_matmul(A)\nz = torch.chain_matmul(A, B, out=C)\n"
    # one matrix: reported, not rewritten; a keyword-only parameter after the star one is kept
    assert fix(source, select=["TU624"]) == source.replace("chain_matmul(A, B, out=C)", "linalg.multi_dot([A, B], out=C)")
    assert lines(source, "TU624") == [2, 3]
    assert fix("import torch\nz = torch.chain_matmul(A, B, C, dim=0)\n", select=["TU624"]).count("chain_matmul") == 1


def test_a_from_import_mixing_a_move_and_a_name_without_twin_is_not_rewritten() -> None:
    source = "from functorch import vmap, make_functional\ny = vmap(f)\n"
    assert fix(source, select=["TU620"]) == source
    assert lines(source, "TU620") == [1, 1, 2]


def test_a_call_through_a_from_import_names_the_new_function_and_drops_the_old_import() -> None:
    source = dedent("""
        from torch.utils._pytree import _register_pytree_node
        _register_pytree_node(T, flat, unflat)
    """)
    assert fix(source, unsafe=True, select=["TU623"]) == dedent("""
        import torch
        torch.utils._pytree.register_pytree_node(T, flat, unflat)
    """)


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("import functools\nimport functorch\nf = functools.partial(functorch.vmap, in_dims=1)\n", [3]),
        ("import functorch\nclass Mine:\n    transform = functorch.grad\n", [3]),
        ("import torch\nimport torch._six as six\nx = six.inf\n", [2, 3]),
        ("from torch import _six\n", [1]),
        ("import torch.distributed._tensor as dt\ndef f(t: dt.DTensor) -> None: ...\n", [2]),
    ],
)
def test_every_reference_counts(source: str, expected: list[int]) -> None:
    select = "TU62"
    assert lines(source, select) == expected


@pytest.mark.parametrize(
    "source",
    [
        "import jax\ny = jax.vmap(f)\n",
        "from torch.func import vmap\ny = vmap(f)\n",
        "def vmap(f):\n    return f\ny = vmap(abs)\n",
        "import numpy as np\nlu = np.linalg.lu\nx = torch.linalg.lu_factor(A)\n",
        "import scipy.linalg\nP, L, U = scipy.linalg.lu(a)\n",
        "import torch\nx = [i for i in range(3)]\n",
        "from math import inf\nx = inf\n",
    ],
)
def test_look_alikes_are_not_reported(source: str) -> None:
    assert lines(source, "TU62") == []


def test_a_mock_of_a_moved_function_changes_with_its_uses() -> None:
    source = dedent("""
        from unittest import mock
        import torch
        import functorch

        def test_it():
            with mock.patch("functorch.vmap") as fake:
                functorch.vmap(f)
    """)
    found = check(source, select=["TU620"])
    assert [d.line for d in found] == [6, 7]


@pytest.mark.parametrize(("code", "call"), [
    ("TU624", "torch.chain_matmul(A,  # the left factor\n    B)"),
    ("TU625", "torch.range(0,  # from\n    10)"),
    ("TU711", "torch.log(1 + x  # small\n)"),
])
def test_a_call_rewritten_whole_keeps_its_comment_by_not_being_rewritten(code: str, call: str) -> None:
    """Rewriting a whole call would drop a comment inside it: reported, no fix, safe or unsafe."""
    source = f"import torch\nx = torch.rand(3)\ny = {call}\n"
    assert lines(source, code) == [3]
    assert fix(source, select=[code], unsafe=True) == source


@pytest.mark.parametrize("code, source, fixed", [
    ("TU639", "from torch.utils.dlpack import DLDeviceType\ncode = DLDeviceType.kDLGPU\n",
     "from torch.utils.dlpack import DLDeviceType\ncode = DLDeviceType.kDLCUDA\n"),
    ("TU623", "import torch.utils._pytree as pytree\npytree._register_pytree_node(C, f, g)\n",
     "import torch.utils._pytree as pytree\npytree.register_pytree_node(C, f, g)\n"),
])
def test_a_rename_reached_through_the_same_base_keeps_the_import_of_the_base(code: str, source: str, fixed: str) -> None:
    """The new name is spelled through the old one's base (`DLDeviceType.`, `pytree.`): the fix still
    uses it, so the import that binds it is not dropped as left unused (it was, until session 7)."""
    assert fix(source, unsafe=True, select=[code]) == fixed


def test_a_value_becomes_the_call_of_its_function_except_through_a_from_import() -> None:
    """``values``: `torch.has_cuda` reads what `torch.backends.cuda.is_built()` returns; a name a
    `from` import bound holds the value read at import, which no call replaces in place."""
    source = "import torch\nfrom torch import has_mps\nok = torch.has_cuda or has_mps\n"
    assert [d.code for d in check(source, ["TU640"])] == ["TU640", "TU640", "TU640"]
    assert fix(source, unsafe=True, select=["TU640"]) == (
        "import torch\nfrom torch import has_mps\nok = torch.backends.cuda.is_built() or has_mps\n"
    )


def test_a_renamed_keyword_is_renamed_in_place_unless_the_new_one_is_given_too() -> None:
    """``keywords``: each call that passes the old keyword passes the new one; a call that passes
    both (a TypeError on the old release too) is reported without a fix."""
    source = (
        "from torch.autograd import gradcheck, gradgradcheck\n"
        "a = gradcheck(f, x, check_sparse_nnz=True)\n"
        "b = gradgradcheck(f, x, check_sparse_nnz=True, masked=False)\n"
    )
    assert [d.code for d in check(source, ["TU641"])] == ["TU641", "TU641"]
    assert fix(source, select=["TU641"]) == source.replace("x, check_sparse_nnz=True)", "x, masked=True)")
