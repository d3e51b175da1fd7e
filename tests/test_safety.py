"""The safety check inside fix: a pass whose edits change code outside the fixed nodes is refused."""

from __future__ import annotations

import ast

from torchup.analysis.context import Context
from torchup.analysis.rule import Rule, RuleDocs
from torchup.check.checker import Checker
from torchup.core.diagnostics import Applicability, Edit, Fix
from torchup.core.source import SourceFile
from torchup.fix.fixer import fix_source
from torchup.fix.safety import check_pass


def edit_for(text: str, old: str, new: str) -> tuple[str, Edit]:
    start = text.index(old)
    return text[:start] + new + text[start + len(old):], Edit(start, start + len(old), new)


def test_a_fix_inside_its_node_passes() -> None:
    old = "import torch\nU = torch.cholesky(A, True)\n"
    new, edit = edit_for(old, "torch.cholesky", "torch.linalg.cholesky")
    insert = old.index("True")
    new = new.replace("True", "upper=True")
    assert check_pass(old, new, [[edit, Edit(insert, insert, "upper=")]]) is None


def test_a_replacement_that_regroups_its_neighbours_is_caught() -> None:
    old = "x = f(a) + g(b)\n"
    new, edit = edit_for(old, "f(a)", "f(a) * 0 or h(a)")  # `or` now swallows `+ g(b)`
    ast.parse(new)  # it parses, and compiles: only the safety check can tell
    assert check_pass(old, new, [[edit]]) is not None


def test_an_edit_that_moves_code_between_statements_is_caught() -> None:
    old = "a = f(1)\nb = 2\n"
    new, edit = edit_for(old, "f(1)", "f(1); b = 3")
    assert check_pass(old, new, [[edit]]) is not None


def test_import_edits_and_comment_edits_are_understood() -> None:
    old = "from torch import eye, cholesky\nL = cholesky(A)  # noqa: TU999\n"
    removal = Edit(old.index(", cholesky"), old.index(", cholesky") + len(", cholesky"), "")
    line2 = old.index("L =")
    insertion = Edit(line2, line2, "import torch\n")
    callee = Edit(old.index("cholesky(A)"), old.index("cholesky(A)") + len("cholesky"), "torch.linalg.cholesky")
    comment = Edit(old.index("  # noqa"), old.index("  # noqa") + len("  # noqa: TU999"), "")
    edits = sorted([removal, insertion, callee, comment])
    from torchup.core.diagnostics import apply_edits

    new = apply_edits(old, edits)
    assert new == "from torch import eye\nimport torch\nL = torch.linalg.cholesky(A)\n"
    assert check_pass(old, new, [[callee], [comment]], [removal, insertion]) is None


class _Reckless(Rule):
    """A deliberately broken rule: its fix swallows the code after its call."""

    code = "TU999"
    name = "reckless"
    summary = "test only"
    docs = RuleDocs("", "", "", "")
    triggers = ("f",)

    def check(self, ctx: Context) -> None:
        for call in ctx.resolver.calls:
            if isinstance(call.func, ast.Name) and call.func.id == "f":
                start, end = ctx.source.node_range(call)
                fix = Fix("regroup", Applicability.SAFE, (Edit(start, end, "f(a) * 0 or h(a)"),))
                ctx.report(call, "reckless", fix=fix)


def test_fix_refuses_the_pass_and_says_so() -> None:
    text = "x = f(a) + g(b)\n"
    outcome = fix_source(Checker([_Reckless()]), SourceFile.from_bytes("m.py", text.encode()), unsafe=True)
    assert outcome.text == text
    (finding,) = outcome.remaining
    assert finding.fix is None and any("safety check" in note for note in finding.notes)
