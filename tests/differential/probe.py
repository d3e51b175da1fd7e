"""Runs inside a torch virtualenv: executes snippets on fixed inputs and prints what they computed.

Input (stdin): JSON {"cases": {id: source}}, optionally with {"inputs": {variant: {name: {"values":
nested list, "dtype": str}}}}: run on those inputs instead of the default ones (NaN and infinities
allowed). Output (stdout): JSON {id: {variant: record}} where a record holds every tensor the
snippet left in its namespace (dtype, shape, raw bytes in hex), the gradient of each input, or the
type of the exception it raised. Used by tests/test_differential.py and test_differential_tu201.py.
"""

from __future__ import annotations

import json
import sys
import warnings
from pathlib import Path
from typing import Any

import torch

# Fixed code may import torchup's run-time helpers (torchup.compat): make the checkout importable.
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
warnings.simplefilter("ignore")


def _spd(n: int, dtype: torch.dtype, batch: tuple[int, ...] = ()) -> torch.Tensor:
    g = torch.Generator().manual_seed(1234)
    m = torch.randn(*batch, n, n, generator=g, dtype=torch.float64)
    if dtype.is_complex:
        m = torch.complex(m, torch.randn(*batch, n, n, generator=g, dtype=torch.float64))
    s = m @ m.mH + n * torch.eye(n, dtype=m.dtype)
    return s.to(dtype)


def _non_hermitian() -> torch.Tensor:
    """Positive definite in its upper triangle, but not symmetric: upper=True must read the upper."""
    s = _spd(4, torch.float64)
    g = torch.Generator().manual_seed(99)
    return s + torch.triu(0.25 * torch.randn(4, 4, generator=g, dtype=torch.float64), diagonal=1)


def variants() -> dict[str, dict[str, torch.Tensor]]:
    g = torch.Generator().manual_seed(7)
    return {
        "float64": {"A": _spd(4, torch.float64), "B": torch.randn(4, 2, generator=g, dtype=torch.float64)},
        "float32-non-hermitian": {"A": _non_hermitian().float(), "B": torch.randn(4, 2, generator=g)},
        "complex128": {"A": _spd(3, torch.complex128), "B": torch.randn(3, 2, generator=g, dtype=torch.complex128)},
        "batched-float32": {"A": _spd(4, torch.float32, (2,)), "B": torch.randn(2, 4, 3, generator=g)},
        "wide-float64": {"A": torch.randn(3, 5, generator=g, dtype=torch.float64), "B": torch.randn(3, 2, generator=g)},
        "empty": {"A": torch.empty(0, 0), "B": torch.empty(0, 2)},
    }


def given_variants(spec: dict[str, dict[str, Any]]) -> dict[str, dict[str, torch.Tensor]]:
    """Inputs spelled out in the request: values (built in float64, then cast) and a dtype."""
    return {
        variant: {name: torch.tensor(t["values"], dtype=torch.float64).to(getattr(torch, t["dtype"]))
                  for name, t in inputs.items()}
        for variant, inputs in spec.items()
    }


def encode(value: Any, depth: int = 0) -> Any:
    if isinstance(value, torch.Tensor):
        flat = value.detach().cpu().contiguous().reshape(-1)
        raw = bytes(flat.view(torch.uint8).tolist()) if flat.numel() else b""
        real = torch.view_as_real(flat) if flat.is_complex() else flat
        floats = real.double().reshape(-1).tolist() if real.is_floating_point() else []
        return {"dtype": str(value.dtype), "shape": list(value.shape), "hex": raw.hex(), "floats": floats}
    if isinstance(value, (tuple, list)) and depth < 3:
        items = [encode(v, depth + 1) for v in value]
        return items if any(i is not None for i in items) else None
    if isinstance(value, (bool, int, float, complex, str)) and not isinstance(value, type):
        return repr(value)
    return None  # modules, functions, profilers: not results


def run(source: str, inputs: dict[str, torch.Tensor], grad: bool) -> dict[str, Any]:
    torch.manual_seed(0)
    leaves = {name: t.clone().requires_grad_(grad and (t.is_floating_point() or t.is_complex()))
              for name, t in inputs.items()}
    namespace: dict[str, Any] = {"__name__": "__snippet__", **leaves}
    try:
        exec(compile(source, "<snippet>", "exec"), namespace)
        outputs = {k: encode(v) for k, v in namespace.items() if k not in leaves and not k.startswith("__")}
        outputs = {k: v for k, v in outputs.items() if v is not None}
        if grad:
            tensors = [v for k, v in namespace.items() if isinstance(v, torch.Tensor) and k not in leaves]
            tensors += [t for v in namespace.values() if isinstance(v, tuple) for t in v if isinstance(t, torch.Tensor)]
            total = sum(((t.real if t.is_complex() else t).sum() for t in tensors if t.requires_grad), torch.zeros(()))
            if total.requires_grad:
                total.backward()
            outputs["grads"] = {k: encode(t.grad) for k, t in leaves.items() if t.grad is not None}
        return {"ok": True, "values": outputs}
    except Exception as exc:  # the same failure on both sides is an equal result
        return {"ok": False, "error": type(exc).__name__, "message": str(exc).splitlines()[0][:200] if str(exc) else ""}


def main() -> None:
    request = json.load(sys.stdin)
    cases = request["cases"]
    chosen = given_variants(request["inputs"]) if "inputs" in request else variants()
    results = {}
    for case_id, source in cases.items():
        results[case_id] = {
            f"{variant}{'+grad' if grad else ''}": run(source, inputs, grad)
            for variant, inputs in chosen.items()
            for grad in (False, True)
        }
    json.dump({"torch": torch.__version__, "results": results}, sys.stdout)


if __name__ == "__main__":
    main()
