"""TU704: `torch.library.Library(...)` in a test keeps its registrations; use `_scoped_library` (TOR901)."""

from __future__ import annotations

import ast
import os

from torchup.analysis.context import Context
from torchup.analysis.resolver import Scope
from torchup.analysis.rule import Change, Example, FixAvailability, LooksFor, Rule, RuleDocs
from torchup.core.diagnostics import Severity

LIBRARY = frozenset({"torch.library.Library"})


class ScopedLibrary(Rule):
    change = Change.ADOPT
    code = "TU704"
    name = "library-in-tests"
    summary = "`torch.library.Library(...)` in a test file: use `torch.library._scoped_library` (a context manager)."
    since = None
    enabled_by_default = False  # (for PyTorch's own tests, as TorchFix's TOR9 codes: `--select TU704` or `TOR901`)
    severity = Severity.INFO
    fix_availability = FixAvailability.NONE
    looks_for = LooksFor(names=tuple(LIBRARY))
    docs = RuleDocs(
        what="""
        Finds `torch.library.Library(...)` (any import form) in tests: a test file (`test_*.py`,
        `*_test.py`), a function named `test...` or a method of a class named `Test...`. Off by
        default: `--select TU704` (or `TOR901`). TorchFix's TOR901.
        """,
        why="""
        A `Library` object's operator registrations last until it is destroyed, so one test's
        definitions can leak into the next; `torch.library._scoped_library(...)`, a context
        manager, removes them when the block ends.
        """,
        fix="""
        None automatic (the registrations move into a `with` block):
        `with torch.library._scoped_library("mylib", "DEF") as lib: ...`.
        """,
        fix_safety="No fix is offered.",
    )
    examples = (
        Example(
            "a test that defines an operator",
            """
            import torch

            def test_my_op():
                lib = torch.library.Library("mylib", "DEF")
                lib.define("my_op(Tensor x) -> Tensor")
            """,
            findings=1,
        ),
        Example(
            "a library the package itself defines",
            """
            import torch

            _lib = torch.library.Library("mylib", "DEF")
            _lib.define("my_op(Tensor x) -> Tensor")
            """,
            findings=0,
        ),
    )

    def check(self, ctx: Context) -> None:
        name = os.path.basename(ctx.source.path)
        test_file = name.startswith("test_") or name.endswith("_test.py")
        for call, _ in ctx.calls_to(LIBRARY):
            if not (test_file or _in_a_test(ctx, call)):
                continue
            ctx.report(call.func, "`torch.library.Library` in a test keeps its registrations after the test",
                       help='use `with torch.library._scoped_library("ns", "DEF") as lib:`')


def _in_a_test(ctx: Context, node: ast.AST) -> bool:
    """Is ``node`` in a function named `test...`, or a method of a class named `Test...`?"""
    scope: Scope | None = ctx.resolver.scope_of(node)
    while scope is not None:
        owner = scope.node
        if isinstance(owner, (ast.FunctionDef, ast.AsyncFunctionDef)) and owner.name.startswith("test"):
            return True
        if isinstance(owner, ast.ClassDef) and owner.name.startswith("Test"):
            return True
        scope = scope.parent
    return False


RULE = ScopedLibrary()
