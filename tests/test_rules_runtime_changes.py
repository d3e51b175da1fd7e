"""The rules for 2.14's run-time changes: TU140, TU201, TU202, TU301, TU401.

TU301 depends on the Python the code targets; each way of giving it (``--target-python``, the
nearest ``pyproject.toml``'s ``requires-python``, the running interpreter) is tested here.
"""

from __future__ import annotations

import sys
import textwrap
import types
from pathlib import Path

import pytest

from helpers import check, fix
from torchup.check.checker import Checker
from torchup.cli.main import main
from torchup.core.diagnostics import Applicability, Diagnostic, Severity
from torchup.core.source import SourceFile
from torchup.rules import all_rules, rule_by_code
from torchup.settings.selection import select_rules

COMPILE_SNIPPET = """
import torch

@torch.compile
def f(t):
    return t.sin()
"""


def analyze(path: Path, code: str, select: list[str], target_python: str | None = None) -> list[Diagnostic]:
    """Check ``code`` as if it were the file ``path`` (whose directory decides requires-python)."""
    checker = Checker(select_rules(all_rules(), select), target_python=target_python)
    source = SourceFile.from_bytes(str(path), textwrap.dedent(code).encode())
    return checker.analyze(source).diagnostics


def project(tmp_path: Path, requires_python: str | None) -> Path:
    line = f'requires-python = "{requires_python}"\n' if requires_python is not None else ""
    (tmp_path / "pyproject.toml").write_text(f'[project]\nname = "p"\n{line}')
    (tmp_path / "pkg").mkdir()
    return tmp_path / "pkg" / "model.py"


# -- TU301: where the target Python comes from ---------------------------------------------------
@pytest.mark.parametrize(("target", "expected"), [("3.15", 1), ("3.16", 1), ("3.14", 0), ("3.10", 0)])
def test_tu301_target_python_option(tmp_path: Path, target: str, expected: int) -> None:
    path = project(tmp_path, ">=3.15")  # the option wins over requires-python
    found = analyze(path, COMPILE_SNIPPET, ["TU301"], target_python=target)
    assert len(found) == expected
    if expected:
        assert "--target-python" in found[0].message
        assert "torch.compile is not supported on Python 3.15+" in found[0].message
        assert found[0].severity is Severity.ERROR


@pytest.mark.parametrize(
    ("spec", "expected"),
    [(">=3.10", 1), (">=3.15", 1), ("~=3.12", 1), (">=3.10,<3.15", 0), ("==3.12.*", 0), ("<=3.14", 0)],
)
def test_tu301_requires_python(tmp_path: Path, spec: str, expected: int) -> None:
    found = analyze(project(tmp_path, spec), COMPILE_SNIPPET, ["TU301"])
    assert len(found) == expected
    if expected:
        assert "requires-python" in found[0].message and spec in found[0].message


def test_tu301_running_interpreter_fallback(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = project(tmp_path, None)  # a pyproject without requires-python: the interpreter decides
    found = analyze(path, COMPILE_SNIPPET, ["TU301"])
    assert len(found) == (1 if sys.version_info >= (3, 15) else 0)
    monkeypatch.setattr("torchup.core.python_target.sys", types.SimpleNamespace(version_info=(3, 15, 0, "final", 0)))
    found = analyze(path, COMPILE_SNIPPET, ["TU301"])
    assert len(found) == 1 and "the running interpreter" in found[0].message
    monkeypatch.setattr("torchup.core.python_target.sys", types.SimpleNamespace(version_info=(3, 14, 2, "final", 0)))
    assert analyze(path, COMPILE_SNIPPET, ["TU301"]) == []


def test_tu301_command_line_option(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = project(tmp_path, ">=3.10,<3.15")
    path.write_text(textwrap.dedent(COMPILE_SNIPPET))
    assert main(["check", "--select", "TU301", "--target-version", "2.14", str(path)]) == 0
    capsys.readouterr()
    assert main(["check", "--select", "TU301", "--target-python", "3.15", "--target-version", "2.14", str(path)]) == 1
    assert "TU301" in capsys.readouterr().out
    # torch 2.15 (the default target) compiles on Python 3.15: TU301 has nothing to say there.
    assert main(["check", "--select", "TU301", "--target-python", "3.15", str(path)]) == 0


@pytest.mark.parametrize(
    "code",
    [
        "import torch\nm = torch.compile(m)\n",
        "from torch import compile\nm = compile(m, backend='eager')\n",
        "import torch\n@torch.compile(fullgraph=True)\ndef f(t):\n    return t\n",
        "import torch\nm = torch.compiler.compile(m)\n",
        "import torch._dynamo\nm = torch._dynamo.optimize('eager')(m)\n",
        "import torch\n@torch._dynamo.optimize('eager')\ndef f(t):\n    return t\n",
        "import torch\ny = torch.cond(x.sum() > 0, f, g, (x,))\n",
        "from torch._higher_order_ops.cond import cond\ny = cond(pred, f, g, (x,))\n",
        "import sys, torch\nif sys.version_info >= (3, 15):\n    m = torch.compile(m)\n",
        "import sys, torch\nif sys.version_info < (3, 15, 1):\n    m = torch.compile(m)\n",  # 3.15.0 passes
        "import sys, torch\nif sys.version_info < (3, 16):\n    m = torch.compile(m)\n",
        "import sys, torch\nif sys.version_info < (3, 15) or flag:\n    m = torch.compile(m)\n",
        "import torch\ntry:\n    m = torch.compile(m)\nexcept ValueError:\n    pass\n",
    ],
)
def test_tu301_reported(tmp_path: Path, code: str) -> None:
    assert len(analyze(tmp_path / "m.py", code, ["TU301"], target_python="3.15")) == 1


@pytest.mark.parametrize(
    "code",
    [
        "import sys, torch\nif sys.version_info < (3, 15):\n    m = torch.compile(m)\n",
        "import sys, torch\nif sys.version_info >= (3, 15):\n    pass\nelse:\n    m = torch.compile(m)\n",
        "import sys, torch\nif (3, 15) > sys.version_info:\n    m = torch.compile(m)\n",
        "import sys, torch\nif sys.version_info[:2] <= (3, 14):\n    m = torch.compile(m)\n",
        "import sys, torch\nif sys.version_info.minor < 15 and use_compile:\n    m = torch.compile(m)\n",
        "import sys, torch\nif not sys.version_info >= (3, 15):\n    m = torch.compile(m)\n",
        "import sys, torch\nm = torch.compile(m) if sys.version_info < (3, 15) else m\n",
        "from sys import version_info\nimport torch\nif version_info < (3, 15):\n    m = torch.compile(m)\n",
        "import sys, torch\ndef f(m):\n    if sys.version_info >= (3, 15):\n        return m\n    return torch.compile(m)\n",
        "import torch\nif torch._dynamo.is_dynamo_supported():\n    m = torch.compile(m)\n",
        "import torch\ntry:\n    m = torch.compile(m)\nexcept RuntimeError:\n    pass\n",
        "import torch\ny = torch.cond(True, f, g, (x,))\n",
        "import torch\noriginal = torch.compile\n",
        "import mylib\nm = mylib.compile(m)\n",
        "def compile(m):\n    return m\nm = compile(m)\n",
    ],
)
def test_tu301_not_reported(tmp_path: Path, code: str) -> None:
    assert analyze(tmp_path / "m.py", code, ["TU301"], target_python="3.15") == []


def test_tu301_error_strings_per_entry_point(tmp_path: Path) -> None:
    code = "import torch\nm = torch._dynamo.optimize('eager')(m)\ny = torch.cond(p, f, g, (x,))\n"
    messages = [d.message for d in analyze(tmp_path / "m.py", code, ["TU301"], target_python="3.15")]
    assert "Python 3.15+ not yet supported for torch.compile" in messages[0]
    assert "torch.cond requires dynamo support." in messages[1]


# -- TU201 ---------------------------------------------------------------------------------------
def test_tu201_is_off_by_default_and_a_warning() -> None:
    rule = rule_by_code("TU201")
    assert rule is not None and not rule.enabled_by_default and rule.severity is Severity.WARNING
    assert check("import torch\ny = torch.clamp(A, 0, 1)\n") == []  # default selection


@pytest.mark.parametrize(
    ("code", "fixed"),
    [
        # A bound that is evidently a number: torch alone.
        ("import torch\ny = torch.clamp(A, 0, 1)\n",
         "import torch\ny = torch.where((A >= 0) & (A <= 1), A, torch.clamp(A, 0, 1).detach())\n"),
        ("import torch\ny = torch.clamp(input=A, min=0)\n",
         "import torch\ny = torch.where(A >= 0, A, torch.clamp(input=A, min=0).detach())\n"),
        ("import torch\ny = torch.Tensor.clamp(A, None, 1.0)\n",
         "import torch\ny = torch.where(A <= 1.0, A, torch.Tensor.clamp(A, None, 1.0).detach())\n"),
        ("from torch import clamp_min\ny = clamp_min(A, -1e-3)\n",
         "from torch import clamp_min\nimport torch\ny = torch.where(A >= -1e-3, A, clamp_min(A, -1e-3).detach())\n"),
        ("import torch\neps = 1e-3\ndef f(self):\n    return self.w.clamp(-eps, 1 - eps)\n",
         "import torch\neps = 1e-3\ndef f(self):\n"
         "    return torch.where((self.w >= -eps) & (self.w <= 1 - eps), self.w, self.w.clamp(-eps, 1 - eps).detach())\n"),
        ("import torch\ndef f(x, lo: float, hi):\n    return x.clamp_max(lo * 2)\n",
         "import torch\ndef f(x, lo: float, hi):\n    return torch.where(x <= lo * 2, x, x.clamp_max(lo * 2).detach())\n"),
        ("import torch\ntop = A.max().item()\ny = torch.clamp(A, top, hi)\n",  # torch takes `hi` as a number too
         "import torch\ntop = A.max().item()\ny = torch.where((A >= top) & (A <= hi), A, torch.clamp(A, top, hi).detach())\n"),
        # Bounds that may be tensors, or an input evaluated once: torchup.compat.
        ("import torch as th\ny = th.clip(A, min=lo)\n",
         'import torch as th\nimport torchup.compat\ny = torchup.compat.clamp(A, min=lo, boundary_grad="legacy")\n'),
        ("import torch\ny = (A + 1).clamp(max=1,)\n",
         'import torch\nimport torchup.compat\ny = torchup.compat.clamp(A + 1, max=1, boundary_grad="legacy",)\n'),
        ("import torch\nlo = 0.5\nlo = torch.zeros(3)\ny = torch.clamp(A, lo, hi)\n",
         'import torch\nimport torchup.compat\nlo = 0.5\nlo = torch.zeros(3)\n'
         'y = torchup.compat.clamp(A, lo, hi, boundary_grad="legacy")\n'),
        ("import torch\nimport torchup.compat\ny = torch.clamp(A, lo, hi)\n",
         'import torch\nimport torchup.compat\ny = torchup.compat.clamp(A, lo, hi, boundary_grad="legacy")\n'),
        ("import torch\nimport torchup as tu\ny = torch.clamp(A, lo, hi)\n",
         'import torch\nimport torchup as tu\nimport torchup.compat\ny = tu.compat.clamp(A, lo, hi, boundary_grad="legacy")\n'),
    ],
)
def test_tu201_unsafe_fix(code: str, fixed: str) -> None:
    assert fix(code, unsafe=True, select=["TU201"]) == fixed
    assert fix(code, unsafe=False, select=["TU201"]) == code
    assert all(d.fix is None or d.fix.applicability is Applicability.UNSAFE for d in check(code, ["TU201"]))


def test_tu201_says_which_fix_adds_a_dependency() -> None:
    """The torchup.compat fix says it makes torchup a run-time dependency; the torch-only one says torch only."""
    inline, compat = check("import torch\ny = torch.clamp(A, 0, 1)\nz = torch.clamp(A, lo, hi)\n", ["TU201"])
    assert inline.fix is not None and compat.fix is not None
    assert "torch only" in inline.fix.message and "torchup" not in inline.fix.message
    assert "adds a run-time dependency on torchup (`torchup.compat`)" in compat.fix.message
    assert [r.module for r in compat.fix.imports] == ["torchup.compat"] and not inline.fix.imports
    assert "torch.where(" in (inline.help or "") and "run-time dependency on torchup" in (inline.help or "")


def test_tu201_fix_summary_names_the_dependency(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`torchup fix` ends by naming the files that now import torchup.compat (and only those)."""
    (tmp_path / "a.py").write_text("import torch\ny = torch.clamp(A, lo, hi)\nh = torch.ones(3)\nz = h.clip(lo)\n")
    (tmp_path / "b.py").write_text("import torch\ny = torch.clamp(A, 0, 1)\n")
    code = main(["fix", "--unsafe-fixes", "--select", "TU201", "--no-cache", str(tmp_path)])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "2 fixes added `import torchup.compat`: torchup is now a run-time dependency of " in out
    line = next(line for line in out.splitlines() if "run-time dependency" in line)
    assert "a.py" in line and "b.py" not in line
    (tmp_path / "c.py").write_text("import torch\ny = torch.clamp(A, 0, 1)\n")
    main(["fix", "--unsafe-fixes", "--select", "TU201", "--no-cache", str(tmp_path / "c.py")])
    assert "run-time dependency" not in capsys.readouterr().out


@pytest.mark.parametrize(
    "code",
    [
        "import torch\ntorch.clamp_(A, 0, 1)\n",
        "import torch\ny = torch.clamp_min(A, lo)\n",
        "import torch\ny = torch.clamp_max(A, hi)\n",
        "import torch\ny = torch.clamp_max(A.sum(0), 1)\n",  # a number, but the input would be evaluated twice
        "import torch\nh = torch.ones(3)\nh.clip_(0, 1)\n",
        "import torch\nh = torch.ones(3)\ny = h.clamp_min_(0)\n",
        "import torch\ntorch.clamp(A, 0, 1, out=o)\n",
        "import torch\ny = torch.clamp(input=A, min=lo)\n",
        "import torch\ny = torch.clamp(A, **bounds)\n",
        "import torch\ny = torch.Tensor.clamp(A, lo, hi)\n",
        "import torch\ntorchup = None\ny = torch.clamp(A, lo, hi)\n",  # `import torchup.compat` would rebind it
        "import torch\ntorchup = None\ny = torch.clamp(A, hi.item(), 1)\n",  # nor torch alone: `.item()` runs once
    ],
)
def test_tu201_reported_without_fix(code: str) -> None:
    found = check(code, ["TU201"])
    assert len(found) == 1 and found[0].fix is None
    assert "torchup trace" in (found[0].help or "")


@pytest.mark.parametrize(
    "code",
    [
        "import numpy as np\nimport torch\ny = np.array([1.0]).clip(0, 1)\n",
        "import torch\nclass Box:\n    def clamp(self, lo):\n        return self\n    def g(self):\n        return self.clamp(0)\n",
        "import numpy\ny = x.clamp(0, 1)\n",  # no torch in the file
        "import torch\nimport torch.nn.functional as F\ny = F.hardtanh(A, 0.0, 1.0)\n",
        "import torch\ny = torch.clamp(A, 0, 1).detach()\n",  # no gradient at all
        "import torch\nh = torch.ones(3)\ny = h.clip(lo, hi).detach()\n",
    ],
)
def test_tu201_not_reported(code: str) -> None:
    assert check(code, ["TU201"]) == []


# -- TU202 ---------------------------------------------------------------------------------------
def test_tu202_reports_functions_and_methods_without_fix() -> None:
    code = "import torch\nfrom torch import fmin as fm\na = torch.fmax(x, y)\nb = fm(x, y)\ndef f(x, y):\n    return x.fmin(y)\nd = torch.Tensor.fmax(x, y)\n"
    found = check(code, ["TU202"])
    assert len(found) == 4 and all(d.fix is None and d.severity is Severity.WARNING for d in found)
    assert not rule_by_code("TU202").enabled_by_default  # type: ignore[union-attr]


# -- TU401 ---------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("code", "expected"),
    [
        ("import torch.distributed as dist\ndist.init_process_group(backend)\n", 1),
        ("import torch.distributed as dist\ndist.init_process_group('cpu:gloo,cuda:nccl')\n", 1),
        ("import torch.distributed as dist\ndist.init_process_group('cpu:gloo,cuda:nccl2')\n", 0),
        ("import torch.distributed as dist\ndist.init_process_group('cpu:gloo')\n", 0),
        ("import torch.distributed as dist\ndist.init_process_group('nccl')\n", 0),
        ("import torch.distributed as dist\ndist.init_process_group(dist.Backend.NCCL)\n", 0),
        ("import torch.distributed as dist\ndist.init_process_group(init_method='env://')\n", 0),
        ("from torch.distributed import new_group\ng = new_group([0, 1], None, 'hccl')\n", 1),
        ("from torch.distributed.distributed_c10d import init_process_group\ninit_process_group(backend=cfg.backend)\n", 1),
        ("import torch.distributed as dist\ndist.Backend.register_backend('x', f, devices=['cuda'])\n", 1),
        ("import mylib\nmylib.init_process_group('custom')\n", 0),
    ],
)
def test_tu401(code: str, expected: int) -> None:
    found = check(code, ["TU401"])
    assert len(found) == expected
    assert all(d.severity is Severity.INFO and d.fix is None and "nccl2" in d.message for d in found)


def test_tu401_register_backend_without_devices_mentions_the_new_default() -> None:
    with_devices, without = (
        check(f"import torch.distributed as dist\ndist.Backend.register_backend('x', f{extra})\n", ["TU401"])
        for extra in (", devices='cpu'", "")
    )
    assert "current accelerator" not in with_devices[0].message
    assert "current accelerator" in without[0].message


# -- TU140 ---------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("code", "fixed"),
    [
        (
            "import torch\nprof = torch.profiler.profile(with_stack=True)\nprof.start()\nprof.stop()\nt = prof.key_averages()\n",
            "import torch\nprof = torch.profiler.profile(with_stack=True)\nprof.start()\nprof.stop()\n"
            "t = prof.key_averages(include_python_functions=True)\n",
        ),
        (  # with_stack passed positionally (the 6th parameter of torch.profiler.profile)
            "from torch.profiler import profile\nwith profile(None, None, None, False, False, True) as p:\n    pass\n"
            "t = p.function_events.key_averages(True, 3)\n",
            "from torch.profiler import profile\nwith profile(None, None, None, False, False, True) as p:\n    pass\n"
            "t = p.function_events.key_averages(True, 3, include_python_functions=True)\n",
        ),
    ],
)
def test_tu140_safe_fix(code: str, fixed: str) -> None:
    assert fix(code, select=["TU140"]) == fixed
    found = check(code, ["TU140"])
    assert len(found) == 1 and found[0].severity is Severity.INFO
    assert found[0].fix is not None and found[0].fix.applicability is Applicability.SAFE


@pytest.mark.parametrize(
    "code",
    [
        "import torch\nwith torch.profiler.profile(with_stack=False) as p:\n    pass\np.key_averages()\n",
        "import torch\nwith torch.profiler.profile() as p:\n    pass\np.key_averages()\n",
        "import torch\nwith torch.profiler.profile(with_stack=True) as p:\n    pass\np = other\np.key_averages()\n",
        "import torch\nwith torch.profiler.profile(with_stack=True) as p:\n    pass\np.key_averages(**opts)\n",
        "import torch\nwith torch.profiler.profile(with_stack=True) as p:\n    pass\np.key_averages(False, 0, False, True)\n",
        "from torch.autograd import profiler_legacy\nwith profiler_legacy.profile(with_stack=True) as p:\n    pass\np.key_averages()\n",
        "import mylib\nwith mylib.profile(with_stack=True) as p:\n    pass\np.key_averages()\n",
    ],
)
def test_tu140_not_reported(code: str) -> None:
    assert check(code, ["TU140"]) == []


def test_tu140_is_on_by_default() -> None:
    code = "import torch\nwith torch.profiler.profile(with_stack=True) as p:\n    pass\np.key_averages()\n"
    assert [d.code for d in check(code)] == ["TU140"]
