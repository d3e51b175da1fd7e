"""Regressions from adversarial review of the fixer: each input once produced a wrong rewrite."""

from __future__ import annotations

import textwrap

import pytest

from helpers import check, fix


def dedent(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


def test_a_broken_fix_does_not_cancel_the_others() -> None:
    # Inside a double-quoted f-string the fix must use the other quote (before Python 3.12).
    before = 'import torch\ns = f"{torch.qr(A, False)}"\nt = torch.qr(A, False)\n'
    after = "import torch\ns = f\"{torch.linalg.qr(A, mode='complete')}\"\nt = torch.linalg.qr(A, mode=\"complete\")\n"
    assert fix(before) == after


@pytest.mark.parametrize(
    ("call", "expected"),
    [
        ("torch.qr(A, (False))", 'torch.linalg.qr(A, mode="complete")'),
        ("torch.cholesky(A, (flag and other))", "torch.linalg.cholesky(A, upper=(flag and other))"),
        ("torch.cholesky(A, u := True)", "torch.linalg.cholesky(A, upper=(u := True))"),
        ("torch.ones(2, 2).cholesky((True))", "torch.linalg.cholesky(torch.ones(2, 2), upper=(True))"),
    ],
)
def test_parenthesised_and_walrus_positionals(call: str, expected: str) -> None:
    assert fix(f"import torch\nr = {call}\n") == f"import torch\nr = {expected}\n"


@pytest.mark.parametrize(
    ("call", "expected"),
    [
        ("torch.symeig(A, True, x if c else y)", 'torch.linalg.eigh(A, UPLO="U" if (x if c else y) else "L")'),
        ("torch.matrix_rank(A, None)", "torch.linalg.matrix_rank(A)"),
        ("torch.matrix_rank((t := A))", "torch.linalg.matrix_rank((t := A))"),
    ],
)
def test_removed_linalg_arguments_keep_their_meaning(call: str, expected: str) -> None:
    assert fix(f"import torch\nr = {call}\n", unsafe=True) == f"import torch\nr = {expected}\n"


@pytest.mark.parametrize(
    "call",
    [
        "torch.matrix_rank(A, tol)",  # tol may be None at run time: atol=None means something else
        "torch.symeig(A,  # the matrix\n    True)",  # a whole-call rewrite would drop the comment
    ],
)
def test_removed_linalg_without_exact_rewrite(call: str) -> None:
    code = f"import torch\nr = {call}\n"
    assert fix(code, unsafe=True) == code


def test_compile_rename_next_to_the_new_name_is_not_fixed() -> None:
    code = "import torch\nk = torch.compile(m, shapes_spec=s, dynamic_shapes=t)\n"
    (finding,) = check(code, select=["TU130"])
    assert finding.fix is None and fix(code, select=["TU130"]) == code


def test_compile_escaped_dict_key_is_reported_without_a_noop_fix() -> None:
    # The pre-filter cannot see an escaped key (the one place a name is not spelled out): parse all.
    code = 'import torch\nk = torch.compile(m, **{"shapes\\u005fspec": s})\n'
    (finding,) = check(code, select=["TU130"], prefilter=False)
    assert finding.fix is None


def test_profiler_with_kwargs_spread_gets_no_fix() -> None:
    code = "import torch\nopts = {}\nwith torch.autograd.profiler.profile(use_cuda=True, **opts):\n    pass\n"
    (finding,) = check(code, select=["TU110"])
    assert finding.fix is None


@pytest.mark.parametrize(
    "code",
    [
        "import torch\nclass T(torch.Tensor):\n    def qr(self, some=True):\n        return 1\n    def g(self):\n        return self.qr()\n",
        "from . import mathutils\nimport torch\nL = mathutils.cholesky(A)\n",
        'import torch\nq = __import__("torch").qr(A)\n',
        "import torch\nclass M:\n    def qr(self):\n        return 1\nr = M().qr()\n",
    ],
    ids=["subclass-override", "relative-module", "dunder-import", "local-class-instance"],
)
def test_not_tensor_methods(code: str) -> None:
    assert [d for d in check(code, select=["TU102", "TU104"])] == []


@pytest.mark.parametrize(
    ("code", "applicability"),
    [
        ("import torch\nclass P(torch.nn.Parameter):\n    def g(self):\n        return self.cholesky()\n", "safe"),
        ("import torch\nclass T1(torch.Tensor):\n    pass\nclass T2(T1):\n    def g(self):\n        return self.qr()\n", "safe"),
        ('from mylib import Tensor\nimport torch\ndef f(x: "Tensor"):\n    return x.qr()\n', "unsafe"),
        ('import torch\ndef f(x: "torch.Tensor"):\n    return x.qr()\n', "safe"),
        ("import torch\nclass M:\n    pass\nr = (M() * torch.eye(3)).qr()\n", "unsafe"),
    ],
)
def test_method_evidence(code: str, applicability: str) -> None:
    (finding,) = check(code, select=["TU102", "TU104"])
    assert finding.fix is not None and finding.fix.applicability.value == applicability


def test_class_body_import_is_kept() -> None:
    before = "import torch\nclass K:\n    from torch import cholesky\n    L = cholesky(A)\n"
    assert "    from torch import cholesky\n" in fix(before)


def test_torch_bound_only_later_gets_an_import_first() -> None:
    before = "from torch import cholesky\nL = cholesky(A)\nimport torch\n"
    fixed = fix(before)
    assert fixed.index("import torch\n") < fixed.index("torch.linalg.cholesky")


def test_type_checking_import_of_torch_is_not_enough() -> None:
    before = "from typing import TYPE_CHECKING\nfrom torch import cholesky\nif TYPE_CHECKING:\n    import torch\nL = cholesky(A)\n"
    fixed = fix(before)
    assert "L = torch.linalg.cholesky(A)" in fixed
    assert fixed.count("import torch\n") == 2  # the added runtime import, and the type-checking one


def test_comments_survive() -> None:
    assert fix("import torch\nx = (torch.ones(2, 2)  # keep me\n     ).qr()\n") == (
        "import torch\nx = (torch.ones(2, 2)  # keep me\n     ).qr()\n"
    )
    before = "import torch\nQ, R = torch.qr(A,\n    some=True,  # keep reduced\n)\n"
    assert "# keep reduced" in fix(before)


def test_deep_chains_are_fixed_in_one_run() -> None:
    before = "import torch\nL = torch.ones(2, 2)" + ".cholesky()" * 12 + "\n"
    fixed = fix(before)
    assert ".cholesky()" not in fixed and fixed.count("torch.linalg.cholesky(") == 12


def test_method_out_keyword_is_not_rewritten() -> None:
    (finding,) = check("import torch\nL = torch.ones(2, 2).cholesky(out=X)\n", select=["TU102"])
    assert finding.fix is None


def test_non_boolean_some_is_not_guessed() -> None:
    (finding,) = check("import torch\nQ, R = torch.qr(A, some=None)\n", select=["TU103"])
    assert finding.fix is None


def test_dropping_use_cuda_with_side_effects_is_unsafe() -> None:
    code = (
        "from torch.profiler import profile, ProfilerActivity\n"
        "with profile(activities=[ProfilerActivity.CPU], use_cuda=check_gpu()):\n    pass\n"
    )
    (finding,) = check(code, select=["TU110"])
    assert finding.fix is not None and finding.fix.applicability.value == "unsafe"
    assert fix(code) == code


def test_a_file_that_does_not_compile_as_it_is_gets_no_fix_and_no_false_report() -> None:
    code = "import torch\nQ, R = torch.qr(A)\nfrom __future__ import annotations\n"
    (finding,) = check(code, select=["TU103"])
    assert fix(code) == code
    assert not any("report" in note for note in finding.notes)


def test_import_inserted_where_the_first_fixed_statement_starts() -> None:
    """The importer replaces `from torch import cholesky` with `import torch` right where the fixed
    call starts; the safety check must move the call's start past that insertion."""
    assert fix("from torch import cholesky\ncholesky(A)\n") == "import torch\ntorch.linalg.cholesky(A)\n"
    assert fix("from torch import qr as q\nQ, R = q(A)\n") == "import torch\nQ, R = torch.linalg.qr(A)\n"


def test_removing_the_only_argument_leaves_empty_parentheses() -> None:
    code = "import torch.profiler as tp\nwith tp.profile(\n    with_modules=True\n) as p:\n    pass\n"
    assert fix(code, unsafe=True, select=["TU172"]) == "import torch.profiler as tp\nwith tp.profile() as p:\n    pass\n"
    kept = "import torch.profiler as tp\nwith tp.profile(\n    with_modules=True,  # why\n) as p:\n    pass\n"
    assert "# why" in fix(kept, unsafe=True, select=["TU172"])
