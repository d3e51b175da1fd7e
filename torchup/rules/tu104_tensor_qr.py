"""TU104: the Tensor method ``x.qr()`` raises in torch 2.14."""

from __future__ import annotations

from torchup.analysis.context import Context
from torchup.analysis.rule import Example, FixAvailability, LooksFor, Rule, RuleDocs
from torchup.rules._linalg import Signature, TensorMethod, removed_error
from torchup.rules.tu103_torch_qr import SIGNATURE as FUNCTION_SIGNATURE
from torchup.rules.tu103_torch_qr import qr_arguments

METHOD_SIGNATURE = Signature(("some",))  # the method never took out=
METHOD = TensorMethod(
    "qr",
    "torch.linalg.qr",
    FUNCTION_SIGNATURE,
    METHOD_SIGNATURE,
    qr_arguments,
    'use `torch.linalg.qr(x, mode="reduced" | "complete")`',
)


class TensorQr(Rule):
    code = "TU104"
    name = "tensor-qr-removed"
    summary = "`Tensor.qr()` raises in torch 2.14; use `torch.linalg.qr(x, mode=...)`."
    fix_availability = FixAvailability.SOMETIMES
    looks_for = LooksFor(names=("torch.Tensor.qr",), methods=("qr",))
    docs = RuleDocs(
        what="Finds method calls `x.qr(...)` in files that import torch, and the unbound "
        "`torch.Tensor.qr`, skipping receivers known not to be tensors, with the confidence the "
        "receiver's evidence gives (as TU102 does).",
        why=f"""
        The method shares the removed function's stub in torch 2.14:

            {removed_error()} `torch.qr` is deprecated in favor of `torch.linalg.qr` ...
        """,
        fix="`x.qr(some=S)` becomes `torch.linalg.qr(x)` / `mode=\"complete\"` / "
        "`mode=\"reduced\" if S else \"complete\"`, exactly as TU103 maps `some`.",
        fix_safety="Safe when the receiver is evidently a tensor, unsafe otherwise (see TU102); "
        "Q and R are bit-identical to 2.13.",
    )
    examples = (
        Example(
            "a tensor built by torch",
            """
            import torch
            M = torch.randn(5, 3, dtype=torch.float64) + A[0, 0]
            Q, R = M.qr(some=False)
            """,
            fixed="""
            import torch
            M = torch.randn(5, 3, dtype=torch.float64) + A[0, 0]
            Q, R = torch.linalg.qr(M, mode="complete")
            """,
        ),
        Example(
            "a parameter annotated as a tensor",
            """
            import torch

            def orthonormal(m: torch.Tensor) -> torch.Tensor:
                q, _ = m.qr()
                return q

            Q = orthonormal(A)
            """,
            fixed="""
            import torch

            def orthonormal(m: torch.Tensor) -> torch.Tensor:
                q, _ = torch.linalg.qr(m)
                return q

            Q = orthonormal(A)
            """,
        ),
        Example(
            "not a tensor: sympy and numpy",
            """
            import numpy as np
            import sympy
            import torch
            Q, R = sympy.Matrix([[1, 2], [3, 4]]).QRdecomposition()
            q = np.array([[1.0]]).qr()
            """,
            findings=0,
        ),
    )

    def check(self, ctx: Context) -> None:
        METHOD.check(ctx)

RULE = TensorQr()
