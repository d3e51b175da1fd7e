"""Issue 22: one policy for the receivers of every method rule (torchup/analysis/receivers.py).

Each case is a file and the confidence of the finding on its last line's method call (None: no
finding there), checked with and without the pre-filter: the evidence a receiver's confidence
rests on is parsed in both (``receivers.receiver_focus_lines``).
"""

from __future__ import annotations

import json
import subprocess
import textwrap
from pathlib import Path

import pytest

from differential.envs import TORCH_VERSIONS, ensure_env
from helpers import check, fix
from torchup.cli.main import main
from torchup.core.diagnostics import Confidence
from torchup.core.facts import FACTS

METHOD_CODES = {"TU102", "TU104", "TU105", "TU201", "TU202"}

CASES = {
    # -- is a tensor ------------------------------------------------------------------------------
    "comprehension over a tensor": ("xs = torch.randn(256, 16, 16)\nvals = [x.eig() for x in xs]\n", "certain"),
    "loop over unbind": ("for x in torch.randn(4, 3, 3).unbind(0):\n    x.eig()\n", "certain"),
    "loop over torch.split": ("for part in torch.split(torch.eye(4), 2):\n    part.qr()\n", "certain"),
    "subscript of a tensor": ("mat = torch.randn(5, 3, 3)\nfor i in range(5):\n    mat[i].symeig(eigenvectors=True)\n",
                              "certain"),
    "slice of a tensor": ("T = torch.randn(4, 4)[1:, 1:]\nT.symeig()\n", "certain"),
    "element of a tuple of tensors": ("parts = torch.eye(4).chunk(2)\nparts[0].cholesky()\n", "certain"),
    "tuple unpacking of a named tuple": ("q, r = torch.linalg.qr(torch.eye(3))\nq.cholesky()\n", "certain"),
    "enumerate over a tensor": ("for i, x in enumerate(torch.randn(3, 3, 3)):\n    x.cholesky()\n", "certain"),
    "zip of tensors": ("xs = torch.randn(2, 3, 3)\nfor u, v in zip(xs, xs):\n    v.qr()\n", "certain"),
    "parameter annotated Tensor": ("def g(t: torch.Tensor):\n    return t.qr()\n", "certain"),
    "own function returning a tensor": ("def make():\n    y = torch.eye(3)\n    return y\n\n\nmake().cholesky()\n",
                                        "certain"),
    "own function's result through a name": (
        "def make(n):\n    a = torch.randn(n, n)\n    return a @ a.mT\n\n\ndef use():\n    m = make(3)\n    return m.cholesky()\n",
        "certain",
    ),
    "self attribute holding a Parameter": (
        "class M(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.w = torch.nn.Parameter(torch.eye(3))\n\n    def other(self):\n        return 1\n\n"
        "    def forward(self):\n        return self.w.cholesky()\n",
        "certain",
    ),
    "registered buffer": (
        "class M(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.register_buffer(\"b\", torch.eye(3))\n\n    def forward(self):\n        return self.b.qr()\n",
        "certain",
    ),
    "tuple unpacking after another binding": (
        "q = None\nq, r = torch.linalg.qr(torch.eye(3))\nq.cholesky()\n", "certain",
    ),
    "an assignment in a with block": (
        "m = load()\nwith torch.no_grad():\n    m = torch.eye(3)\nm.cholesky()\n", "certain",
    ),
    # -- likely: torch.load results -----------------------------------------------------------------
    "a loaded object": ("a = torch.load('f.pt', weights_only=True)\na.eig()\n", "likely"),
    "an entry of a loaded dict": ("sd = torch.load('f.pt', weights_only=True)\nsd['w'].cholesky()\n", "likely"),
    "a name the function calls a tensor-only method on": (
        "def t(case, lazy):\n    e = case.evaluate(lazy)\n    e.register_hook(print)\n    return e.symeig()\n",
        "likely",
    ),
    # -- unknown: possible ------------------------------------------------------------------------
    "a tensor-only method on another binding of the name": (
        "def t(case):\n    e = case.a()\n    e.register_hook(print)\n    e = case.b()\n    return e.symeig()\n",
        "possible",
    ),
    "a method tensors share with other objects": (
        "def t(case):\n    e = case.a()\n    e.matmul(e)\n    return e.symeig()\n", "possible",
    ),
    "a parameter of unknown type": ("def factor(m):\n    return m.cholesky()\n", "possible"),
    "a function whose returns differ": (
        "def make(flag):\n    if flag:\n        return torch.eye(3)\n    return load()\n\n\nmake(1).cholesky()\n",
        "possible",
    ),
    # -- not a tensor: no finding -----------------------------------------------------------------
    "a name the file never binds": ("tf.cholesky(a)\n", None),
    "numpy": ("import numpy as np\nnp.asarray([[1.0]]).cholesky()\n", None),
    "gpytorch": ("import gpytorch\nK = gpytorch.lazify(torch.eye(3))\nK.cholesky()\n", None),
    "a local class that defines the method": (
        "class Lazy:\n    def cholesky(self):\n        return 1\n\n\nLazy().cholesky()\n", None,
    ),
    "self in a class that defines the method": (
        "class Lazy:\n    def cholesky(self):\n        return 1\n\n    def root(self):\n        return self.cholesky()\n",
        None,
    ),
}


def _finding_on_last_line(code: str, prefilter: bool) -> str | None:
    source = "import torch\n" + code
    last = len(source.rstrip("\n").split("\n"))
    found = [d for d in check(source, prefilter=prefilter) if d.code in METHOD_CODES and d.line == last]
    assert len(found) <= 1, found
    return found[0].confidence.value if found else None


@pytest.mark.parametrize("prefilter", [True, False], ids=["prefilter", "no-prefilter"])
@pytest.mark.parametrize(("code", "expected"), CASES.values(), ids=CASES.keys())
def test_the_receiver_decides_the_confidence(code: str, expected: str | None, prefilter: bool) -> None:
    assert _finding_on_last_line(code, prefilter) == expected


def test_only_a_certain_receiver_gets_a_safe_fix() -> None:
    certain = "import torch\nS = torch.eye(3)\nL = S.cholesky()\n"
    assert "torch.linalg.cholesky(S)" in fix(certain)
    for code, select in (("import torch\ndef f(m):\n    return m.cholesky()\n", ["TU102"]),
                         ("import torch\nsd = torch.load('f.pt', weights_only=True)\nsd['w'].cholesky()\n", ["TU102"]),
                         ("import torch\ndef f(m):\n    return m.clamp(0, 1)\n", ["TU201"])):
        assert fix(code, select=select) == code  # unsafe at most
        found = [d for d in check(code, select) if d.code in METHOD_CODES]
        assert found and all(d.confidence is not Confidence.CERTAIN for d in found)
        assert all(d.fix is None or d.fix.applicability.value == "unsafe" for d in found)


def test_every_output_format_carries_the_confidence(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "m.py").write_text("import torch\ndef f(m):\n    return m.cholesky()\nx = torch.eye(2).qr()\n")
    outputs = {}
    for output in ("json", "concise", "sarif", "github", "junit"):
        capsys.readouterr()
        main(["check", "--no-cache", "--isolated", "--output-format", output, str(tmp_path)])
        outputs[output] = capsys.readouterr().out
    found = json.loads(outputs["json"])
    assert [(f["line"], f["confidence"]) for f in found] == [(3, "possible"), (4, "certain")]
    assert "[possible]" in outputs["concise"].splitlines()[0] and "[possible]" not in outputs["concise"].splitlines()[1]
    results = json.loads(outputs["sarif"])["runs"][0]["results"]
    assert [(r["properties"]["confidence"], r["rank"]) for r in results] == [("possible", 40.0), ("certain", 100.0)]
    assert "[possible]" in outputs["github"] and "[possible]" in outputs["junit"]


def _write_notebook(path: Path, cells: list[str]) -> None:
    notebook = {
        "cells": [{"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [], "source": s}
                  for s in cells],
        "metadata": {}, "nbformat": 4, "nbformat_minor": 5,
    }
    path.write_text(json.dumps(notebook))


def test_notebook_cells_share_the_evidence(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _write_notebook(tmp_path / "n.ipynb", ["import torch\nxs = torch.randn(4, 3, 3)", "vals = [x.eig() for x in xs]"])
    capsys.readouterr()
    main(["check", "--no-cache", "--isolated", "--output-format", "json", str(tmp_path)])
    found = json.loads(capsys.readouterr().out)
    assert [(f["cell"], f["confidence"]) for f in found if f["code"] == "TU105"] == [(2, "certain")]


def test_a_method_defined_in_another_file_silences_a_possible_receiver_in_a_directory_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lazy = "class LazyTensor:\n    def cholesky(self, upper=False):\n        return self\n"
    uses = "import torch\ndef root(lazy):\n    return lazy.cholesky(upper=False)\nx = torch.eye(2).cholesky()\n"
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "lazy.py").write_text(lazy)
    (tmp_path / "pkg" / "uses.py").write_text(uses)
    capsys.readouterr()
    main(["check", "--no-cache", "--isolated", "--output-format", "json", str(tmp_path)])
    found = json.loads(capsys.readouterr().out)
    assert [(f["line"], f["confidence"]) for f in found] == [(4, "certain")]


def test_text_dedent_helper_keeps_cases_plain() -> None:
    # (the cases are written flush left: a dedent must change nothing)
    assert all(textwrap.dedent(code) == code for code, _ in CASES.values())


@pytest.mark.parametrize("named", ["directory", "file"])
def test_the_index_covers_the_project_root_in_a_single_file_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], named: str
) -> None:
    """`torchup check pkg/uses.py` reads the rest of the project for the class that defines the
    method, as a run over the whole project would: the same findings either way."""
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'p'\n")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "lazy.py").write_text("class LazyTensor:\n    def cholesky(self, upper=False):\n        return self\n")
    (tmp_path / "pkg" / "uses.py").write_text(
        "import torch\ndef root(lazy):\n    return lazy.cholesky(upper=False)\nx = torch.eye(2).cholesky()\n"
    )
    target = tmp_path / "pkg" if named == "directory" else tmp_path / "pkg" / "uses.py"
    capsys.readouterr()
    main(["check", "--no-cache", "--isolated", "--output-format", "json", str(target)])
    found = json.loads(capsys.readouterr().out)
    assert [(f["line"], f["confidence"]) for f in found] == [(4, "certain")]
    # Without the class elsewhere in the project, the unknown receiver is reported.
    (tmp_path / "lib" / "lazy.py").write_text("X = 1\n")
    main(["check", "--no-cache", "--isolated", "--output-format", "json", str(target)])
    again = json.loads(capsys.readouterr().out)
    assert [(f["line"], f["confidence"]) for f in again] == [(3, "possible"), (4, "certain")]


def test_min_confidence_leaves_out_the_less_sure_findings(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "m.py").write_text(
        "import torch\ndef f(m):\n    return m.cholesky()\nsd = torch.load('f.pt', weights_only=True)\n"
        "sd['w'].cholesky()\nx = torch.eye(2).qr()\n"
    )

    def lines(*args: str) -> list[tuple[int, str]]:
        capsys.readouterr()
        main(["check", "--no-cache", "--output-format", "json", *args, str(tmp_path)])
        return [(f["line"], f["confidence"]) for f in json.loads(capsys.readouterr().out)]

    every = [(3, "possible"), (5, "likely"), (6, "certain")]
    assert lines("--isolated") == every
    assert lines("--isolated", "--min-confidence", "likely") == every[1:]
    assert lines("--isolated", "--min-confidence", "certain") == every[2:]
    (tmp_path / "pyproject.toml").write_text('[tool.torchup]\nmin-confidence = "likely"\n')
    assert lines() == every[1:]
    (tmp_path / "pyproject.toml").write_text('[tool.torchup]\nmin-confidence = "sure"\n')
    capsys.readouterr()
    assert main(["check", "--no-cache", str(tmp_path)]) == 2
    assert "`min-confidence` must be one of certain, likely, possible" in capsys.readouterr().err


SOLVER = """\
import torch


def run(rhs, n):
    result = rhs.clone()
    if n:
        t_mat = torch.zeros(n, n)
        t_mat = t_mat[:2, :2]
        return result, t_mat.permute(1, 0).contiguous()
    return result


def unknown(x):
    return x.thing()
"""
LAZY = "class Lazy:\n    def symeig(self):\n        return self\n"
QUAD = """\
import torch

from .solver import run, unknown


def f(rhs):
    _, mat = run(rhs, 3)
    mat = mat.squeeze(0)
    a = mat.symeig()[0]
    b = unknown(rhs).symeig()
    return a, b
"""
TEST = """\
import torch

from pkg.utils.solver import run


def test_it():
    solves, t_mats = run(torch.randn(3, 3), 2)
    for i in range(2):
        t_mats[i].symeig()
"""


def _solver_project(root: Path) -> None:
    (root / "pyproject.toml").write_text("[project]\nname = 'p'\n")
    for name, text in {"pkg/__init__.py": "", "pkg/utils/__init__.py": "", "pkg/utils/solver.py": SOLVER,
                       "pkg/lazy.py": LAZY, "pkg/utils/quad.py": QUAD, "test/test_solver.py": TEST}.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)


@pytest.mark.parametrize("named", ["directory", "file"])
def test_a_receiver_a_project_function_returns_as_a_tensor_is_likely(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, named: str
) -> None:
    """`_, t = run(...)` with `run` imported from the project (relatively or by its package path):
    its file says the element is a tensor, so the finding is likely, and the project's own
    `Lazy.symeig` does not silence it; what `unknown` returns nobody knows: dropped."""
    _solver_project(tmp_path)
    monkeypatch.chdir(tmp_path)
    targets = [tmp_path] if named == "directory" else [tmp_path / "pkg/utils/quad.py", tmp_path / "test/test_solver.py"]
    for run, cache in enumerate(([], [], ["--no-cache"])):  # cold, then the findings from the cache, then none
        if run == 1:
            (tmp_path / "pkg/__init__.py").write_text("# (another file changed: each file's findings are read back)\n")
        capsys.readouterr()
        main(["check", *cache, "--isolated", "--output-format", "json", *map(str, targets)])
        found = json.loads(capsys.readouterr().out)
        assert [(Path(f["path"]).name, f["line"], f["confidence"]) for f in found] == [
            ("quad.py", 9, "likely"), ("test_solver.py", 9, "likely")
        ]
        assert all("`run` (" in " ".join(f["notes"]) for f in found)


def test_a_notebook_reads_what_the_project_function_it_imports_returns(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _solver_project(tmp_path)
    _write_notebook(tmp_path / "n.ipynb", ["import torch\nfrom pkg.utils.solver import run",
                                           "_, t = run(torch.eye(3), 2)\nt.symeig()"])
    capsys.readouterr()
    main(["check", "--no-cache", "--isolated", "--output-format", "json", str(tmp_path / "n.ipynb")])
    found = json.loads(capsys.readouterr().out)
    assert [(f["cell"], f["line"], f["confidence"]) for f in found] == [(2, 2, "likely")]


def test_a_project_function_with_a_return_of_unknown_type_leaves_the_finding_possible(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _solver_project(tmp_path)
    (tmp_path / "pkg/lazy.py").write_text("X = 1\n")  # (nothing silences the possible findings now)
    (tmp_path / "pkg/utils/solver.py").write_text(SOLVER.replace("t_mat.permute(1, 0).contiguous()", "make(t_mat)"))
    capsys.readouterr()
    main(["check", "--no-cache", "--isolated", "--output-format", "json", str(tmp_path)])
    found = json.loads(capsys.readouterr().out)
    assert [(Path(f["path"]).name, f["line"], f["confidence"]) for f in found] == [
        ("quad.py", 9, "possible"), ("quad.py", 10, "possible"), ("test_solver.py", 9, "possible")
    ]


_NOT_ON_A_TENSOR_ALONE = """\
import json, sys
import numpy, torch
print(json.dumps([name for name in json.loads(sys.stdin.read())
                  if not hasattr(torch.Tensor, name) or hasattr(torch.nn.Module, name) or hasattr(numpy.ndarray, name)]))
"""


@pytest.mark.differential
@pytest.mark.parametrize("version", TORCH_VERSIONS)
def test_the_tensor_identifying_methods_are_the_tensors_alone(version: str) -> None:
    """torch_api.json's `tensor_identifying_methods`: a tensor has each; a module and an ndarray none."""
    names = FACTS["tensor_identifying_methods"]
    result = subprocess.run([str(ensure_env(version)), "-c", _NOT_ON_A_TENSOR_ALONE], input=json.dumps(names),
                            capture_output=True, text=True, check=True)
    assert names and json.loads(result.stdout.strip().splitlines()[-1]) == []
