"""TU705: a private path to a function or class that a public torch module exports (TOR104, TOR105)."""

from __future__ import annotations

import ast
import dataclasses
import json
from functools import cache
from typing import ClassVar

from torchup.analysis.context import Context
from torchup.analysis.resolver import Binding
from torchup.analysis.rule import Change, Example, FixAvailability, LooksFor, RuleDocs, release_tuple
from torchup.core.data import data_text
from torchup.core.diagnostics import Applicability, Fix, Severity
from torchup.rules._catalogue import CatalogueRule, Entry

OLDEST = "2.0"  # the oldest release the twins were looked for in (tools/public_twins.py)


@cache
def twins() -> dict[str, dict[str, str]]:
    """``{private path: {"public": ..., "since": ..., "evidence": ...}}``: torchup/data/public_twins.json."""
    text = data_text("public_twins.json")
    return dict(json.loads(text)["twins"])


def _private_module(path: str) -> str:
    """The module of a private path down to its first private part: `torch.utils.data._utils` for
    `torch.utils.data._utils.collate.default_collate`. Every reference spells that part (an import of
    the module or of a name from it, or the dotted path itself)."""
    parts = path.split(".")
    first = next(index for index, part in enumerate(parts) if part.startswith("_"))
    return ".".join(parts[: first + 1])


ENTRY = Entry(
    code="TU705",
    name="private-alias",
    since=OLDEST,
    change=Change.MOVED,
    summary="A private path (`torch.utils.data._utils.collate.default_collate`) to what a public module exports.",
    what="",
    why="",
    fix="",
    fix_safety="",
    evidence="",
    enabled=False,
    moves={private: pair["public"] for private, pair in twins().items()},
)


class PrivateAlias(CatalogueRule):
    change = Change.MOVED
    code = "TU705"
    name = "private-alias"
    summary = ENTRY.summary
    since = None
    enabled_by_default = False  # (a hint: `--select TU705`, or TorchFix's `TOR104`/`TOR105`)
    severity = Severity.INFO
    fix_availability = FixAvailability.SOMETIMES
    entry = ENTRY
    # Every reference spells a private module of its path (`_utils`, `_C`): the rule is looked for by
    # those words, not by the last ones (`add`, `Tensor`), which nearly every file spells.
    looks_for = LooksFor(modules=tuple(sorted({_private_module(private) for private in ENTRY.moves})))
    renames: ClassVar[dict[str, str]] = dict(sorted(ENTRY.moves.items()))
    not_in_package = "torch"  # (torch's own modules are where the public names come from)
    docs = RuleDocs(
        what="""
        Finds references to a function or class through a private module when a public module
        exports the same object: `torch.utils.data._utils.collate.default_collate` for
        `torch.utils.data.default_collate`, `torch._C.Generator` for `torch.Generator`, any import
        form, and the `from` import lines that bring them in. The pairs come from the wheels of
        torch 2.0 to 2.15, read by tools/public_twins.py, each confirmed to be one object by running
        torch 2.13.0 and 2.14.1 (torchup/data/public_twins.json, about 830 pairs). Off by default:
        `--select TU705`, or TorchFix's `TOR104` (uses) and `TOR105` (imports). Files of the torch
        package itself (a `torch` directory with an `__init__.py`, and one in each directory down to
        the file) are not checked: torch's own modules are where the public names are made from the
        private ones (`torch/__init__.py` imports `torch._C`), and a private module is private to
        the package, not from it.
        """,
        why="""
        A private module is torch's own business: it is renamed, split or removed without a
        deprecation (`torch.distributed._tensor` became `torch.distributed.tensor` in 2.5). The
        public name is the same object and stays.
        """,
        fix="""
        The reference names the public path (`torch.utils.data.default_collate(batch)`); a `from`
        import whose every name has a twin in one public module imports from that module.
        """,
        fix_safety="""
        Safe where the public name exists in torch 2.0 already (the same object, so nothing changes
        at run time); unsafe where it appeared later (the message says when): code that still runs on
        an older torch would no longer import.
        """,
        wheels_vs_notes="""
        TorchFix knew two pairs, and named `torch.utils.data.dataloader.default_collate`; the wheels
        show `torch.utils.data.default_collate` too, the shortest public path, which this rule uses.
        """,
    )
    examples = (
        Example(
            "a private import of the default collate function",
            """
            import torch
            from torch.utils.data._utils.collate import default_collate

            batch = default_collate([torch.ones(2), torch.zeros(2)])
            """,
            findings=2,
            fixed="""
            import torch
            from torch.utils.data import default_collate

            batch = default_collate([torch.ones(2), torch.zeros(2)])
            """,
        ),
        Example(
            "a private attribute path",
            """
            import torch

            values = torch.utils.data._utils.collate.default_convert([1, 2])
            """,
            fixed="""
            import torch

            values = torch.utils.data.default_convert([1, 2])
            """,
        ),
        Example(
            "public since torch 2.5: unsafe for code that still runs on older releases",
            """
            import torch
            from torch.distributed.tensor._api import DTensor

            name = DTensor.__name__
            """,
            findings=2,
            fixed="""
            import torch
            from torch.distributed.tensor import DTensor

            name = DTensor.__name__
            """,
            unsafe=True,
        ),
        Example(
            "public paths, and private names without a public twin",
            """
            import torch
            from torch.utils.data import default_collate

            batch = default_collate([torch.ones(2)])
            state = torch._C._get_tracing_state()
            """,
            findings=0,
        ),
    )

    def _message(self, old: str, how: str) -> str:
        pair = twins()[old]
        since = "" if pair["since"] == OLDEST else f" (public since torch {pair['since']})"
        return f"`{old}` ({how}) is a private path to `{pair['public']}`{since}"

    def _help(self, old: str) -> str | None:
        return f"use the public `{twins()[old]['public']}`: private modules change without notice"

    def _import_fix(self, ctx: Context, binding: Binding) -> Fix | None:
        statement = binding.statement
        fix = super()._import_fix(ctx, binding)
        if fix is None or not isinstance(statement, ast.ImportFrom):
            return fix
        return _unsafe_if_newer(fix, [f"{statement.module}.{alias.name}" for alias in statement.names])

    def _reference_fix(
        self, ctx: Context, node: ast.expr, qualname: str, call: ast.Call | None, import_fixes: dict[int, Fix | None]
    ) -> Fix | None:
        fix = super()._reference_fix(ctx, node, qualname, call, import_fixes)
        return None if fix is None else _unsafe_if_newer(fix, [qualname])


def _unsafe_if_newer(fix: Fix, olds: list[str]) -> Fix:
    """A fix that names a public path torch 2.0 lacks is unsafe (old releases cannot import it)."""
    if all(release_tuple(twins()[old]["since"]) <= release_tuple(OLDEST) for old in olds if old in twins()):
        return fix
    return dataclasses.replace(fix, applicability=Applicability.UNSAFE)


RULE = PrivateAlias()
