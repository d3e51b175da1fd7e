"""Issue 22: one policy for the receivers of every method rule (torchup/analysis/receivers.py).

Each case is a file and the confidence of the finding on its last line's method call (None: no
finding there), checked with and without the pre-filter: the evidence a receiver's confidence
rests on is parsed in both (``receivers.receiver_focus_lines``).
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from helpers import check, fix
from torchup.cli.main import main
from torchup.core.diagnostics import Confidence

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
    # -- likely: torch.load results -----------------------------------------------------------------
    "a loaded object": ("a = torch.load('f.pt', weights_only=True)\na.eig()\n", "likely"),
    "an entry of a loaded dict": ("sd = torch.load('f.pt', weights_only=True)\nsd['w'].cholesky()\n", "likely"),
    # -- unknown: possible ------------------------------------------------------------------------
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


def test_notebook_cells_share_the_evidence(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cells = ["import torch\nxs = torch.randn(4, 3, 3)", "vals = [x.eig() for x in xs]"]
    notebook = {
        "cells": [{"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [], "source": s}
                  for s in cells],
        "metadata": {}, "nbformat": 4, "nbformat_minor": 5,
    }
    (tmp_path / "n.ipynb").write_text(json.dumps(notebook))
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
