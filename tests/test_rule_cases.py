"""Positives, negatives and fix outputs beyond the documented examples: the traps users hit."""

from __future__ import annotations

import textwrap

import pytest

from helpers import check, codes, fix


def dedent(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


# -- TU101 / TU103 --------------------------------------------------------------------------------
def test_cholesky_keeps_comments_and_layout_of_a_multiline_call() -> None:
    before = """
    import torch
    U = torch.cholesky(  # factor it
        A,  # the matrix
        True,  # upper
    )
    """
    after = """
    import torch
    U = torch.linalg.cholesky(  # factor it
        A,  # the matrix
        upper=True,  # upper
    )
    """
    assert fix(dedent(before)) == dedent(after)


@pytest.mark.parametrize(
    ("call", "expected"),
    [
        ("torch.qr(A, some=a or b)", 'torch.linalg.qr(A, mode="reduced" if a or b else "complete")'),
        ("torch.qr(A, some=(x if y else z))", 'torch.linalg.qr(A, mode="reduced" if (x if y else z) else "complete")'),
        ("torch.qr(A, some=not full)", 'torch.linalg.qr(A, mode="reduced" if not full else "complete")'),
        ("torch.qr(A, True)", "torch.linalg.qr(A)"),
        ("torch.qr(A, some=False, out=(Q, R))", 'torch.linalg.qr(A, mode="complete", out=(Q, R))'),
        ("torch.qr(A, out=(Q, R), some=True)", "torch.linalg.qr(A, out=(Q, R))"),
        ("torch.cholesky(A, out=L, upper=flag)", "torch.linalg.cholesky(A, out=L, upper=flag)"),
        ("torch.cholesky(input=A)", "torch.linalg.cholesky(input=A)"),
        ("torch.cholesky(A, **options)", "torch.linalg.cholesky(A, **options)"),
    ],
)
def test_function_rewrites(call: str, expected: str) -> None:
    assert fix(f"import torch\nresult = {call}\n") == f"import torch\nresult = {expected}\n"


@pytest.mark.parametrize("call", ["torch.cholesky(*args)", "torch.qr(A, **options)", "torch.qr(A, 1, 2)"])
def test_no_fix_where_no_exact_rewrite(call: str) -> None:
    (finding,) = check(f"import torch\nresult = {call}\n")
    assert finding.fix is None and finding.help


def test_star_import_gets_an_explicit_torch_import() -> None:
    # torch 2.14 dropped cholesky from torch.__all__: after `from torch import *` the name is unbound.
    assert fix("from torch import *\nL = cholesky(A)\n") == "from torch import *\nimport torch\nL = torch.linalg.cholesky(A)\n"


def test_stale_import_kept_while_another_reference_remains() -> None:
    before = "import functools\nfrom torch import qr\nQ, R = qr(A)\np = functools.partial(qr, some=False)\n"
    after = "import functools\nfrom torch import qr\nimport torch\nQ, R = torch.linalg.qr(A)\np = functools.partial(qr, some=False)\n"
    assert fix(before) == after


def test_import_removed_inside_function_keeps_block_valid() -> None:
    before = """
    def f(A):
        from torch import qr
        return qr(A)
    """
    after = """
    import torch
    def f(A):
        return torch.linalg.qr(A)
    """
    assert fix(dedent(before)) == dedent(after)


def test_reexported_name_keeps_its_import() -> None:
    before = '__all__ = ["cholesky"]\nfrom torch import cholesky\nL = cholesky(A)\n'
    assert "from torch import cholesky" in fix(before)


def test_noqa_silences_one_code() -> None:
    assert codes("import torch\ntorch.qr(A)  # noqa: TU103\ntorch.qr(A)  # noqa: TU101\ntorch.qr(A)  # NOQA\n") == [
        "TU103"
    ]


# -- TU102 / TU104 ---------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("code", "applicability"),
    [
        ("import torch\nL = torch.randn(3, 3).cholesky()\n", "safe"),
        ("import torch\nx = torch.ones(2, 2)\nx += 1\nL = x.cholesky()\n", "safe"),
        ("import torch\ndef f(x: torch.Tensor):\n    return x.T.cholesky()\n", "safe"),
        ("from torch import Tensor\ndef f(x: Tensor):\n    return x.qr()\n", "safe"),
        ("import torch\nclass T(torch.Tensor):\n    def f(self):\n        return self.qr()\n", "safe"),
        ("import torch\ndef f(x):\n    return x.cholesky()\n", "unsafe"),
        ("import torch\nL = load().qr()\n", "unsafe"),
    ],
)
def test_method_fix_safety_follows_receiver_evidence(code: str, applicability: str) -> None:
    (finding,) = check(code, select=["TU102", "TU104"])
    assert finding.fix is not None and finding.fix.applicability.value == applicability


@pytest.mark.parametrize(
    "code",
    [
        "import numpy as np\nimport torch\nx = np.eye(2)\nx.cholesky()\n",
        "import torch\nimport scipy.sparse as sp\nsp.eye(2).qr()\n",
        "def f(x):\n    return x.cholesky()\n",  # the file never imports torch
        "import torch\nclass M:\n    def cholesky(self):\n        return 1\n    def g(self):\n        return self.cholesky()\n",
        "import torch\nclass M(torch.nn.Module):\n    def g(self):\n        return self.qr()\n",
        "import torch\n'abc'.qr()\n",
    ],
)
def test_method_not_reported(code: str) -> None:
    assert codes(code, select=["TU102", "TU104"]) == []


def test_method_rewrite_keeps_a_parenthesised_receiver() -> None:
    before = "import torch\nU = (torch.eye(3) + A @ A.mT).cholesky(upper=True)\n"
    assert fix(before) == "import torch\nU = torch.linalg.cholesky(torch.eye(3) + A @ A.mT, upper=True)\n"


def test_method_some_true_only_argument() -> None:
    assert fix("import torch\nQ, R = torch.ones(3, 2).qr(some=True)\n") == (
        "import torch\nQ, R = torch.linalg.qr(torch.ones(3, 2))\n"
    )


def test_method_adds_torch_import_when_only_from_imports_exist() -> None:
    before = "from torch import randn\nL = randn(3, 3).cholesky()\n"
    assert fix(before) == "from torch import randn\nimport torch\nL = torch.linalg.cholesky(randn(3, 3))\n"


# -- TU105 -------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("call", "expected"),
    [
        ("torch.solve(B, A)[0]", "torch.linalg.solve(A, B)"),
        ("torch.gesv(B, A).solution", "torch.linalg.solve(A, B)"),
        ("torch.potrf(A)", "torch.linalg.cholesky(A, upper=True)"),
        ("torch.potrf(A, False)", "torch.linalg.cholesky(A)"),
        ("torch.potrs(b, u)", "torch.cholesky_solve(b, u, upper=True)"),
        ("torch.potri(u, upper=flag)", "torch.cholesky_inverse(u, upper=flag)"),
        ("torch.matrix_rank(A, 1e-5, True)", "torch.linalg.matrix_rank(A, atol=1e-5, rtol=0, hermitian=True)"),
        ("torch.symeig(A, True, False)", "torch.linalg.eigh(A)"),
        ("torch.symeig(A, eigenvectors=True, upper=u)", 'torch.linalg.eigh(A, UPLO="U" if u else "L")'),
    ],
)
def test_removed_linalg_unsafe_fixes(call: str, expected: str) -> None:
    code = f"import torch\nresult = {call}\n"
    assert fix(code) == code  # nothing safe to apply
    assert fix(code, unsafe=True) == f"import torch\nresult = {expected}\n"


@pytest.mark.parametrize(
    "call",
    ["torch.solve(B, A)", "torch.eig(A)", "torch.lstsq(B, A)", "torch.trtrs(b, A)", "torch.btrisolve(b, LU, p)",
     "torch.symeig(A)"],
)
def test_removed_linalg_guidance_only(call: str) -> None:
    (finding,) = check(f"import torch\nresult = {call}\n", select=["TU105"])
    assert finding.fix is None and finding.help


def test_removed_linalg_method_only_on_evident_tensors() -> None:
    assert codes("import torch\nX = torch.eye(3).solve(B)\n", select=["TU105"]) == ["TU105"]
    assert codes("import torch\nX = solver.solve(B)\n", select=["TU105"]) == []


@pytest.mark.parametrize(
    ("call", "expected"),
    [
        ("torch.btrifact(A)", "torch.linalg.lu_factor(A)"),
        ("torch.btrifact(A, pivot=p)", "torch.linalg.lu_factor(A, pivot=p)"),
        ("torch.btrifact_with_info(A)", "torch.linalg.lu_factor_ex(A)"),
        ("torch.btriunpack(LU, piv)", "torch.lu_unpack(LU, piv)"),
        ("torch.btriunpack(LU_data=LU, LU_pivots=piv)", "torch.lu_unpack(LU, piv)"),
        ("torch.Tensor.potrf(A)", "torch.linalg.cholesky(A, upper=True)"),
        ("torch.eye(3).btrifact()", "torch.linalg.lu_factor(torch.eye(3))"),
        ("torch.eye(3).potrs(u, upper=False)", "torch.cholesky_solve(torch.eye(3), u)"),
        ("torch.eye(3).potri()", "torch.cholesky_inverse(torch.eye(3), upper=True)"),
        ("torch.eye(3).symeig(eigenvectors=True)", 'torch.linalg.eigh(torch.eye(3), UPLO="U")'),
        ("torch.eye(3).gesv(A)[0]", "torch.linalg.solve(A, torch.eye(3))"),
        ("(torch.eye(3) + 1).btrifact(pivot=False)", "torch.linalg.lu_factor(torch.eye(3) + 1, pivot=False)"),
    ],
)
def test_removed_linalg_1x_unsafe_fixes(call: str, expected: str) -> None:
    code = f"import torch\nresult = {call}\n"
    assert fix(code) == code
    assert fix(code, unsafe=True) == f"import torch\nresult = {expected}\n"


@pytest.mark.parametrize(
    "call",
    [
        "torch.btrifact(A, True)",  # 1.0's second parameter was info=, 1.1's pivot=
        "torch.btrifact(A, out=(LU, piv))",
        "torch.btriunpack(LU, piv, unpack_data=False)",  # None then, empty tensors now
        "torch.btrisolve(b, LU, piv)",
        "torch.gels(B, A)",
        "torch.pstrf(A)",
        "torch.eye(3).trtrs(A)",
        "torch.eye(3).symeig(eigenvectors=True, out=o)",
        "x.btrifact()",  # not evidently a tensor: reported, never rewritten
    ],
)
def test_removed_linalg_1x_guidance_only(call: str) -> None:
    code = f"import torch\ndef f(x):\n    return {call}\n"
    (finding,) = check(code, select=["TU105"])
    assert finding.fix is None and finding.help
    assert "removed in torch 1." in finding.message or "removed in torch 2.0" in finding.message


def test_removed_linalg_message_names_release_and_replacement() -> None:
    (function,) = check("import torch\nP, L, U = torch.btriunpack(LU, piv)\n", select=["TU105"])
    assert function.message == (
        "`torch.btriunpack` is removed in torch 1.2 (AttributeError in 2.13 and 2.14); use `torch.lu_unpack`"
    )
    (method,) = check("import torch\ndef f(x):\n    return x.btrisolve(LU, piv)\n", select=["TU105"])
    assert method.message.endswith("use `torch.linalg.lu_solve` if the receiver is a tensor")
    (stub,) = check("import torch\nw = torch.eig(A)\n", select=["TU105"])
    assert "removed in torch 1.13 (only a stub that raises" in stub.message


def test_removed_linalg_ambiguous_method_names_need_a_likely_tensor() -> None:
    """`solve` and `lstsq` are other libraries' method names too (CVXPY, SciPy, SymPy): an unknown
    receiver is not reported. `eig` and `symeig` on one are torch's in real code (issue 22's corpus:
    `[v.symeig() for v in values]`, `X.symeig()`): reported as possible, like the LAPACK-era names."""
    code = "import torch\ndef f(x, b):\n    return x.solve(b), x.eig(), x.lstsq(b), x.symeig(), x.gesv(b), x.potrf()\n"
    found = check(code, select=["TU105"])
    assert [f.message.split("`")[1] for f in found] == ["Tensor.eig()", "Tensor.symeig()", "Tensor.gesv()",
                                                        "Tensor.potrf()"]
    assert {f.confidence.value for f in found} == {"possible"}
    evident = "import torch\nx = torch.eye(3)\ny = x.solve(x), x.lstsq(x)\n"
    assert [f.confidence.value for f in check(evident, select=["TU105"])] == ["certain", "certain"]


# -- TU110 -------------------------------------------------------------------------------------------
def test_use_cuda_variable_and_parameter_are_not_findings() -> None:
    code = """
    import torch
    use_cuda = torch.cuda.is_available()
    def train(model, use_cuda=False):
        return model.cuda() if use_cuda else model
    """
    assert codes(code) == []


def test_profiler_keyword_on_its_own_line_is_removed_with_its_line() -> None:
    before = """
    import torch
    with torch.autograd.profiler.profile(
        use_cuda=False,
        record_shapes=True,
    ) as prof:
        pass
    """
    after = """
    import torch
    with torch.autograd.profiler.profile(
        record_shapes=True,
    ) as prof:
        pass
    """
    assert fix(dedent(before)) == dedent(after)


def test_profiler_with_explicit_activities_drops_use_cuda() -> None:
    before = (
        "from torch.profiler import profile, ProfilerActivity\n"
        "with profile(activities=[ProfilerActivity.CPU], use_cuda=True) as p:\n    pass\n"
    )
    after = "from torch.profiler import profile, ProfilerActivity\nwith profile(activities=[ProfilerActivity.CPU]) as p:\n    pass\n"
    assert fix(before) == after


def test_profiler_uses_an_existing_profiler_activity_import() -> None:
    before = "import torch\nfrom torch.profiler import ProfilerActivity\nwith torch.profiler.profile(use_cuda=True):\n    pass\n"
    after = (
        "import torch\nfrom torch.profiler import ProfilerActivity\n"
        "with torch.profiler.profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]):\n    pass\n"
    )
    assert fix(before) == after


def test_profiler_activity_name_taken_falls_back_to_module_path() -> None:
    before = "import torch\nProfilerActivity = None\nwith torch.profiler.profile(use_cuda=True):\n    pass\n"
    assert "activities=[torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]" in fix(before)


def test_autograd_profiler_from_import_forms() -> None:
    code = "from torch.autograd import profiler\nwith profiler.profile(use_cuda=True):\n    pass\n"
    assert fix(code) == code.replace("use_cuda=True", 'use_device="cuda"')


# -- TU120 / TU130 ----------------------------------------------------------------------------------
def test_acc_policy_from_a_variable_is_not_guessed() -> None:
    assert codes("import torch\np = 'balanced'\no = torch.nn.LinearCrossEntropyOptions(acc_policy=p)\n") == []


def test_compile_with_the_new_name_is_fine() -> None:
    assert codes("import torch\nf = torch.compile(g, dynamic_shapes=None)\n", select=["TU130"]) == []


def test_dataclasses_replace_needs_a_torch_file() -> None:
    code = "import dataclasses\nb = dataclasses.replace(a, acc_policy='balanced')\n"
    assert codes(code) == []
    assert codes("import torch\n" + code) == ["TU120"]
