"""TU201's fixes, proven by execution on inputs that sit on the bounds: each snippet runs as written
under torch 2.13.0 and as ``torchup fix --unsafe-fixes --select TU201`` rewrites it under 2.14.1,
and every value and gradient must match bit for bit.

The rule's own examples run in tests/test_differential.py on the shared inputs, where few elements
meet a bound. Here the inputs are built for it: elements equal to a bound (also -0.0 against 0.0),
``min == max``, ``min > max``, NaN and infinities in the input and in tensor bounds, broadcast and
0-dim tensor bounds, odd upstream gradients (NaN, infinities, -0.0, subnormals: ``* G``), in
float32, float64 and bfloat16, 75 elements long so that both the vectorised loop and the scalar
tail of torch's kernels see every kind of element.
"""

from __future__ import annotations

import json
import math
import subprocess
from pathlib import Path
from typing import Any

import pytest

from differential.envs import ensure_env
from helpers import fix

pytestmark = pytest.mark.differential

PROBE = Path(__file__).parent / "differential" / "probe.py"
nan, inf = math.nan, math.inf
N = 75


def cycle(values: list[float], n: int = N) -> list[float]:
    return [values[i % len(values)] for i in range(n)]


# The last three elements (the scalar tail of a vectorised loop): ties, one of them of opposite zeros.
X = [*cycle([-2.0, -1.0, -0.5, -0.0, 0.0, 0.25, 0.5, 1.0, 2.0, nan, inf, -inf, 1 / 3, 0.1, 0.3, -0.25], N - 3),
     -0.0, 0.5, 0.0]
LO = [*cycle([-1.0, 0.0, -0.0, 0.5, nan, -inf, 1.0, -0.25, 2.0], N - 3), 0.0, -1.0, -0.0]
HI = [*cycle([1.0, 0.5, 0.0, -0.0, inf, 0.5, -1.0, 1 / 3, nan, 0.25, 2.0], N - 3), 1.0, 0.5, 0.0]
G = cycle([nan, inf, -inf, -0.0, 1e-45, -3e-39, 5e-324, 1.0, -2.5, 0.0, 0.75, 3.0, -0.5])
M = [[((i * 5 + j * 3) % 9 - 4) / 4 for j in range(8)] for i in range(6)]
MLO = [[v] for v in (-0.25, 0.0, -0.5, 0.5, -1.0, 0.25)]
MHI = [[0.5, 0.25, 1.0, 0.5, 0.0, 0.75, -0.25, 1.0]]
MG = [cycle([1.0, -0.0, 2.5, nan, -1.0, 0.5, inf], 8)[i:] + cycle([1.0, -0.0, 2.5, nan, -1.0, 0.5, inf], 8)[:i]
      for i in range(6)]
VALUES: dict[str, Any] = {"X": X, "LO": LO, "HI": HI, "G": G, "M": M, "MLO": MLO, "MHI": MHI, "MG": MG,
                          "L0": -0.0, "H0": 0.5}
INPUTS = {dtype: {name: {"values": v, "dtype": dtype} for name, v in VALUES.items()}
          for dtype in ("float32", "float64", "bfloat16")}

# Receivers bound in the snippet, so that methods on them are reported whatever torchup infers of
# names bound nowhere in a file.
HEAD = "import torch\nX = torch.as_tensor(X)\nM = torch.as_tensor(M)\n"
# A bound that is evidently a number: the torch-only form.
TORCH_ONLY = {
    "function-both": "y = torch.clamp(X, -1.0, 1.0) * G",
    "function-min-zero": "y = torch.clamp(X, min=0.0) * G",
    "method-max-negative-zero": "y = X.clamp(max=-0.0) * G",
    "clip-min-equals-max": "y = torch.clip(X, 0.5, 0.5) * G",
    "min-above-max": "y = torch.clamp(X, 1.0, -1.0) * G",
    "names": "t = 0.5\ny = torch.clamp(X, -t, t) * G",
    "item-and-none": "top = X.detach()[7].item()\ny = X.clip(None, top) * G",
    "clamp_min": "y = torch.clamp_min(X, 0.25) * G",
    "clamp_max-method": "y = X.clamp_max(1 / 3) * G",
    "unbound": "y = torch.Tensor.clamp(X, -1.0, 0.0) * G",
    "math-inf": "import math\ny = torch.clamp(X, -math.inf, 0.5) * G",
    "int-bounds": "y = torch.clamp(X, -1, 1) * G",
    "number-and-0-dim-tensor": "h = H0.detach()\ny = torch.clamp(X, 0.0, h) * G",
    "from-import": "from torch import clip\ny = clip(X, -0.5, 0.5) * G",
    "annotated-parameter": "def f(x: torch.Tensor, eps: float) -> torch.Tensor:\n    return x.clamp(min=eps)\n"
                           "y = f(X, 0.25) * G",
    "matrix": "y = M.clamp(-0.25, 0.5) * MG",
}
# Bounds that may be tensors, or an input that is an expression: torchup.compat.
COMPAT = {
    "tensor-bounds": "y = torch.clamp(X, LO, HI) * G",
    "tensor-min-method": "y = X.clamp(LO) * G",
    "tensor-max-clip": "y = torch.clip(X, max=HI) * G",
    "broadcast-bounds": "y = M.clamp(MLO, MHI) * MG",
    "0-dim-bounds": "y = torch.clamp(X, L0, H0) * G",
    "expression-input": "y = torch.clamp(X * 1, -1.0, 1.0) * G",
}
SOURCES = {name: HEAD + body + "\n" for name, body in {**TORCH_ONLY, **COMPAT}.items()}
FIXED = {name: fix(source, unsafe=True, select=["TU201"]) for name, source in SOURCES.items()}
UNCHANGED_ON_2_14 = {"min-above-max"}  # no element is within the bounds: gradient 0 in both releases


def probe(version: str, cases: dict[str, str]) -> dict[str, Any]:
    completed = subprocess.run(
        [str(ensure_env(version)), str(PROBE)],
        input=json.dumps({"cases": cases, "inputs": INPUTS}),
        capture_output=True, text=True, timeout=900,
    )
    assert completed.returncode == 0, completed.stderr[-3000:]
    result = json.loads(completed.stdout)
    assert result["torch"].startswith(version)
    return result["results"]


@pytest.fixture(scope="module")
def runs() -> dict[str, dict[str, Any]]:
    return {"old": probe("2.13.0", SOURCES), "new": probe("2.14.1", FIXED), "unfixed": probe("2.14.1", SOURCES)}


def bits(record: dict[str, Any]) -> Any:
    """What a run computed, without the float rendering (NaN payloads and -0.0 are in the bytes)."""
    if not record["ok"]:
        return record["error"]

    def strip(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: strip(v) for k, v in value.items() if k != "floats"}
        return [strip(v) for v in value] if isinstance(value, list) else value

    return strip(record["values"])


def test_the_inputs_meet_the_bounds() -> None:
    """A control on the inputs: ties of every kind, in the vectorised body and in the tail."""
    ties_lo = [i for i in range(N) if X[i] == LO[i]]
    ties_hi = [i for i in range(N) if X[i] == HI[i]]
    assert len(ties_lo) >= 4 and len(ties_hi) >= 4 and max(ties_lo + ties_hi) >= 72
    assert any(X[i] == LO[i] == 0 and math.copysign(1, X[i]) != math.copysign(1, LO[i]) for i in range(N))
    assert any(LO[i] == HI[i] for i in range(N)) and any(LO[i] > HI[i] for i in range(N))


@pytest.mark.parametrize("case", sorted(SOURCES))
def test_the_fix_takes_the_expected_form(case: str) -> None:
    fixed = FIXED[case]
    assert fixed != SOURCES[case], "no fix applied"
    assert ("torchup.compat" in fixed) == (case in COMPAT), fixed
    if case in TORCH_ONLY:
        assert ".where(" in fixed and ".detach())" in fixed, fixed


@pytest.mark.parametrize("case", sorted(SOURCES))
def test_fixed_code_on_2_14_matches_original_on_2_13(runs: dict[str, dict[str, Any]], case: str) -> None:
    old, new = runs["old"][case], runs["new"][case]
    assert set(old) == set(new) and any(record["ok"] for record in old.values())
    for variant, before in old.items():
        assert bits(new[variant]) == bits(before), f"{variant}: 2.14 fixed differs from 2.13\n{FIXED[case]}"


@pytest.mark.parametrize("case", sorted(set(SOURCES) - UNCHANGED_ON_2_14))
def test_original_code_changes_on_2_14(runs: dict[str, dict[str, Any]], case: str) -> None:
    """The control: unfixed, 2.14 computes another gradient on these inputs (else the test above proves nothing)."""
    old, unfixed = runs["old"][case], runs["unfixed"][case]
    assert any(bits(unfixed[v]) != bits(old[v]) for v in old if v.endswith("+grad"))
    assert all(bits(unfixed[v]) == bits(old[v]) for v in old if not v.endswith("+grad")), "values changed"
