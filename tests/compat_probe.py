"""Runs inside a torch virtualenv: torch.clamp against torchup.compat.clamp, eager and compiled.

Input (stdin): JSON {"cases": {name: spec}, "compiled": {"backend": str, "cases": [name, ...]}}, where a spec is
{"x": nested list, "dtype": str, "x_grad": bool, "min": bound, "max": bound, "g": "plain" | "special", "op": the
torch entry point to compare with (default "clamp"; see NATIVE_OPS), "func": bool (torch.func transforms)} and a
bound is null, {"number": v} or {"tensor": nested list, "dtype": str (default: x's), "grad": bool}.
Also {"invalid": [boundary_grad, ...]}: values that must be refused.
Output (stdout): JSON {"torch": version, "eager": {name: {impl: record}}, "compiled": {name: {impl: record}},
"invalid": [ValueError message or null, for clamp then clip]}
with impl one of "native", "legacy", "2.14" (torchup.compat.clamp with that boundary_grad) and a record
{"value", "grads": {"x", "min", "max"}, "jvp", "func"} of encoded tensors (dtype, shape, bytes in hex), or
{"error": type, "message": first line}; compiled records hold "value" and "grads". Used by tests/test_compat.py.
"""

from __future__ import annotations

import json
import math
import sys
import warnings
from pathlib import Path
from typing import Any

import torch
import torch.autograd.forward_ad as fwAD

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
warnings.simplefilter("ignore")

from torchup import compat  # noqa: E402

Tensor = torch.Tensor

IMPLS = ("native", "legacy", "2.14")
SPECIAL = [math.nan, math.inf, -math.inf, -0.0, 1e-45, -3e-39, 5e-324, 1.0, -2.5, 0.0]


def encode(t: Tensor | None) -> dict[str, Any] | None:
    if t is None:
        return None
    flat = t.detach().contiguous().reshape(-1)
    raw = bytes(flat.view(torch.uint8).tolist()) if flat.numel() else b""
    return {"dtype": str(t.dtype), "shape": list(t.shape), "hex": raw.hex()}


def pattern(shape: torch.Size, dtype: torch.dtype, seed: int, special: bool = False) -> Tensor:
    """Deterministic, non-trivial values (the same under every torch version): no random generator involved."""
    n = math.prod(shape)
    if special:
        values = [SPECIAL[(i + seed) % len(SPECIAL)] for i in range(n)]
    else:
        values = [((i * 37 + seed * 11) % 23 - 11.5) / 7 for i in range(n)]  # never 0, inexact
    return torch.tensor(values, dtype=torch.float64).to(dtype).reshape(shape)


def make_inputs(spec: dict[str, Any]) -> tuple[Tensor, Any, Any]:
    dtype = getattr(torch, spec.get("dtype", "float32"))
    x = torch.tensor(spec["x"], dtype=torch.float64).to(dtype)
    x.requires_grad_(spec.get("x_grad", True) and x.is_floating_point())

    def bound(b: Any) -> Any:
        if b is None:
            return None
        if "number" in b:
            return b["number"]
        t = torch.tensor(b["tensor"], dtype=torch.float64).to(getattr(torch, b.get("dtype", spec.get("dtype", "float32"))))
        return t.requires_grad_(b.get("grad", True))

    return x, bound(spec.get("min")), bound(spec.get("max"))


NATIVE_OPS = {
    "clamp": lambda x, lo, hi: torch.clamp(x, lo, hi),
    "clip": lambda x, lo, hi: torch.clip(x, lo, hi),
    "clamp_min": lambda x, lo, hi: torch.clamp_min(x, lo),
    "clamp_max": lambda x, lo, hi: torch.clamp_max(x, hi),
    "Tensor.clamp": lambda x, lo, hi: x.clamp(lo, hi),
    "Tensor.clamp_": lambda x, lo, hi: x.clone().clamp_(lo, hi),
    "Tensor.clip_": lambda x, lo, hi: x.clone().clip_(lo, hi),
    "Tensor.clamp_min_": lambda x, lo, hi: x.clone().clamp_min_(lo),
}


def call(impl: str, x: Tensor, lo: Any, hi: Any, op: str = "clamp") -> Tensor:
    """``impl`` "native": torch's ``op``; else torchup.compat.clamp (clip for "clip") with that boundary_grad."""
    if impl == "native":
        return NATIVE_OPS[op](x, lo, hi)
    return (compat.clip if op == "clip" else compat.clamp)(x, lo, hi, boundary_grad=impl)


def grads(specs: list[dict[str, Any]], inputs: list[tuple[Tensor, Any, Any]], ys: list[Tensor]) -> list[Any]:
    """Gradients of every input that requires grad, for several outputs in one backward pass."""
    wanted, upstream, leaves = [], [], []
    for spec, (x, lo, hi), y in zip(specs, inputs, ys, strict=True):
        mine = {k: v for k, v in {"x": x, "min": lo, "max": hi}.items() if isinstance(v, Tensor) and v.requires_grad}
        leaves.append(mine if y.requires_grad else {})
        if y.requires_grad:
            wanted.append(y)
            upstream.append(pattern(y.shape, y.dtype, 1, special=spec.get("g") == "special"))
    flat = [t for mine in leaves for t in mine.values()]
    found = iter(torch.autograd.grad(wanted, flat, upstream, allow_unused=True) if flat else ())
    return [{k: encode(next(found)) for k in mine} for mine in leaves]


def jvp(impl: str, spec: dict[str, Any]) -> dict[str, Any] | None:
    """Forward-mode AD: every input that requires grad gets a tangent."""
    with fwAD.dual_level():
        args = []
        for seed, t in enumerate(make_inputs(spec)):
            if isinstance(t, Tensor):
                plain = t.detach()
                t = fwAD.make_dual(plain, pattern(plain.shape, plain.dtype, 5 + seed)) if t.requires_grad else plain
            args.append(t)
        return encode(fwAD.unpack_dual(call(impl, *args, spec.get("op", "clamp"))).tangent)


def transforms(impl: str, spec: dict[str, Any]) -> dict[str, Any]:
    """torch.func.jacrev / jacfwd / vmap, and a double backward (gradient of the gradient by the upstream one)."""
    inputs = make_inputs(spec)
    argnums = tuple(i for i, t in enumerate(inputs) if isinstance(t, Tensor) and t.requires_grad)
    plain = [t.detach() if isinstance(t, Tensor) else t for t in inputs]

    def f(x: Tensor, lo: Any, hi: Any) -> Tensor:
        return call(impl, x, lo, hi, spec.get("op", "clamp"))

    out: dict[str, Any] = {
        "jacrev": [encode(j) for j in torch.func.jacrev(f, argnums)(*plain)],
        "jacfwd": [encode(j) for j in torch.func.jacfwd(f, argnums)(*plain)],
        "vmap": encode(torch.func.vmap(f, in_dims=(0, None, None))(torch.stack([plain[0], -plain[0]]), *plain[1:])),
    }
    x = inputs[0]
    y = f(*inputs)
    g = pattern(y.shape, y.dtype, 3).requires_grad_()
    (gx,) = torch.autograd.grad(y, x, g, create_graph=True)
    out["double"] = encode(torch.autograd.grad(gx, g, pattern(gx.shape, gx.dtype, 4))[0])
    return out


def eager(spec: dict[str, Any], impl: str) -> dict[str, Any]:
    try:
        x, lo, hi = make_inputs(spec)
        y = call(impl, x, lo, hi, spec.get("op", "clamp"))
        record: dict[str, Any] = {"value": encode(y), "grads": grads([spec], [(x, lo, hi)], [y])[0]}
        if spec.get("jvp", True):
            record["jvp"] = jvp(impl, spec)
        if spec.get("func"):
            record["func"] = transforms(impl, spec)
        return record
    except Exception as exc:  # the same error from both sides is an equal result
        return {"error": type(exc).__name__, "message": str(exc).splitlines()[0][:300] if str(exc) else ""}


def compiled(specs: dict[str, dict[str, Any]], backend: str) -> dict[str, dict[str, Any]]:
    """Every case under every implementation in one compiled function (one compilation), then one backward."""
    jobs = [(name, impl) for name in specs for impl in IMPLS]
    inputs = [make_inputs(specs[name]) for name, _ in jobs]

    def many(*flat: Any) -> list[Tensor]:
        it = iter(flat)
        return [call(impl, next(it), next(it), next(it), specs[name].get("op", "clamp")) for name, impl in jobs]

    torch._dynamo.reset()
    fn = torch.compile(many, backend=backend, fullgraph=True, dynamic=False)
    ys = fn(*[t for triple in inputs for t in triple])
    found = grads([specs[name] for name, _ in jobs], inputs, ys)
    out: dict[str, dict[str, Any]] = {name: {} for name in specs}
    for (name, impl), y, g in zip(jobs, ys, found, strict=True):
        out[name][impl] = {"value": encode(y), "grads": g}
    return out


def invalid(bad_values: list[Any]) -> list[str | None]:
    """The ValueError message for each bad boundary_grad, from clamp and from clip."""
    messages: list[str | None] = []
    for function in (compat.clamp, compat.clip):
        for bad in bad_values:
            try:
                function(torch.zeros(2), 0.0, 1.0, boundary_grad=bad)
                messages.append(None)
            except ValueError as exc:
                messages.append(str(exc))
    return messages


def main() -> None:
    request = json.load(sys.stdin)
    cases: dict[str, dict[str, Any]] = request["cases"]
    out: dict[str, Any] = {"torch": torch.__version__, "eager": {}, "compiled": {}}
    for name, spec in cases.items():
        out["eager"][name] = {impl: eager(spec, impl) for impl in IMPLS}
    out["invalid"] = invalid(request.get("invalid", []))
    plan = request.get("compiled")
    if plan:
        out["compiled"] = compiled({name: cases[name] for name in plan["cases"]}, plan["backend"])
    json.dump(out, sys.stdout, allow_nan=False)


if __name__ == "__main__":
    main()
