#!/usr/bin/env python3
"""Confirm facts of torchup/data/api_changes.json by running code under real torch releases.

    python3 tools/confirm_facts.py [--python ~/.cache/torchup/envs/torch-2.13.0/bin/python ...]

Each probe below runs in a fresh interpreter of each given environment (default: the torch 2.13.0 and
2.14.1 venvs under ~/.cache/torchup/envs) and says whether the fact holds there: the warning is raised,
the default is the new one. The results go to docs/api-diff/confirmed.json, and every change of
api_changes.json whose (kind, name, parameter) a probe confirmed in at least one environment is marked
`confirmed_by_run: true` (tools/api_history.py reads the same file when it regenerates the data). A
maintainer's command: it needs the venvs, so CI never runs it.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import api_history

ENVS = Path.home() / ".cache" / "torchup" / "envs"
PYTHONS = [ENVS / "torch-2.13.0" / "bin" / "python", ENVS / "torch-2.14.1" / "bin" / "python"]

# Run before each probe: `warned(fn, category, text)` calls fn and answers whether it warned so.
PRELUDE = """
import json, warnings
import torch

def warned(fn, category=Warning, text=""):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            fn()
        except Exception as exc:
            hits = [w for w in caught if issubclass(w.category, category) and text in str(w.message)]
            if hits:
                return True, f"{hits[0].category.__name__}: {str(hits[0].message)[:160]}"
            return False, f"raised {type(exc).__name__}: {str(exc)[:160]}"
    hits = [w for w in caught if issubclass(w.category, category) and text in str(w.message)]
    if hits:
        return True, f"{hits[0].category.__name__}: {str(hits[0].message)[:160]}"
    return False, "no warning" + (f" (saw: {str(caught[0].message)[:120]})" if caught else "")

def report(result):
    print("RESULT " + json.dumps({"confirmed": bool(result[0]), "detail": result[1]}))
"""


def probe(kind: str, name: str, code: str, parameter: str | None = None) -> dict:
    return {"kind": kind, "name": name, "parameter": parameter, "code": code}


def deprecated(name: str, call: str, category: str = "Warning", text: str = "") -> dict:
    return probe("deprecated", name, f"report(warned(lambda: {call}, {category}, {text!r}))")


T = "torch.ones(2, 2)"
PROBES = [
    probe(
        "default-changed",
        "torch.load",
        """
import io, pickle
class Custom:
    pass
buffer = io.BytesIO()
torch.save({"x": Custom()}, buffer)
buffer.seek(0)
try:
    torch.load(buffer)
    report((False, "loaded an arbitrary object: weights_only defaults to False"))
except pickle.UnpicklingError as exc:
    report((True, "UnpicklingError without weights_only=: the default is True"))
""",
        "weights_only",
    ),
    probe(
        "default-changed",
        "torch.onnx.export",
        """
import inspect
default = inspect.signature(torch.onnx.export).parameters["dynamo"].default
report((default is True, f"dynamo default: {default!r}"))
""",
        "dynamo",
    ),
    deprecated("torch.cuda.amp.autocast", "torch.cuda.amp.autocast()", "FutureWarning", "torch.cuda.amp.autocast"),
    deprecated("torch.cuda.amp.GradScaler", "torch.cuda.amp.GradScaler()", "FutureWarning", "GradScaler"),
    deprecated("torch.cuda.amp.custom_fwd", "torch.cuda.amp.custom_fwd(lambda x: x)", "FutureWarning", "custom_fwd"),
    deprecated("torch.cuda.amp.custom_bwd", "torch.cuda.amp.custom_bwd(lambda x: x)", "FutureWarning", "custom_bwd"),
    deprecated("torch.cpu.amp.autocast", "torch.cpu.amp.autocast()", "FutureWarning", "torch.cpu.amp.autocast"),
    deprecated("torch.cpu.amp.GradScaler", "torch.cpu.amp.GradScaler()", "FutureWarning", "GradScaler"),
    deprecated(
        "torch.backends.cuda.sdp_kernel", "torch.backends.cuda.sdp_kernel().__enter__()", "FutureWarning", "sdp_kernel"
    ),
    deprecated(
        "torch.set_default_tensor_type", "torch.set_default_tensor_type(torch.FloatTensor)", "Warning", "deprecated"
    ),
    deprecated(
        "torch.nn.utils.weight_norm",
        "torch.nn.utils.weight_norm(torch.nn.Linear(2, 2))",
        "FutureWarning",
        "weight_norm",
    ),
    deprecated(
        "torch.utils._pytree._register_pytree_node",
        "torch.utils._pytree._register_pytree_node(type('P', (), {}), lambda x: ([], None), lambda v, c: None)",
        "FutureWarning",
        "_register_pytree_node",
    ),
    deprecated(
        "torch.testing.assert_allclose", f"torch.testing.assert_allclose({T}, {T})", "FutureWarning", "assert_allclose"
    ),
    deprecated("torch.chain_matmul", f"torch.chain_matmul({T}, {T})", "Warning", "deprecated"),
    deprecated("torch.lu", "torch.lu(torch.eye(2))", "Warning", "deprecated"),
    deprecated(
        "torch.lu_solve",
        "torch.lu_solve(torch.ones(2, 1), *torch.linalg.lu_factor(torch.eye(2)))",
        "Warning",
        "deprecated",
    ),
    deprecated(
        "torch.triangular_solve", "torch.triangular_solve(torch.ones(2, 1), torch.eye(2))", "Warning", "deprecated"
    ),
    deprecated("torch.range", "torch.range(0, 3)", "Warning", "deprecated"),
    deprecated("torch.nn.init.uniform", "torch.nn.init.uniform(torch.empty(2))", "FutureWarning", "deprecated"),
    deprecated(
        "functorch.vmap", "__import__('functorch').vmap(torch.sin)(torch.ones(2))", "FutureWarning", "functorch.vmap"
    ),
    deprecated("torch.get_autocast_gpu_dtype", "torch.get_autocast_gpu_dtype()", "Warning", "deprecated"),
    deprecated("torch.get_autocast_cpu_dtype", "torch.get_autocast_cpu_dtype()", "Warning", "deprecated"),
    probe(
        "parameter-deprecated",
        "torch.utils.checkpoint.checkpoint",
        """
import torch.utils.checkpoint as cp
x = torch.ones(2, requires_grad=True)
ok, detail = warned(lambda: cp.checkpoint(torch.sin, x), Warning, "use_reentrant")
if not ok and "use_reentrant" in detail:
    ok, detail = True, "now raises without it: " + detail
report((ok, detail))
""",
        "use_reentrant",
    ),
    probe(
        "parameter-deprecated",
        "torch.optim.lr_scheduler.StepLR",
        """
opt = torch.optim.SGD([torch.nn.Parameter(torch.ones(1))], lr=0.1)
report(warned(lambda: torch.optim.lr_scheduler.StepLR(opt, 1, verbose=True), Warning, "verbose"))
""",
        "verbose",
    ),
    probe(
        "module-deprecated",
        "torch.distributed._tensor",
        """
import importlib
report(warned(lambda: importlib.import_module("torch.distributed._tensor"), Warning, ""))
""",
    ),
]


def run_probe(python: Path, code: str) -> dict:
    try:
        out = subprocess.run([str(python), "-c", PRELUDE + code], capture_output=True, text=True, timeout=300)
    except subprocess.TimeoutExpired:
        return {"confirmed": False, "detail": "timed out"}
    for line in out.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[len("RESULT ") :])
    return {"confirmed": False, "detail": ("failed: " + (out.stderr.strip().splitlines() or ["?"])[-1])[:200]}


def version_of(python: Path) -> str:
    code = "import importlib.metadata as m; print(m.version('torch'))"
    return subprocess.run([str(python), "-c", code], capture_output=True, text=True, check=True).stdout.strip()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], prog="confirm_facts.py")
    parser.add_argument("--python", type=Path, action="append", help="an interpreter with torch (repeatable)")
    parser.add_argument("--data", type=Path, default=api_history.OUTPUT)
    parser.add_argument("--output", type=Path, default=api_history.CONFIRMED)
    parser.add_argument(
        "--apply-only", action="store_true", help="run nothing: mark the data from the results already in --output"
    )
    args = parser.parse_args(argv)
    data = json.loads(args.data.read_text()) if args.data.exists() else None
    known = {(r["kind"], r["name"], r.get("parameter")) for r in data["changes"]} if data else set()
    known |= {("deprecated", item["name"], None) for item in api_history.NOT_DETECTABLE}
    if args.apply_only:
        confirmed = json.loads(args.output.read_text())
        for record in confirmed["probes"]:
            record.pop("not_in_data", None)
            if (record["kind"], record["name"], record["parameter"]) not in known:
                record["not_in_data"] = True
        args.output.write_text(json.dumps(confirmed, indent=1, ensure_ascii=False) + "\n")
        if data is not None:
            args.data.write_text(api_history.dump(api_history.apply_confirmations(data, confirmed)))
        return 0
    pythons = args.python or PYTHONS
    versions = {str(p): version_of(p) for p in pythons}
    probes = []
    for p in PROBES:
        results = {versions[str(py)]: run_probe(py, p["code"]) for py in pythons}
        record = {k: p[k] for k in ("kind", "name", "parameter")}
        record["confirmed"] = any(r["confirmed"] for r in results.values())
        record["results"] = {v: f"{'yes' if r['confirmed'] else 'no'}: {r['detail']}" for v, r in results.items()}
        if (p["kind"], p["name"], p["parameter"]) not in known:
            record["not_in_data"] = True
        probes.append(record)
        print(f"confirm_facts: {p['kind']} {p['name']} {p['parameter'] or ''}: {record['results']}", file=sys.stderr)
    confirmed = {
        "_about": "Facts of torchup/data/api_changes.json checked by running code (tools/confirm_facts.py);"
        " `confirmed`: the fact held in at least one of the environments.",
        "environments": sorted(versions.values()),
        "probes": probes,
    }
    args.output.write_text(json.dumps(confirmed, indent=1, ensure_ascii=False) + "\n")
    if data is not None:
        args.data.write_text(api_history.dump(api_history.apply_confirmations(data, confirmed)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
