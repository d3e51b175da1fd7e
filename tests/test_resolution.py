"""Name resolution through every import form, and the shadowing traps named in the issue."""

from __future__ import annotations

import pytest

from helpers import check, codes


def use_codes(code: str, select: list[str]) -> list[str]:
    """The codes of the findings at uses: an import line of a removed function is reported too
    (as TorchFix's TOR004/TOR103 are), which is not what these cases are about."""
    return [d.code for d in check(code, select=select) if "(imported)" not in d.message]


@pytest.mark.parametrize(
    "code",
    [
        pytest.param("import torch\ntorch.cholesky(A)\n", id="plain"),
        pytest.param("import torch as th\nth.cholesky(A)\n", id="module-alias"),
        pytest.param("from torch import cholesky\ncholesky(A)\n", id="from-import"),
        pytest.param("from torch import cholesky as chol\nchol(A)\n", id="from-import-alias"),
        pytest.param("from torch import *\ncholesky(A)\n", id="star-import"),
        pytest.param("import torch.linalg\ntorch.cholesky(A)\n", id="submodule-import-binds-torch"),
        pytest.param("def f(A):\n    import torch\n    return torch.cholesky(A)\n", id="import-inside-function"),
        pytest.param("def f(A):\n    from torch import cholesky\n    return cholesky(A)\n", id="from-import-in-function"),
        pytest.param("import torch\nclass C:\n    def m(self, A):\n        return torch.cholesky(A)\n", id="method-body"),
        pytest.param("import torch\nf = lambda A: torch.cholesky(A)\n", id="lambda"),
        pytest.param("import torch\nLs = [torch.cholesky(a) for a in As]\n", id="comprehension"),
        pytest.param("import torch\nx = torch.cholesky(A) if ok else None\n", id="conditional"),
        pytest.param("import torch\ndef f(A, g=torch.cholesky):\n    return g(A)\n", id="default-argument"),
    ],
)
def test_reported_through(code: str) -> None:
    assert use_codes(code, select=["TU101"]) == ["TU101"]


@pytest.mark.parametrize(
    "code",
    [
        pytest.param("import torch\ndef cholesky(A):\n    return A\ncholesky(A)\n", id="local-def"),
        pytest.param("from torch import *\ndef cholesky(A):\n    return A\ncholesky(A)\n", id="def-over-star"),
        pytest.param("from torch import cholesky\ndef f(cholesky):\n    return cholesky(A)\n", id="parameter"),
        pytest.param("import numpy as np\nnp.linalg.cholesky(A)\n", id="numpy"),
        pytest.param("from numpy.linalg import cholesky\ncholesky(A)\n", id="numpy-from-import"),
        pytest.param("import scipy.linalg\nscipy.linalg.cholesky(A)\n", id="scipy"),
        pytest.param("from scipy.linalg import cholesky\ncholesky(A)\n", id="scipy-from"),
        pytest.param("import cupy as cp\ncp.linalg.cholesky(A)\n", id="cupy"),
        pytest.param("import sympy\nsympy.Matrix(A).cholesky()\n", id="sympy"),
        pytest.param("import torch\ntorch.linalg.cholesky(A)\n", id="linalg"),
        pytest.param("from torch import linalg\nlinalg.cholesky(A)\n", id="linalg-from"),
        pytest.param("from numpy import *\nfrom torch import *\ncholesky(A)\n", id="ambiguous-star"),
        pytest.param("import torch\ns = 'torch.cholesky(A)'\n", id="string"),
        pytest.param("import torch\n# torch.cholesky(A)\n", id="comment"),
        pytest.param('import torch\ndef f():\n    """torch.cholesky(A)"""\n', id="docstring"),
        pytest.param("import torch\nx = f'{torch}.cholesky'\n", id="f-string-text"),
        pytest.param(
            "try:\n    from torch import cholesky\nexcept ImportError:\n    cholesky = None\ncholesky(A)\n",
            id="ambiguous-binding",
        ),
        pytest.param("torch.cholesky(A)\n", id="torch-never-imported"),
        pytest.param("import mytorch as torch\ntorch.cholesky(A)\n", id="other-module-named-torch"),
        pytest.param("from torch.autograd import profiler_legacy as torch\ntorch.cholesky(A)\n", id="rebound-torch"),
    ],
)
def test_not_reported(code: str) -> None:
    assert use_codes(code, select=["TU101", "TU102"]) == []


def test_shadowed_torch_parameter_is_not_the_module() -> None:
    code = "import torch\ndef f(torch):\n    return torch.cholesky(A)\n"
    assert codes(code, select=["TU101"]) == []
    # It is still a method call on an object of unknown type, which TU102 reports; with `torch`
    # shadowed there is no way to name torch.linalg, so no fix.
    (finding,) = check(code, select=["TU102"])
    assert finding.fix is None


def test_class_scope_is_invisible_to_methods() -> None:
    code = """
    from torch import cholesky

    class Solver:
        cholesky = staticmethod(lambda m: m)

        def run(self, A):
            return cholesky(A)  # the module-level import, not the class attribute
    """
    assert use_codes(code, select=["TU101"]) == ["TU101"]


def test_global_declaration_resolves_to_module() -> None:
    code = """
    import torch
    def f(A):
        global torch
        return torch.cholesky(A)
    """
    assert codes(code, select=["TU101"]) == ["TU101"]


def test_positions_are_one_based_and_character_columns() -> None:
    (finding,) = check("import torch\nπ = 1; L = torch.cholesky(A)\n", select=["TU101"])
    assert (finding.line, finding.column, finding.end_line, finding.end_column) == (2, 12, 2, 26)


def test_references_are_reported_without_fix() -> None:
    found = check("import functools, torch\np = functools.partial(torch.qr, some=False)\nfs = [torch.cholesky]\n")
    assert sorted(d.code for d in found) == ["TU101", "TU103"]
    assert all(d.fix is None for d in found)


def test_a_star_import_does_not_bind_private_names() -> None:
    import ast

    from torchup.analysis.resolver import Resolver

    tree = ast.parse("from torch.distributed.distributed_c10d import *\n_set_pg_timeout(t)\nbarrier()\n")
    resolver = Resolver(tree)
    names = {node.id: resolver.qualified_name(node) for node in resolver.names}
    assert names["_set_pg_timeout"] is None
    assert names["barrier"] == "torch.distributed.distributed_c10d.barrier"
