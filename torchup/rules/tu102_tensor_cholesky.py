"""TU102: the Tensor method ``x.cholesky()`` raises in torch 2.14."""

from __future__ import annotations

from torchup.analysis.context import Context
from torchup.analysis.rule import Example, FixAvailability, LooksFor, Rule, RuleDocs
from torchup.rules._linalg import Signature, TensorMethod, removed_error
from torchup.rules.tu101_torch_cholesky import SIGNATURE as FUNCTION_SIGNATURE
from torchup.rules.tu101_torch_cholesky import cholesky_arguments

METHOD_SIGNATURE = Signature(("upper",), star_kwargs_ok=True)  # the method never took out=
METHOD = TensorMethod(
    "cholesky",
    "torch.linalg.cholesky",
    FUNCTION_SIGNATURE,
    METHOD_SIGNATURE,
    cholesky_arguments,
    'use `torch.linalg.cholesky(x, upper=...)`',
)


class TensorCholesky(Rule):
    code = "TU102"
    name = "tensor-cholesky-removed"
    summary = "`Tensor.cholesky()` raises in torch 2.14; use `torch.linalg.cholesky(x)`."
    fix_availability = FixAvailability.SOMETIMES
    looks_for = LooksFor(names=("torch.Tensor.cholesky",), methods=("cholesky",))
    docs = RuleDocs(
        what="Finds method calls `x.cholesky(...)` in files that import torch, and the unbound "
        "`torch.Tensor.cholesky`. Receivers known not to be tensors are skipped: numpy, scipy, "
        "sympy, cupy, jax, tensorflow and gpytorch objects, literals, modules, names the file never "
        "binds, and instances of a class that defines `cholesky` (in the file; in the project when "
        "nothing says the receiver is a tensor). Each finding says how sure it is that the receiver "
        "is a tensor: `certain`, `likely` (`torch.load(...)`) or `possible` (torchup/analysis/"
        "receivers.py).",
        why=f"""
        The method shares the removed function's stub in torch 2.14:

            {removed_error()} `torch.cholesky` is deprecated in favor of `torch.linalg.cholesky`.
        """,
        fix="`x.cholesky(upper=X)` becomes `torch.linalg.cholesky(x, upper=X)`; a positional "
        "`upper` becomes the keyword; `import torch` is added when the file has no such binding.",
        fix_safety="""
        Safe when the receiver is evidently a tensor: the result of a torch factory or operation,
        arithmetic on one, `.mT`/`.T`/`.mH` of one, or a name annotated `torch.Tensor` or
        assigned only such values. Unsafe otherwise: if the object is not a tensor, its own
        `cholesky` method would no longer be called. The results are bit-identical to 2.13.
        """,
    )
    examples = (
        Example(
            "receiver evidently a tensor",
            """
            import torch
            S = torch.eye(A.shape[-1]) + A @ A.mT
            U = S.cholesky(True)
            """,
            fixed="""
            import torch
            S = torch.eye(A.shape[-1]) + A @ A.mT
            U = torch.linalg.cholesky(S, upper=True)
            """,
        ),
        Example(
            "receiver of unknown type: unsafe fix",
            """
            import torch

            def factor(m):
                return m.cholesky()

            L = factor(A)
            """,
            fixed="""
            import torch

            def factor(m):
                return torch.linalg.cholesky(m)

            L = factor(A)
            """,
            unsafe=True,
        ),
        Example(
            "the unbound method",
            """
            import torch
            L = torch.Tensor.cholesky(A, False)
            """,
            fixed="""
            import torch
            L = torch.linalg.cholesky(A, upper=False)
            """,
        ),
        Example(
            "a class with its own cholesky method, and numpy",
            """
            import numpy as np
            import torch

            class Preconditioner:
                def cholesky(self, m):
                    return torch.linalg.cholesky(m)

                def apply(self, m):
                    return self.cholesky(m)

            M = np.eye(3)
            N = np.asarray(M).cholesky()
            """,
            findings=0,
        ),
    )

    def check(self, ctx: Context) -> None:
        METHOD.check(ctx)

RULE = TensorCholesky()
