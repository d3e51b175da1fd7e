"""The modernisation rules TU501-TU505: off by default, selected with ``--select TU5``, silent for a
target release before 2.14, and precise about import forms and look-alikes.

The earliest target release the CLI and the configuration accept is "2.14", so "a target that
predates the feature" is tested through the checker's own release filter: ``applies_to_release``
directly, and a ``Checker`` whose per-file settings name target version "2.13" (the path every
file takes, ``Checker.rules_for``).
"""

from __future__ import annotations

import textwrap
import time
from pathlib import Path

import pytest

from helpers import check
from torchup.check.checker import Checker, FileSettings, applies_to_release
from torchup.cli.main import main
from torchup.core.diagnostics import Severity
from torchup.core.source import SourceFile
from torchup.rules import all_rules, rule_by_code
from torchup.settings.selection import select_rules

CODES = ["TU501", "TU502", "TU503", "TU504", "TU505"]
# One snippet per rule, each with exactly one finding of that rule.
SNIPPETS = {
    "TU501": """
        import torch
        y = torch.cond(A.sum() > 0, lambda t: t, lambda t: torch.cond(t.sum() > 1, abs, abs, (t,)), (A,))
        """,
    "TU502": """
        import torch._dynamo
        torch._dynamo.mark_dynamic(A, 0)
        """,
    "TU503": """
        import torch
        fast = torch.compile(model, mode="max-autotune")
        """,
    "TU504": """
        import torch.distributed as dist
        dist.init_process_group("nccl")
        """,
    "TU505": """
        import torch
        S = torch.linalg.svdvals(A.cpu()).to("mps")
        """,
}


def found(code: str, snippet: str, select: list[str] | None = None) -> list:
    return [d for d in check(snippet, select=select or [code]) if d.code == code]


def one(code: str, snippet: str):
    (diagnostic,) = found(code, snippet)
    return diagnostic


# -- selection and release ---------------------------------------------------------------------
@pytest.mark.parametrize("code", CODES)
def test_off_by_default_and_informational(code: str) -> None:
    rule = rule_by_code(code)
    assert rule is not None and not rule.enabled_by_default
    assert rule.severity is Severity.INFO and rule.since == "2.14"
    assert rule not in select_rules(all_rules())
    assert code not in {d.code for d in check(SNIPPETS[code])}  # the default selection


@pytest.mark.parametrize("code", CODES)
def test_reported_with_the_prefix_selector(code: str) -> None:
    assert len(found(code, SNIPPETS[code], select=["TU5"])) == 1


def test_prefix_selects_exactly_the_group() -> None:
    def checks(selector: str) -> list[str]:  # the engine's TU000/TU001 come with any selection
        return [rule.code for rule in select_rules(all_rules(), [selector]) if not rule.engine_emitted]

    assert checks("TU5") == CODES
    assert checks("tu50") == CODES


def test_cli_select_tu5(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "m.py"
    path.write_text("".join(textwrap.dedent(s) for s in SNIPPETS.values()))
    # (code written for torch 2.13: no finding by default; from 2.0, TU612 would report its NCCL group)
    assert main(["check", "--no-cache", "--from-version", "2.13", "--output-format", "concise", str(path)]) == 0
    capsys.readouterr()
    assert main(["check", "--no-cache", "--select", "TU5", "--target-version", "2.14", "--output-format", "concise",
                 str(path)]) == 1
    out = capsys.readouterr().out
    assert sorted({line.split()[1] for line in out.splitlines() if " TU5" in line}) == CODES


@pytest.mark.parametrize("code", CODES)
def test_release_filter(code: str) -> None:
    rule = rule_by_code(code)
    assert not applies_to_release(rule, "2.13")
    assert applies_to_release(rule, "2.14") and applies_to_release(rule, "2.15")


@pytest.mark.parametrize(("target", "expected"), [("2.13", 0), ("2.14", 1), ("2.15", 1)])
@pytest.mark.parametrize("code", CODES)
def test_silent_when_the_target_predates_the_feature(code: str, target: str, expected: int) -> None:
    rules = tuple(select_rules(all_rules(), ["TU5"]))
    checker = Checker(list(rules), settings_for=lambda _: FileSettings(rules, None, target))
    source = SourceFile.from_bytes("snippet.py", textwrap.dedent(SNIPPETS[code]).encode())
    assert [d.code for d in checker.analyze(source).diagnostics].count(code) == expected


# -- TU501 -------------------------------------------------------------------------------------
def test_tu501_four_way_chain_is_one_finding_with_the_index() -> None:
    diagnostic = one("TU501", """
        import torch as th
        out = th.cond(
            p0, f0,
            lambda *ops: th.cond(p1, f1, lambda *o: th.cond(p2, f2, f3, o), ops),
            (x,),
        )
        """)
    assert "3 nested `torch.cond` calls make a 4-way choice" in diagnostic.message
    assert "there is no `torch.switch`" in diagnostic.message
    assert "torch.where(p0, 0, torch.where(p1, 1, torch.where(p2, 2, 3)))" in diagnostic.help
    assert "`f0`, `f1`, `f2`, `f3`" in diagnostic.help and "clamped" in diagnostic.help


def test_tu501_both_branches_nested() -> None:
    diagnostic = one("TU501", """
        from torch._higher_order_ops import cond
        inner = lambda t: cond(t.max() > 1, a, b, (t,))
        out = cond(x.sum() > 0, inner, lambda t: cond(t.min() < 0, c, d, (t,)), (x,))
        """)
    assert "4-way" in diagnostic.message
    assert "torch.where(p0, torch.where(p1, 0, 1), torch.where(p2, 2, 3))" in diagnostic.help
    assert "p1 = `t.max() > 1`" in diagnostic.help


@pytest.mark.parametrize(
    "snippet",
    [
        # a single cond
        "import torch\ny = torch.cond(p, f, g, (x,))\n",
        # the branch is a parameter: nothing to see
        "import torch\ndef run(branch):\n    return torch.cond(p, f, branch, (x,))\n",
        # the inner call is not torch's cond
        "import torch\nfrom jax.lax import cond\ny = torch.cond(p, f, lambda t: cond(q, f, g, t), (x,))\n",
        # a local function named cond shadows nothing from torch
        "def cond(p, a, b, ops):\n    return a(*ops) if p else b(*ops)\ny = cond(p, f, lambda t: cond(q, f, g, (t,)), (x,))\n",
        # the branch does more than return the inner cond
        "import torch\ndef g(t):\n    u = t + 1\n    return torch.cond(q, f, f, (u,))\ny = torch.cond(p, f, g, (x,))\n",
        # a branch that calls its own cond again
        "import torch\ndef f(t):\n    return torch.cond(t.sum() > 0, f, g, (t,))\ny = torch.cond(p, f, f, (x,))\n",
    ],
    ids=["single", "parameter", "jax-inner", "local-cond", "branch-does-more", "recursive"],
)
def test_tu501_not_reported(snippet: str) -> None:
    assert found("TU501", snippet) == []


def test_tu501_shared_branches_are_bounded() -> None:
    """A def used as both branches of its cond doubles the tree at every level: 20 such levels once
    took seconds and wrote a help of megabytes. Now a chain is expanded up to 16 conds, and the
    message counts each call once."""
    lines = ["import torch"]
    for level in range(20):
        after = f"f{level + 1}" if level < 19 else "abs"
        lines.append(f"def f{level}(t):\n    return torch.cond(t.sum() > {level}, {after}, {after}, (t,))")
    lines.append("y = torch.cond(x.sum() > 0, f0, f0, (x,))")
    started = time.perf_counter()
    diagnostic = one("TU501", "\n".join(lines) + "\n")
    assert time.perf_counter() - started < 5
    assert diagnostic.help is not None and len(diagnostic.help) < 5000
    assert diagnostic.message.startswith("16 nested `torch.cond` calls make a 17-way choice")
    diamond = one("TU501", """
        import torch
        def inner(t):
            return torch.cond(t.sum() > 1, abs, abs, (t,))
        y = torch.cond(x.sum() > 0, inner, inner, (x,))
        """)
    assert diamond.message.startswith("2 nested `torch.cond` calls make a 4-way choice")


# -- TU502 -------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "snippet",
    [
        "from torch._dynamo import mark_dynamic as md\nmd(x, 0)\n",
        "import torch._dynamo.decorators as dec\ndec.mark_dynamic(x, [0, 1])\n",
        "import torch\nf = torch.compiler.compile(g, dynamic_shapes=dict(x={0: b}))\n",
        "from torch import export\nep = export.export(m, (x,), dynamic_shapes={'x': {0: b}})\n",
        "import torch\n@torch.compile(dynamic_shapes={'x': spec})\ndef f(x):\n    return x\n",
    ],
    ids=["alias", "decorators-module", "compiler-compile-dict-call", "export", "compile-decorator"],
)
def test_tu502_reported(snippet: str) -> None:
    assert one("TU502", snippet).severity is Severity.INFO


def test_tu502_mark_dynamic_help_spells_the_decorator() -> None:
    diagnostic = one("TU502", "import torch\ntorch._dynamo.mark_dynamic(x, 1, min=2, max=64)\n")
    assert '@dynamic_spec({"x": TensorSpec([STATIC, ShapeVar("x_1", min=2, max=64), ...])})' in diagnostic.help
    assert "unbacked" in diagnostic.help and "ValueError" in diagnostic.help


def test_tu502_decorator_stacked_under_compile_is_an_error() -> None:
    diagnostic = one("TU502", """
        import torch
        from torch.fx.experimental.dynamic_spec import dynamic_spec

        @torch.compile(dynamic_shapes={"x": spec})
        @dynamic_spec({"x": spec})
        def f(x):
            return x
        """)
    assert diagnostic.severity is Severity.ERROR
    assert "Both `@dynamic_spec(...)` is attached" in diagnostic.message


@pytest.mark.parametrize(
    "snippet",
    [
        # the function given by keyword
        "@dynamic_spec({'x': spec})\ndef f(x):\n    return x\ng = torch.compile(model=f, dynamic_shapes={'x': spec})\n",
        # a module whose forward carries the decorator: torch.compile and torch.export.export read `forward`
        "class M(torch.nn.Module):\n    @dynamic_spec({'x': spec})\n    def forward(self, x):\n        return x\n"
        "g = torch.compile(M(), dynamic_shapes=spec)\n",
        "class M(torch.nn.Module):\n    @dynamic_spec({'x': spec})\n    def forward(self, x):\n        return x\n"
        "m = M()\nep = torch.export.export(mod=m, args=(x,), dynamic_shapes={'x': {0: b}})\n",
    ],
    ids=["compile-model-keyword", "compile-module", "export-module-keyword"],
)
def test_tu502_conflicts_found_through_keywords_and_modules(snippet: str) -> None:
    header = "import torch\nfrom torch.fx.experimental.dynamic_spec import dynamic_spec\n"
    diagnostic = one("TU502", header + snippet)
    assert diagnostic.severity is Severity.ERROR and "Both `@dynamic_spec(...)`" in diagnostic.message


def test_tu502_help_for_a_far_dimension_stays_short() -> None:
    # The help spelled one `STATIC` per dimension before the marked one: 10**9 of them for this line.
    diagnostic = one("TU502", "import torch\ntorch._dynamo.mark_dynamic(x, 1000000000, min=2)\n")
    assert diagnostic.help is not None and len(diagnostic.help) < 1000 and "ShapeVar(..., min=2)" in diagnostic.help


@pytest.mark.parametrize(
    "snippet",
    [
        "import torch\nf = torch.compile(g, dynamic_shapes=None)\n",
        "import torch\nf = torch.compile(g, dynamic_shapes=spec)\n",
        "import torch\ntorch._dynamo.maybe_mark_dynamic(x, 0)\n",
        "import torch\nf = torch.compile(g, dynamic=True)\n",
        "import mylib\nmylib.mark_dynamic(x, 0)\nmylib.compile(g, dynamic_shapes={})\n",
        "import torch\ndef dict(**kw):\n    return kw\nf = torch.compile(g, dynamic_shapes=dict(x=1))\n",
    ],
    ids=["none", "variable", "maybe-mark-dynamic", "dynamic-true", "other-library", "shadowed-dict"],
)
def test_tu502_not_reported(snippet: str) -> None:
    assert found("TU502", snippet) == []


# -- TU503 -------------------------------------------------------------------------------------
def test_tu503_help_names_option_value_and_variable() -> None:
    diagnostic = one("TU503", 'from torch.compiler import compile\nf = compile(m, mode="max-autotune-no-cudagraphs")\n')
    assert 'max_autotune_gemm_backends = "ATEN,TRITON,CPP,NVGEMM"' in diagnostic.help
    assert "TORCHINDUCTOR_MAX_AUTOTUNE_GEMM_BACKENDS=ATEN,TRITON,CPP,NVGEMM" in diagnostic.help
    assert "`cutlass.operators`" in diagnostic.help


@pytest.mark.parametrize(
    "snippet",
    [
        'import torch\nMODE = "max-autotune"\nf = torch.compile(m, mode=MODE)\n',
        'import torch\nf = torch.compile(m, options={"max_autotune": False})\n',
        'import torch\nf = torch.compile(m, mode="max-autotune")\n# env\nimport os\n'
        'os.environ["TORCHINDUCTOR_MAX_AUTOTUNE_GEMM_BACKENDS"] = "ATEN"\n',
        'import jax\nf = jax.compile(m, mode="max-autotune")\n',
        'import torch\nf = torch.compile(m, mode="max-autotune", options=None)\n'
        'torch._inductor.config.max_autotune_gemm_backends = "ATEN"\n',
        # another backend gets the mode for itself: Inductor's GEMM backends are never read
        'import torch\nf = torch.compile(m, backend="eager", mode="max-autotune")\n',
        'import torch\ndef mine(gm, inputs):\n    return gm\n'
        'f = torch.compile(m, backend=mine, options={"max_autotune": True})\n',
    ],
    ids=["mode-variable", "options-false", "env-configured", "other-library", "option-configured",
         "eager-backend", "local-backend"],
)
def test_tu503_not_reported(snippet: str) -> None:
    assert found("TU503", snippet) == []


def test_tu503_inductor_backend_named_or_unknown_is_reported() -> None:
    assert one("TU503", 'import torch\nf = torch.compile(m, backend="inductor", mode="max-autotune")\n')
    assert one("TU503", 'import torch\nf = torch.compile(m, backend=cfg.backend, mode="max-autotune")\n')


# -- TU504 -------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("snippet", "written"),
    [
        ('from torch.distributed.distributed_c10d import init_process_group as ipg\nipg(backend="NCCL")\n',
         'backend="nccl2"'),
        ("import torch.distributed as dist\ng = dist.new_group([0], None, dist.Backend.NCCL)\n", 'backend="nccl2"'),
        ('import torch.distributed as dist\ng = dist.new_group(backend="cuda:nccl,cpu:gloo")\n',
         'backend="cuda:nccl2,cpu:gloo"'),
    ],
    ids=["alias-upper-case", "backend-constant", "per-device"],
)
def test_tu504_reported_with_the_string_to_write(snippet: str, written: str) -> None:
    diagnostic = one("TU504", snippet)
    assert written in diagnostic.help and "TORCH_DIST_USE_NCCL2=1" in diagnostic.help


def test_tu504_either_side_of_a_conditional_backend() -> None:
    diagnostic = one("TU504", 'import torch.distributed as dist\ndist.init_process_group(backend="gloo" if cpu else "nccl")\n')
    assert diagnostic.column == 52 and 'backend="nccl2"' in diagnostic.help
    assert found("TU504", 'import torch.distributed as dist\ndist.init_process_group("gloo" if cpu else name)\n') == []


def test_tu504_timeout_caveat_only_where_it_applies() -> None:
    plain = one("TU504", 'import torch.distributed as dist\ndist.init_process_group("nccl")\n')
    mixed = one("TU504", 'import torch.distributed as dist\ndist.init_process_group("cpu:gloo,cuda:nccl")\n')
    assert "30-minute" in plain.help and "30-minute" not in mixed.help


@pytest.mark.parametrize(
    "snippet",
    [
        'import horovod\nhorovod.init_process_group("nccl")\n',
        'import torch.distributed as dist\ndist.init_process_group("nccl-legacy")\n',
        'import torch.distributed as dist\ndist.new_group([0], backend="cpu:gloo,cuda:nccl2")\n',
        'import torch.distributed as dist\ndist.init_process_group(backend)\n',
        'import torch.distributed as dist\ndist.init_process_group("gloo")\n',
    ],
    ids=["other-library", "legacy", "already-nccl2", "computed", "gloo"],
)
def test_tu504_not_reported(snippet: str) -> None:
    assert found("TU504", snippet) == []


# -- TU505 -------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "snippet",
    [
        'from torch import linalg as LA\nw, v = LA.eigh(x.cpu())\nd = "mps"\n',
        'import torch\ns = torch.linalg.svdvals(A=x.to("cpu", non_blocking=True))\nd = "mps:0"\n',
        "import torch\nU, S, V = torch.svd(input=x.to(device='cpu'))\nok = torch.mps.is_available()\n",
        'import torch\nh = x.cpu()\nw = torch.linalg.eigvalsh(h)\nd = torch.device("mps")\n',
    ],
    ids=["module-alias", "keyword-argument", "torch-svd", "assigned-once"],
)
def test_tu505_reported(snippet: str) -> None:
    diagnostic = one("TU505", snippet)
    assert "natively on MPS" in diagnostic.message and "float64" in diagnostic.help


@pytest.mark.parametrize(
    "snippet",
    [
        "import torch\nU, S, Vh = torch.linalg.svd(x.cpu())\n",  # no mention of MPS
        'import numpy\nU, S, Vh = numpy.linalg.svd(x.cpu())\nd = "mps"\n',
        'import scipy.linalg\nU, S, Vh = scipy.linalg.svd(x.cpu())\nd = "mps"\n',
        'import torch\nh = x.cpu()\nh = h * 2\nw = torch.linalg.eigvalsh(h)\nd = "mps"\n',
        'import torch\nw = torch.linalg.eigvalsh(x.cpu().double())\nd = "mps"\n',
        'import torch\nw = torch.linalg.eigvalsh(x.to(torch.float64))\nd = "mps"\n',
        'import torch\nw = torch.linalg.eigvalsh(x.to("cpu", dtype=torch.float64))\nd = "mps"\n',
        'import torch\nw = torch.linalg.eigvalsh(x.to("cuda"))\nd = "mps"\n',
        # converted to float64 first, then moved: MPS has no float64, the move is deliberate
        'import torch\nw = torch.linalg.eigvalsh(x.double().cpu())\nd = "mps"\n',
        'import torch\nw = torch.linalg.svd(x.to(torch.float64).cpu())\nd = "mps"\n',
        'import torch\nh = x.to(dtype=torch.double).to("cpu")\nw = torch.linalg.eigh(h)\nd = "mps"\n',
    ],
    ids=["no-mps", "numpy", "scipy", "assigned-twice", "double", "dtype-only", "dtype-keyword", "other-device",
         "double-then-cpu", "to-float64-then-cpu", "assigned-double-then-cpu"],
)
def test_tu505_not_reported(snippet: str) -> None:
    assert found("TU505", snippet) == []
