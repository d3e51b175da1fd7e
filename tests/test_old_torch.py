"""Code that only runs on an old torch is not reported (torchup/analysis/old_torch.py)."""

from __future__ import annotations

import ast
import textwrap

import pytest

from helpers import check
from torchup.analysis.old_torch import enclosing


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
        """
        import torch
        if torch.__version__.startswith("1."):
            w = torch.chain_matmul(a, b)
        """,

        """
        import torch
        if not torch.__version__.startswith(("0.", "1.")):
            pass
        else:
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
        # a "2.1" prefix matches 2.13 too: not old-only
        (
            """
            import torch
            if torch.__version__.startswith("2.1"):
                w = torch.chain_matmul(a, b)
            """,
            [(3, "TU624")],
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


def _enclosing_by_scan(tree: ast.AST, node: ast.AST) -> list[tuple[ast.AST, ast.AST]]:
    """``enclosing`` as plainly as it can be written: every child of every level in turn."""
    target = (node.lineno, node.col_offset, node.end_lineno, node.end_col_offset)  # type: ignore[attr-defined]
    chain: list[tuple[ast.AST, ast.AST]] = []
    current = tree
    while current is not node:
        for child in ast.iter_child_nodes(current):
            if child is node or (
                hasattr(child, "end_lineno")
                and (child.lineno, child.col_offset) <= target[:2]  # type: ignore[attr-defined]
                and target[2:] <= (child.end_lineno, child.end_col_offset)  # type: ignore[attr-defined]
            ):
                chain.append((current, child))
                current = child
                break
        else:
            break
    return chain


_ODD_ORDERS = '''
import torch
table = {**base, "a": torch._C.Value, **more, "b": [torch.qr(x) for x in xs if x], "c": f"{torch.qr(y)!r:>{w}}"}
with open(p) as f, torch.no_grad():
    pass
match command:
    case {"k": torch.qr(z), **rest} if torch.qr(z):
        pass
def f(a, /, b=torch.qr(1), *args, c=torch.qr(2), **kw) -> torch.Tensor:
    global g
    try:
        import functorch
    except ImportError:
        functorch = None
    return lambda: torch.qr(a) if a else (yield torch.qr(b))
x = torch.qr(a)[0]; y = torch.qr(b)
'''


def test_enclosing_bisects_to_the_same_chain_as_a_scan() -> None:
    """The bisection over a list field's items (``_spanning_item``) finds what a scan of every child
    finds, for every node, where items share a position (f-strings before 3.12), lack one
    (comprehensions, `with` items, match cases), or are `None` (a dict's `**`)."""
    tree = ast.parse(_ODD_ORDERS)
    nodes = [node for node in ast.walk(tree) if hasattr(node, "end_lineno")]
    assert len(nodes) > 100
    for node in nodes:
        assert enclosing(tree, node) == _enclosing_by_scan(tree, node), ast.dump(node)


def test_a_return_in_a_probe_for_a_keyword_is_a_fallback() -> None:
    """`weights_only=` came in 1.13: an older torch raises TypeError, and the handler's call runs there
    only, whether the probe assigns or returns what torch gives."""
    for statement in ("return torch.load(m, weights_only=True)", "state = torch.load(m, weights_only=True)"):
        source = f"""
            import torch
            def restore(m):
                try:
                    {statement}
                except TypeError:
                    return torch.load(m)
            """
        assert codes(source, "TU601") == []
    beside = """
        import torch
        def restore(m):
            try:
                log(m)
            except TypeError:
                return torch.load(m)
        """
    assert codes(beside, "TU601") == [(6, "TU601")]  # (a handler after other code: no probe)
