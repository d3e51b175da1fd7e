"""torchup.compat.clamp against the real torch.clamp of torch 2.13.0 and 2.14.1, bit for bit.

The pytest process has no torch: tests/compat_probe.py runs each case inside both torch virtualenvs (the two
at once) and returns values, gradients (of x and of the tensor bounds) and forward-mode tangents as raw bytes.
Under torch V, ``compat.clamp(..., boundary_grad=R)`` must equal ``torch.clamp`` of V when R is V's own rule,
and ``torch.clamp`` of the other release when R is the other rule; eager and under ``torch.compile``.
"""

from __future__ import annotations

import ast
import itertools
import json
import math
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from differential.envs import ensure_env

REPO = Path(__file__).resolve().parents[1]
PROBE = Path(__file__).parent / "compat_probe.py"
VERSIONS = ("2.13.0", "2.14.1")
RULE = {"2.13.0": "legacy", "2.14.1": "2.14"}  # the boundary_grad value that is each release's own rule
OTHER = {"2.13.0": "2.14.1", "2.14.1": "2.13.0"}
COMPILE_BACKEND = "inductor"

pytestmark = pytest.mark.differential

nan, inf = math.nan, math.inf
# Elements on, between, outside and far outside the bounds -1, 0, 0.5, 1, plus NaN and infinities.
X = [-2.0, -1.0, -0.5, 0.0, 0.25, 0.5, 1.0, 2.0, nan, inf, -inf, 1 / 3]
# Every combination of x, min, max drawn from these: ties, min == max, min > max, NaN and infinite bounds.
TABLE = list(itertools.product([-inf, -1.0, 0.0, 1.0, inf, nan], repeat=3))
TX, TLO, THI = ([row[i] for row in TABLE] for i in range(3))
GRID = [[((i * 5 + j * 3) % 9 - 4) / 4 for j in range(8)] for i in range(6)]  # 6x8, values on the bounds below


def number(v: float) -> dict[str, Any]:
    return {"number": v}


def tensor(v: Any, grad: bool = True, dtype: str | None = None) -> dict[str, Any]:
    return {"tensor": v, "grad": grad} | ({"dtype": dtype} if dtype else {})


def case(x: Any, lo: Any, hi: Any, dtype: str = "float32", **extra: Any) -> dict[str, Any]:
    return {"x": x, "min": lo, "max": hi, "dtype": dtype} | extra


CASES: dict[str, dict[str, Any]] = {}
for dt in ("float32", "float64", "bfloat16"):
    CASES |= {
        f"number-both-{dt}": case(X, number(-1.0), number(1.0), dt),
        f"number-min-{dt}": case(X, number(-1.0), None, dt),
        f"number-max-{dt}": case(X, None, number(1.0), dt),
        f"number-equal-{dt}": case(X, number(0.5), number(0.5), dt),
        f"number-crossed-{dt}": case(X, number(1.0), number(-1.0), dt),
        f"number-infinite-{dt}": case(X, number(-inf), number(inf), dt),
        f"table-{dt}": case(TX, tensor(TLO), tensor(THI), dt),
        f"table-min-{dt}": case(TX, tensor(TLO), None, dt),
        f"table-max-{dt}": case(TX, None, tensor(THI), dt),
        f"zero-dim-{dt}": case(X, tensor(-1.0), tensor(1.0), dt),
        f"zero-dim-min-{dt}": case(X, tensor(0.5), None, dt),
        f"zero-dim-max-{dt}": case(X, None, tensor(0.5), dt),
        f"broadcast-{dt}": case(GRID, tensor([[-0.25]] * 6), tensor([[0.5] * 8]), dt),
    }
CASES |= {
    # which inputs require grad (x's gradient must not depend on it)
    "table-no-bound-grad": case(TX, tensor(TLO, grad=False), tensor(THI, grad=False)),
    "table-min-grad-only": case(TX, tensor(TLO), tensor(THI, grad=False)),
    "table-max-grad-only": case(TX, tensor(TLO, grad=False), tensor(THI)),
    "table-bounds-grad-only": case(TX, tensor(TLO), tensor(THI), x_grad=False),
    "zero-dim-no-bound-grad": case(X, tensor(-1.0, grad=False), tensor(1.0, grad=False)),
    "zero-dim-min-no-grad": case(X, tensor(0.5, grad=False), None),
    "zero-dim-equal": case(X, tensor(0.5), tensor(0.5)),
    "zero-dim-crossed": case(X, tensor(1.0), tensor(-1.0)),
    "zero-dim-nan": case(X, tensor(nan), tensor(1.0)),
    # a Python number next to a 0-dim tensor that does not require grad: torch.clamp takes both as numbers
    "mixed-number-min": case(X, number(-1.0), tensor(1.0, grad=False)),
    "mixed-number-max": case(X, tensor(-1.0, grad=False, dtype="float64"), number(0.5), "bfloat16"),
    "mixed-number-int": case(X, tensor(-1, grad=False, dtype="int64"), number(0.5), "float64"),
    "number-nan": case(X, number(nan), number(1.0)),
    "number-int-bounds": case(X, number(-1), number(1)),
    # x broadcast against a larger bound: x's gradient is summed
    "x-broadcast": case(GRID[0], tensor(GRID), tensor([[0.5]] * 6)),
    "x-broadcast-min": case(GRID[0], tensor(GRID), None, "bfloat16"),
    # bounds that are not representable in x's dtype, and mixed dtypes (type promotion)
    "inexact-number-bfloat16": case([0.1, 0.1000001, 0.09, 0.3, 0.30000001], number(0.1), number(0.3), "bfloat16"),
    "inexact-tensor-bfloat16": case([0.1, 0.09, 0.3, 0.31], tensor(0.1, dtype="float64"), tensor(0.3, dtype="float64"), "bfloat16"),
    "promote-bfloat16-float32": case(TX, tensor(TLO, dtype="float32"), tensor(THI, dtype="float32"), "bfloat16"),
    "promote-float32-float64": case(GRID, tensor([[-0.25]] * 6, dtype="float64"), tensor(0.5, dtype="float64")),
    "int-x-number": case([-3, 0, 2, 5], number(0.5), number(2.0), "int64"),
    "int-x-tensor": case([-3, 0, 2, 5], tensor([0.5, 0.0, 2.5, 1.0]), tensor(2.0)),
    # upstream gradients with NaN, infinities, -0.0 and subnormals (where vs multiply, rounding of the halves)
    "special-grad-number": case(X, number(-1.0), number(1.0), g="special"),
    "special-grad-table": case(TX, tensor(TLO), tensor(THI), g="special"),
    "special-grad-table-bfloat16": case(TX, tensor(TLO), tensor(THI), "bfloat16", g="special"),
    "special-grad-min": case(TX, tensor(TLO), None, "float64", g="special"),
    "table-float16": case(TX, tensor(TLO), tensor(THI), "float16", g="special"),
    # torch.func transforms (jacrev, jacfwd, vmap) and a double backward
    "func-number": case(X, number(-1.0), number(1.0), "float64", func=True),
    "func-zero-dim": case(X, tensor(-1.0), tensor(1.0), "float64", func=True),
    "func-broadcast": case(GRID, tensor([[-0.25]] * 6), tensor([[0.5] * 8]), func=True),
    "func-min": case(X, tensor(0.5), None, func=True),
    # the other entry points with the same rule: compat.clamp (compat.clip for torch.clip) reproduces each.
    # Except for forward-mode AD at ties in 2.13: torch.clamp_min(x, t) sends the tangent to x where x == t,
    # torch.clamp(x, min=t) to t (compat.clamp follows torch.clamp); hence jvp=False for those three.
    "op-clip": case(TX, tensor(TLO), tensor(THI), op="clip"),
    "op-clip-number": case(X, number(-1.0), number(1.0), op="clip"),
    "op-clamp_min": case(TX, tensor(TLO), None, op="clamp_min", jvp=False),
    "op-clamp_min-number": case(X, number(0.5), None, op="clamp_min"),
    "op-clamp_max": case(TX, None, tensor(THI), op="clamp_max", jvp=False),
    "op-clamp_max-number": case(X, None, number(0.5), "bfloat16", op="clamp_max"),
    "op-method": case(GRID, tensor(0.25), tensor([[0.5] * 8]), op="Tensor.clamp"),
    "op-inplace": case(TX, tensor(TLO), tensor(THI), op="Tensor.clamp_"),
    "op-inplace-clip-number": case(X, number(-1.0), number(0.5), op="Tensor.clip_"),
    "op-inplace-min": case(X, tensor(0.5), None, op="Tensor.clamp_min_", jvp=False),
    # what torch.clamp rejects
    "error-no-bounds": case(X, None, None),
    "error-complex": case(X, number(0.0), number(1.0), "complex64"),
    "error-shape": case(X, tensor([0.0, 1.0]), None),
    "error-clip-no-bounds": case(X, None, None, op="clip"),
    "error-mixed-grad": case(X, number(-1.0), tensor(1.0)),  # a tensor that requires grad is not a number
    "error-mixed-vector": case(X, tensor([-1.0] * 12, grad=False), number(1.0)),
}
# A few cases under torch.compile (one compilation per implementation: all these cases in one graph).
COMPILED = [
    "number-both-float32", "number-equal-float32", "table-float32", "table-min-bfloat16", "zero-dim-float32",
    "zero-dim-equal", "broadcast-bfloat16", "table-no-bound-grad", "x-broadcast",
]
INVALID = ["2.13", "new", "Legacy", "", None, 2.14]
FULL_COMPILED = os.environ.get("TORCHUP_COMPAT_ALL_COMPILED") == "1"  # every non-error case compiled (slow)


def start_probe(version: str, request: Path) -> subprocess.Popen[str]:
    """Start one probe; the two releases run at the same time."""
    env = os.environ | {"PYTHONPATH": str(REPO), "OMP_NUM_THREADS": "1"}
    with request.open() as stdin:
        return subprocess.Popen(
            [str(ensure_env(version)), str(PROBE)], stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True, env=env,
        )


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    compiled = [c for c in CASES if not c.startswith("error-")] if FULL_COMPILED else COMPILED
    request = tmp_path_factory.mktemp("compat") / "request.json"
    request.write_text(json.dumps({"cases": CASES, "compiled": {"backend": COMPILE_BACKEND, "cases": compiled}, "invalid": INVALID}))
    processes = {version: start_probe(version, request) for version in VERSIONS}
    results = {}
    for version, process in processes.items():
        stdout, stderr = process.communicate(timeout=600)
        assert process.returncode == 0, stderr[-3000:]
        results[version] = json.loads(stdout)
        assert results[version]["torch"].startswith(version)
    return results


def describe(a: Any, b: Any) -> str:
    return f"\n  got:      {json.dumps(a)[:600]}\n  expected: {json.dumps(b)[:600]}"


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("name", list(CASES))
def test_own_rule_matches_torch_clamp(runs: dict[str, Any], version: str, name: str) -> None:
    """Under torch V, boundary_grad=<V's rule> equals V's torch.clamp: value, every gradient, tangent, error."""
    record = runs[version]["eager"][name]
    assert record[RULE[version]] == record["native"], describe(record[RULE[version]], record["native"])


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("name", list(CASES))
def test_other_rule_matches_other_release(runs: dict[str, Any], version: str, name: str) -> None:
    """Under torch V, boundary_grad=<the other release's rule> equals that release's own torch.clamp."""
    other = OTHER[version]
    mine, theirs = runs[version]["eager"][name][RULE[other]], runs[other]["eager"][name]["native"]
    assert mine == theirs, describe(mine, theirs)


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("name", COMPILED)
def test_compiled_matches(runs: dict[str, Any], version: str, name: str) -> None:
    """Under torch.compile (fullgraph, inductor) each rule equals the compiled torch.clamp of its release.

    Compiled results are compared with compiled ones: Inductor itself differs from eager mode in NaN payloads
    (clamp's NaN comes out as 0xffffffff) and in the summation order of broadcast gradients (last bits).
    """
    compiled = runs[version]["compiled"][name]
    own, other = RULE[version], RULE[OTHER[version]]
    assert compiled[own] == compiled["native"], describe(compiled[own], compiled["native"])
    theirs = runs[OTHER[version]]["compiled"][name]["native"]
    assert compiled[other] == theirs, describe(compiled[other], theirs)


def test_the_rules_differ(runs: dict[str, Any]) -> None:
    """A control: the cases do tell the two releases apart (else the tests above would prove nothing)."""
    differ = [n for n in CASES if runs["2.13.0"]["eager"][n]["native"] != runs["2.14.1"]["eager"][n]["native"]]
    assert {"number-both-float32", "table-float32", "zero-dim-float32", "broadcast-bfloat16"} <= set(differ)
    assert not [n for n in differ if n.startswith("error-")]


def test_errors_only_where_expected(runs: dict[str, Any]) -> None:
    """Only the error-* cases raise (a probe failure on both sides would otherwise look like agreement)."""
    for version in VERSIONS:
        for name, record in runs[version]["eager"].items():
            raised = {impl for impl, r in record.items() if "error" in r}
            assert raised == (set(record) if name.startswith("error-") else set()), (version, name, record)


def test_values_do_not_depend_on_the_rule(runs: dict[str, Any]) -> None:
    for version in VERSIONS:
        for name, record in runs[version]["eager"].items():
            values = {impl: r.get("value", r.get("error")) for impl, r in record.items()}
            assert len({json.dumps(v) for v in values.values()}) == 1, (version, name, values)


@pytest.mark.parametrize("version", VERSIONS)
def test_invalid_boundary_grad(runs: dict[str, Any], version: str) -> None:
    """clamp and clip refuse anything but "legacy" and "2.14" with a ValueError that names both."""
    messages = runs[version]["invalid"]
    assert len(messages) == 2 * len(INVALID)
    for message, bad in zip(messages, INVALID * 2, strict=True):
        assert message is not None, bad
        assert message.startswith("boundary_grad must be 'legacy'") and "'2.14'" in message, message
        assert message.endswith(f"got {bad!r}"), message


def test_torchup_does_not_import_compat() -> None:
    """The linter never needs torch: no module of torchup imports torchup.compat (strings naming it are fine)."""
    for path in (REPO / "torchup").rglob("*.py"):
        if path.name == "compat.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                assert not [a for a in node.names if a.name.startswith("torchup.compat")], path
            elif isinstance(node, ast.ImportFrom):
                module = ("." * node.level) + (node.module or "")
                names = {a.name for a in node.names}
                assert not (module.endswith("compat") or (module in {"torchup", "."} and "compat" in names)), path
