"""TU505: a CPU round trip for SVD / eigh, which run natively on MPS in torch 2.14."""

from __future__ import annotations

import ast

from torchup.analysis.context import Context
from torchup.analysis.resolver import BindingKind
from torchup.analysis.rule import Change, Example, FixAvailability, LooksFor, Rule, RuleDocs
from torchup.core.diagnostics import Severity
from torchup.rules._modernise import attribute_names, feature, file_strings, keyword, string_value

MPS_LINALG = feature("mps_linalg")
FUNCTIONS = frozenset(MPS_LINALG["functions"])
FIRST_PARAMETER: dict[str, str] = MPS_LINALG["first_parameter"]
TORCH_DEVICE = frozenset({"torch.device"})
# Dtypes MPS does not have: a tensor converted to one of them is on the CPU path on purpose.
DOUBLE_DTYPES = frozenset({"torch.float64", "torch.double", "torch.complex128", "torch.cdouble"})
DOUBLE_METHODS = frozenset({"double", "cdouble"})
CAVEATS = (
    "MPS has no float64, so keep the round trip for double precision; the MPS kernels iterate to a float32 "
    "tolerance, so values may differ from the CPU's LAPACK results in the low-order bits, and singular or "
    "eigen vectors in sign"
)


def _is_cpu(ctx: Context, node: ast.expr) -> bool:
    """``"cpu"`` or ``torch.device("cpu")``."""
    if string_value(node) == "cpu":
        return True
    return (
        isinstance(node, ast.Call)
        and ctx.qualified_name(node.func) in TORCH_DEVICE
        and len(node.args) == 1
        and not node.keywords
        and string_value(node.args[0]) == "cpu"
    )


def _to_double(ctx: Context, node: ast.expr) -> bool:
    """``t.double()``, ``t.to(torch.float64)``, ``t.type(torch.double)`` ...: a conversion to a dtype MPS lacks."""
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
        return False
    if node.func.attr in DOUBLE_METHODS:
        return True
    if node.func.attr not in ("to", "type"):
        return False
    values = [*node.args, *(k.value for k in node.keywords if k.arg == "dtype")]
    return any(ctx.qualified_name(value) in DOUBLE_DTYPES for value in values)


def cpu_move(ctx: Context, node: ast.expr) -> ast.expr | None:
    """The tensor in ``t.cpu()``, ``t.to("cpu")``, ``t.to(device="cpu")``, ``t.to(torch.device("cpu"))``;
    None for anything else (a dtype change as well, ``t.to("cpu", torch.float64)``, is deliberate, and
    so is the move of a tensor just converted to float64, ``t.double().cpu()``)."""
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
        return None
    receiver = node.func.value
    if _to_double(ctx, receiver):
        return None
    if node.func.attr == "cpu" and not node.args and not node.keywords:
        return receiver
    if node.func.attr != "to":
        return None
    arguments = [*node.args, *(k.value for k in node.keywords if k.arg in ("device", "non_blocking"))]
    if len(arguments) != len(node.args) + len(node.keywords):
        return None  # dtype=, copy=, memory_format= or **kwargs: more than a move
    device = node.args[0] if len(node.args) == 1 else None
    if device is None and not node.args:
        found = keyword(node, "device")
        device = found.value if found is not None else None
    return receiver if device is not None and _is_cpu(ctx, device) else None


def _assigned_move(ctx: Context, node: ast.expr) -> tuple[ast.expr, ast.expr] | None:
    """``y`` bound exactly once, by ``y = t.cpu()``: (the move, the tensor ``t``)."""
    if not isinstance(node, ast.Name):
        return None
    found = ctx.resolver.lookup_name(node)
    if len(found.bindings) != 1 or found.bindings[0].kind is not BindingKind.ASSIGNMENT:
        return None
    value = found.bindings[0].value
    tensor = cpu_move(ctx, value) if value is not None else None
    return (value, tensor) if value is not None and tensor is not None else None


def mentions_mps(ctx: Context) -> bool:
    """Does the file name the MPS device anywhere (``"mps"``, ``"mps:0"``, ``torch.backends.mps``)?"""
    if "mps" in attribute_names(ctx):
        return True
    return any(text.lower() == "mps" or text.lower().startswith("mps:") for text in file_strings(ctx))


class MpsLinalgRoundTrip(Rule):
    change = Change.ADOPT
    code = "TU505"
    name = "mps-linalg-cpu-round-trip"
    summary = "A CPU round trip for SVD or eigh: torch 2.14 runs them natively on MPS."
    enabled_by_default = False
    severity = Severity.INFO
    fix_availability = FixAvailability.NONE
    looks_for = LooksFor(names=tuple(sorted(FUNCTIONS)))
    reads_unfocused_bodies = True  # every string and attribute in the file
    docs = RuleDocs(
        what="""
        In files that mention the MPS device (a string `"mps"` / `"mps:0"`, or an attribute
        named `mps` such as `torch.backends.mps`), finds `torch.linalg.svd`, `svdvals`, `eigh`,
        `eigvalsh` and `torch.svd` (any import form) whose matrix argument is moved to the CPU
        right there — `x.cpu()`, `x.to("cpu")`, `x.to(device="cpu")`,
        `x.to(torch.device("cpu"))` — or is a name assigned exactly once from such a move
        (`y = x.cpu()` then `torch.linalg.svd(y)`). Not reported: files that never mention
        MPS (on CUDA the round trip is often deliberate), moves that also change the dtype
        (`.to("cpu", torch.float64)`, `.cpu().double()`, `.double().cpu()`: MPS has no float64), other
        libraries' functions (`numpy.linalg.svd(x.cpu())` needs the CPU, and usually
        `.numpy()`), and Tensor methods (`x.cpu().svd()`). Off by default; informational.
        """,
        why="""
        In torch 2.13 these had no MPS kernel: `_linalg_svd` and `_linalg_eigh`, which all
        five functions reach, were dispatched for CPU and CUDA only, so code written for Apple
        GPUs moved the matrix to the CPU and the results back. torch 2.14 registers MPS
        kernels for both (QR and Cholesky were already there), so the round trip — two copies
        and a synchronisation — can go when the tensor is on MPS.
        """,
        fix="""
        No automatic fix: the code may also run on CUDA or the CPU, and the numbers change.
        Where the tensor lives on MPS, pass it directly and drop the move back:

            U, S, Vh = torch.linalg.svd(x)          # was torch.linalg.svd(x.cpu()), then .to("mps")

        MPS has no float64, so keep the round trip for double precision. The MPS kernels
        iterate to a float32 tolerance: values may differ from the CPU's LAPACK results in the
        low-order bits, and singular or eigen vectors in sign. Keep the round trip where the
        code must also run on torch 2.13.
        """,
        fix_safety="There is no fix: results may differ between devices in the low-order bits.",
        wheels_vs_notes="""
        The release article says Apple Silicon "got native SVD, eigh, QR and Cholesky". In the
        wheels only SVD and eigh are new: torch 2.13.0's `native_functions.yaml` already
        dispatches `linalg_qr.out` (`linalg_qr_out_mps`) and `linalg_cholesky_ex.L` to MPS,
        and 2.14.1 adds MPS to `_linalg_svd.U` and `_linalg_eigh.eigenvalues`. Checked in the
        Linux wheels' dispatch tables, kernel headers (an iterative method with a float32
        tolerance) and MPS test lists; not run on a Mac, so speed and accuracy on real Apple
        GPUs, and whether 2.13 raised or fell back to the CPU, are not verified here.
        """,
    )
    examples = (
        Example(
            "direct and two-step round trips",
            """
            import torch

            device = torch.device("mps")

            def whiten(x):
                U, S, Vh = torch.linalg.svd(x.cpu(), full_matrices=False)
                return (U @ Vh).to(device)

            def spectrum(cov):
                host = cov.to("cpu")
                return torch.linalg.eigvalsh(host).to(device)
            """,
            findings=2,
        ),
        Example(
            "aliases",
            """
            import torch
            from torch.linalg import svdvals as sv

            if torch.backends.mps.is_available():
                s = sv(A.detach().to(device=torch.device("cpu")))
            """,
        ),
        Example(
            "not reported: float64 on purpose, NumPy, a Tensor method",
            """
            import numpy as np
            import torch

            device = "mps"
            w = torch.linalg.eigh(A.to("cpu", torch.float64))
            s = np.linalg.svd(A.cpu().numpy())
            t = np.linalg.svd(A.cpu())
            u = A.cpu().svd()
            """,
            findings=0,
        ),
    )

    def check(self, ctx: Context) -> None:
        calls = ctx.calls_to(FUNCTIONS)
        if not calls or not mentions_mps(ctx):
            return
        for call, qualname in calls:
            argument = call.args[0] if call.args else None
            if argument is None:
                found = keyword(call, FIRST_PARAMETER[qualname])
                argument = found.value if found is not None else None
            if argument is None:
                continue
            tensor = cpu_move(ctx, argument)
            move: ast.expr | None = argument
            if tensor is None:
                assigned = _assigned_move(ctx, argument)
                if assigned is None:
                    continue
                move, tensor = assigned
            short = qualname.rpartition(".")[2]
            ctx.report(
                argument,
                f"`{qualname}` on a matrix moved to the CPU (`{ctx.segment(move)}`): torch 2.14 runs `{short}` "
                "natively on MPS (2.13 had no MPS kernel for it)",
                help=f"when the tensor is on MPS, pass `{ctx.segment(tensor)}` itself and drop the move back to the "
                f"device; {CAVEATS}",
            )


RULE = MpsLinalgRoundTrip()
