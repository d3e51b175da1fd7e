"""TU708: `import torchvision.models as models` -> `from torchvision import models` (TOR203)."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from torchup.analysis.context import Context
from torchup.analysis.patterns import Edits
from torchup.analysis.rule import Change, Example, FixAvailability, LooksFor, Rule, RuleDocs
from torchup.core.diagnostics import Applicability, Fix, Severity
from torchup.prefilter.requirements import TextPattern

if TYPE_CHECKING:
    from torchup.core.lexing import Spans

PACKAGE = "torchvision"
# `import torchvision.models as models` (the same word twice): what a file must spell to hold one.
_SINGLETON = TextPattern(r"import[ \t]+(?:[\w.]+[ \t]*,[ \t]*)*torchvision\.(\w+)[ \t]+as[ \t]+\1\b")


class TorchvisionSingletonImport(Rule):
    change = Change.ADOPT
    code = "TU708"
    name = "torchvision-singleton-import"
    summary = "`import torchvision.models as models`: write `from torchvision import models`."
    since = None
    enabled_by_default = False  # (style: `--select TU708`, or TorchFix's `TOR203`)
    severity = Severity.INFO
    fix_availability = FixAvailability.SOMETIMES
    looks_for = LooksFor(words=(PACKAGE,))
    docs = RuleDocs(
        what="""
        Finds `import torchvision.X as X`, a submodule imported under its own last name
        (`models`, `datasets`, `transforms`). Off by default (a matter of style). TorchFix's TOR203.
        """,
        why="""
        `from torchvision import models` binds the same module to the same name, and says so
        plainly; `import torchvision.models as cnn` (another name) is left alone.
        """,
        fix="The statement becomes `from torchvision import X` where it imports nothing else.",
        fix_safety="Safe: the same module is bound to the same name.",
    )
    examples = (
        Example(
            "a submodule under its own name",
            """
            import torchvision.models as models

            net = models.resnet18(weights=None)
            """,
            fixed="""
            from torchvision import models

            net = models.resnet18(weights=None)
            """,
            executable=False,
        ),
        Example(
            "with another module on the line: reported, not rewritten",
            """
            import torchvision.datasets as datasets, torch
            """,
        ),
        Example(
            "another name, the package itself, a from import",
            """
            import torchvision
            import torchvision.models as cnn
            from torchvision import transforms
            """,
            findings=0,
        ),
    )

    def may_report(self, spans: Spans[str] | Spans[bytes]) -> bool:
        return _SINGLETON.found_in(spans.text)

    def check(self, ctx: Context) -> None:
        statements = {id(b.statement): b.statement for b in ctx.resolver.import_bindings if b.statement is not None}
        for node in statements.values():
            if not isinstance(node, ast.Import):
                continue
            for alias in node.names:
                package, _, last = alias.name.partition(".")
                if package != PACKAGE or "." in last or not last or alias.asname != last:
                    continue
                fix = None
                if len(node.names) == 1:
                    fix = Fix(f"write `from {PACKAGE} import {last}`", Applicability.SAFE,
                              (Edits(ctx.source).replace(node, f"from {PACKAGE} import {last}"),))
                ctx.report(alias, f"`import {alias.name} as {last}` binds the submodule to its own name",
                           fix=fix, help=f"write `from {PACKAGE} import {last}`")


RULE = TorchvisionSingletonImport()
