"""Code that only runs on an old torch is not reported (torchup/analysis/old_torch.py)."""

from __future__ import annotations

import textwrap

import pytest

from helpers import check


def codes(source: str, select: str = "TU62") -> list[tuple[int, str]]:
    return [(d.line, d.code) for d in check(textwrap.dedent(source).lstrip("\n"), select=[select])]


@pytest.mark.parametrize(
    "source",
    [
        # the fallback of a try that imports the new API
        """
        try:
            from torch.func import vmap
        except ImportError:
            from functorch import vmap
        """,
        """
        try:
            from torch.func import vmap
        except (ModuleNotFoundError, AttributeError):
            import functorch
            vmap = functorch.vmap
        """,
        # a removed module inside a try that catches the failure (a change that raises)
        """
        try:
            from torch._six import inf
        except ImportError:
            from math import inf
        """,
        # version branches, both directions and spellings
        """
        import torch
        from packaging import version
        if version.parse(torch.__version__) >= version.parse("2.4"):
            pass
        else:
            import functorch
            y = functorch.jacrev(f)
        """,
        """
        import torch
        if torch.__version__ < "2.0":
            w = torch.chain_matmul(a, b)
        """,
        """
        import torch
        if (2, 0) > TORCH_VERSION:
            w = torch.chain_matmul(a, b)
        """,
        """
        import torch
        if _TORCH_GREATER_EQUAL_2_0:
            pass
        else:
            w = torch.chain_matmul(a, b)
        """,
        """
        import torch
        if not hasattr(torch, "func"):
            import functorch
            w = functorch.vmap(f)
        """,
        """
        import torch
        w = torch.chain_matmul(a, b) if torch.__version__ < "1.9" else torch.linalg.multi_dot([a, b])
        """,
        # a helper named for the comparison (kornia), and a flag
        """
        import torch
        if torch_version_geq(1, 13):
            w = torch.linalg.lu_factor(A)
        else:
            w = torch.lu(A)
        """,
        """
        import torch
        if TORCH_VERSION < (1, 9):
            w = torch.chain_matmul(a, b)
        """,
    ],
)
def test_old_torch_only_code_is_not_reported(source: str) -> None:
    assert codes(source) == []


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        # the try body runs on every release: a deprecation there warns on the target
        (
            """
            try:
                from functorch import vmap
            except ImportError:
                vmap = None
            """,
            [(2, "TU620")],
        ),
        # a fallback after something that is not torch runs on the target too
        (
            """
            try:
                import apex
            except ImportError:
                from functorch import vmap
            """,
            [(4, "TU620")],
        ),
        # the new branch of a version test, and code after it, are reported
        (
            """
            import torch
            if torch.__version__ >= "2.0":
                w = torch.chain_matmul(a, b)
            w = torch.chain_matmul(a, b)
            """,
            [(3, "TU624"), (4, "TU624")],
        ),
        # a handler for something else than an import of torch: not a fallback (Megatron unpickling)
        (
            """
            import torch
            try:
                state = torch.load(path)
            except ModuleNotFoundError:
                import functorch
                state = functorch.vmap(f)
            """,
            [(6, "TU620")],
        ),
        # a comparison of another version (fairseq's own state-dict version)
        (
            """
            import torch
            if utils.item(state.get("decoder.version", torch.Tensor([1]))[0]) < 2:
                w = torch.chain_matmul(a, b)
            """,
            [(3, "TU624")],
        ),
        # a version test of something else than torch says nothing
        (
            """
            import sys
            import torch
            if sys.version_info < (3, 8):
                w = torch.chain_matmul(a, b)
            """,
            [(4, "TU624")],
        ),
    ],
)
def test_code_that_runs_on_new_torch_is_reported(source: str, expected: list[tuple[int, str]]) -> None:
    assert codes(source) == expected


def test_a_broad_handler_is_no_probe_for_the_api() -> None:
    """`except RuntimeError` also catches a failed factorisation: the code depends on the call."""
    source = """
        import torch
        try:
            L = torch.cholesky(A)
        except RuntimeError:
            L = None
    """
    assert codes(source, select="TU101") == [(3, "TU101")]
