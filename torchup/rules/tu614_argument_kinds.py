"""TU614: arguments passed the way a parameter no longer takes them: by position to one that became
keyword-only (`torch.onnx.export(model, args, f, True)`, 2.5), by keyword to one that became
positional-only (`torch.is_tensor(obj=x)`, 2.5).

The facts are data (torchup/data/argument_kinds.json, made by tools/argument_kinds.py from the API
diff and a run of each old call in the local wheels); this module knows no function by name.
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass
from functools import cached_property

from torchup.analysis.context import Context
from torchup.analysis.patterns import Edits
from torchup.analysis.rule import Change, Example, FixAvailability, LooksFor, Rule, RuleDocs, release_tuple
from torchup.core.data import data_text
from torchup.core.diagnostics import Applicability, Edit, Fix, Severity
from torchup.core.lexing import Spans
from torchup.prefilter.requirements import NameRequirements
from torchup.rules.tu601_torch_load_weights_only import uses


@dataclass(frozen=True)
class KindChange:
    """One function's parameters that changed kind in one release (an entry of the data file)."""

    name: str
    aliases: tuple[str, ...]
    release: str
    old: str  # the signature before, as the wheel spells it: `export(model, args, f=None, export_params=True, ...)`
    new: str
    keyword_only: frozenset[str]  # positional before, keyword-only now
    positional_only: frozenset[str]  # keyword allowed before, positional-only now
    removed_later: dict[str, str]  # parameters a later release removed, and that release
    message: str  # what the wheel said when the data tool ran the old call
    evidence: str

    @cached_property
    def _signatures(self) -> tuple[ast.arguments, ast.arguments]:
        old, new = (ast.parse(f"def {s}: pass").body[0].args for s in (self.old, self.new))  # type: ignore[attr-defined]
        return old, new

    @cached_property
    def old_positional(self) -> tuple[str, ...]:
        old = self._signatures[0]
        return tuple(a.arg for a in (*old.posonlyargs, *old.args))

    @cached_property
    def new_positional(self) -> tuple[str, ...]:
        new = self._signatures[1]
        return tuple(a.arg for a in (*new.posonlyargs, *new.args))

    @cached_property
    def new_names(self) -> frozenset[str]:
        new = self._signatures[1]
        return frozenset(a.arg for a in (*new.posonlyargs, *new.args, *new.kwonlyargs))

    def exists(self, parameter: str, target: tuple[int, ...] | None) -> bool:
        """Whether the function still has ``parameter`` on the target release (None: the newest)."""
        gone = self.removed_later.get(parameter)
        return parameter in self.new_names and (gone is None or (target is not None and release_tuple(gone) > target))


def _load() -> tuple[KindChange, ...]:
    """The changes whose old call the wheels reject. Those they still take are left out (the
    distributed checkpoint's `save`/`load` move a second positional argument to `storage_writer=`/
    `storage_reader=` and warn): such code keeps working, and their words (`save`, `load`) stand in
    hundreds of files each, which the pre-filter would then read (see the docs)."""
    found = []
    for entry in json.loads(data_text("argument_kinds.json"))["changes"]:
        if entry["wheel"]["change"] != "raises":
            continue
        found.append(KindChange(
            entry["name"], tuple(entry["aliases"]), entry["release"], entry["old"], entry["new"],
            frozenset(entry["keyword_only"]), frozenset(entry["positional_only"]), entry["removed_later"],
            entry["wheel"]["message"], entry["evidence"],
        ))
    return tuple(found)


CHANGES = _load()
BY_NAME = {name: change for change in CHANGES for name in (change.name, *change.aliases)}
_KEYWORD = "|".join(sorted({p for change in CHANGES for p in change.positional_only}))
# A keyword argument stands after a call's `(` or `,`, with blanks, line continuations and comments
# between (`t = ...` starts no argument). A comment ends at its line's end: one way to read `# #`,
# not one per split of it (a pattern that let it end anywhere backtracked for minutes on such lines).
_KEYWORD_GIVEN = re.compile(rf"[(,](?:[ \t\r\n\f\\]|#[^\n]*\n)*(?:{_KEYWORD})[ \t]*=(?!=)")
_KEYWORD_GIVEN_BYTES = re.compile(_KEYWORD_GIVEN.pattern.encode())


@dataclass(frozen=True)
class _Requirements(NameRequirements):
    """What a file must spell to hold a finding: a reference to a function with keyword-only
    parameters, or to one with positional-only parameters (`torch.is_tensor`, in 65 of torch's own
    files) and one of those parameters passed by keyword. Asked before the file is lexed
    (checker._names_not_referred): torch 2.14.1's sources, lexed for this rule, 15 files fewer."""

    @cached_property
    def _by_position(self) -> NameRequirements:
        return NameRequirements(tuple(name for name in self.names if BY_NAME[name].keyword_only))

    @cached_property
    def _by_keyword(self) -> NameRequirements:
        return NameRequirements(tuple(name for name in self.names if BY_NAME[name].positional_only))

    def could_refer(self, text: str | bytes, spans: Spans[str] | Spans[bytes] | None = None) -> bool:
        if self._by_position.could_refer(text, spans):
            return True
        if not self._by_keyword.could_refer(text, spans):
            return False
        given = _KEYWORD_GIVEN_BYTES if isinstance(text, bytes) else _KEYWORD_GIVEN
        return given.search(text) is not None  # type: ignore[arg-type]


def _listing() -> str:
    lines = []
    for change in CHANGES:
        moved = [f"`{p}`" for p in sorted(change.keyword_only | change.positional_only)]
        kind = "keyword-only" if change.keyword_only else "positional-only"
        lines.append(f"- `{change.name}` (torch {change.release}): {', '.join(moved)} {kind}")
    return "\n        ".join(lines)  # (indented as the docs around it, which are dedented)


def _error(change: KindChange) -> str:
    """The error's type (its text counts the arguments of the data tool's call, not of this one)."""
    return change.message.partition(":")[0]


def _names(names: list[str]) -> str:
    return ", ".join(f"`{name}`" for name in names)


class ArgumentKinds(Rule):
    code = "TU614"
    name = "argument-kind-changed"
    summary = ("An argument passed by position to a parameter that became keyword-only (or by keyword to one "
               "now positional-only).")
    since = min((change.release for change in CHANGES), key=release_tuple)
    change = Change.RAISES
    severity = Severity.ERROR
    fix_availability = FixAvailability.SAFE
    looks_for = LooksFor(names=tuple(sorted(BY_NAME)))
    name_requirements = _Requirements(tuple(sorted(BY_NAME)))
    api_change_kinds = ("parameter-kind-changed",)
    docs = RuleDocs(
        what=f"""
        Finds calls (also through `functools.partial` or a name the function is saved in) that
        pass an argument the way the target release no longer takes it: by position to a
        parameter that became keyword-only, or by keyword to one that became positional-only.
        The functions, from the API diff of the wheels (torchup/data/argument_kinds.json):

        {_listing()}

        Not reported: calls that pass those arguments the new way, a call with `*args` before
        them (their number is unknown), and changes newer than `--target-version`.
        """,
        why="""
        Python rejects such a call before the function runs: `TypeError: export() takes from 1 to
        3 positional arguments but 5 were given`, `TypeError: is_tensor() got some positional-only
        arguments passed as keyword arguments: 'obj'`. The API diff reads the signatures; the data
        tool then runs each old call in the local wheels (2.13.0, 2.14.1): a wrapper may still take
        it. The distributed checkpoint's `save`/`load` do (a second positional argument goes to
        `storage_writer=`/`storage_reader=` with a UserWarning, "The argument order of save has been
        changed"): they are left out, a call that still works, whose words stand in hundreds of
        files (`save` in 229 of torch's own, 144 of transformers'), each of which the pre-filter
        would then read.
        """,
        fix="""
        Each argument is bound as the old release bound it: a positional argument after the new
        positional parameters gets its old parameter's name (`torch.onnx.export(m, x, f, True,
        False)` -> `torch.onnx.export(m, x, f, export_params=True, verbose=False)`); a keyword for
        a positional-only parameter loses its name when every parameter before it is passed by
        position (`torch.is_tensor(obj=x)` -> `torch.is_tensor(x)`). No fix when an argument's old
        parameter no longer exists (`varlen_attn`'s `is_causal`, removed in 2.11) or the keyword
        cannot move to its place.
        """,
        fix_safety="""
        Safe: every argument reaches the same parameter as on the release before the change, and
        the new call is one that release accepts too. tests/test_argument_kinds.py binds each
        rewrite to the old and the new signature of every function in the data and checks that
        the bindings agree; the examples run under the releases before and after (2.11.0 and 2.4.1
        against 2.14.1: docs/proofs.md).
        """,
        wheels_vs_notes="""
        The diff finds 44 parameter-kind changes from 2.0 to 2.15; this rule takes those a rewrite
        can repair (the new positional parameters are the first of the old ones, no `*args`
        appeared, not a method of a class): the others keep their reason in docs/coverage.md
        (`torch.library.define(lib, schema)` became `define(qualname, schema, *, lib)`: a new
        first argument, not a new way to pass the old one).
        """,
    )
    examples = (
        Example(
            "the legacy exporter's options by position",
            """
            import torch

            def export(model, sample, path):
                torch.onnx.export(model, (sample,), path, True, False, dynamo=False)
            """,
            fixed="""
            import torch

            def export(model, sample, path):
                torch.onnx.export(model, (sample,), path, export_params=True, verbose=False, dynamo=False)
            """,
            executable=False,  # (the exporter needs the onnx package: tests/test_argument_kinds.py checks the binding)
        ),
        Example(
            "a compile region's options by position",
            """
            import torch

            def double(x):
                return x * 2

            region = torch.compiler.nested_compile_region(double, None)
            y = region(A)
            """,
            fixed="""
            import torch

            def double(x):
                return x * 2

            region = torch.compiler.nested_compile_region(double, options=None)
            y = region(A)
            """,
            versions=("2.11", "2.14"),
        ),
        Example(
            "a positional-only parameter by keyword",
            """
            from torch import is_tensor

            flags = (is_tensor(obj=A), is_tensor(obj=[1]))
            """,
            fixed="""
            from torch import is_tensor

            flags = (is_tensor(A), is_tensor([1]))
            """,
            findings=2,
            versions=("2.4", "2.14"),
        ),
        Example(
            "a removed parameter by position: reported, no fix",
            """
            from torch.nn.attention.varlen import varlen_attn

            def attend(q, k, v, cu_q, cu_k, max_q, max_k):
                return varlen_attn(q, k, v, cu_q, cu_k, max_q, max_k, True)
            """,
        ),
        Example(
            "not reported: the new way, unknown arguments, another export",
            """
            import torch
            import torch.distributed.checkpoint as dcp
            from mylib import onnx

            def run(model, x, path, state, args):
                torch.onnx.export(model, (x,), path, export_params=True, verbose=False)
                torch.onnx.export(model, (x,), path)
                torch.onnx.export(*args)
                dcp.save(state, dcp.FileSystemWriter(path))
                onnx.export(model, x, path, True)
                return torch.is_tensor(x)
            """,
            findings=0,
        ),
    )

    def check(self, ctx: Context) -> None:
        target = release_tuple(ctx.target_version) if ctx.target_version else None
        for use in uses(ctx, frozenset(BY_NAME)):
            change = BY_NAME[use.qualname]
            if use.call is None or (target is not None and release_tuple(change.release) > target):
                continue
            if change.keyword_only:
                self._by_position(ctx, use.node, use.call, use.skip, change, target)
            if change.positional_only:
                self._by_keyword(ctx, use.node, use.call, use.skip, change)

    def _by_position(
        self, ctx: Context, node: ast.expr, call: ast.Call, skip: int, change: KindChange,
        target: tuple[int, ...] | None,
    ) -> None:
        arguments = call.args[skip:]
        limit = len(change.new_positional)
        if len(arguments) <= limit or any(isinstance(arg, ast.Starred) for arg in arguments):
            return
        extra = arguments[limit:]
        names = list(change.old_positional[limit:limit + len(extra)])
        if len(names) < len(extra):
            return  # (more than the old release took too: another mistake)
        given = {keyword.arg for keyword in call.keywords}
        edits: list[Edit] = []
        if all(change.exists(name, target) and name not in given for name in names):
            for name, value in zip(names, extra, strict=True):
                edits += Edits(ctx.source).positional_to_keyword(call, value, name)
        gone = [name for name in names if not change.exists(name, target)]
        them = "it" if len(names) == 1 else "them"
        more = f"; {_names(gone)} no longer exist{'s' if len(gone) == 1 else ''}" if gone else ""
        ctx.report(
            node,
            f"`{change.name}(...)` passes {_names(names)} by position: keyword-only since torch {change.release}"
            f"{more} ({_error(change)})",
            help=f"pass {them} by keyword" if not gone else "pass the others by keyword; see what replaced the rest",
            fix=Fix(f"pass {them} by keyword", Applicability.SAFE, tuple(edits)) if edits else None,
            since=change.release,
        )

    def _by_keyword(self, ctx: Context, node: ast.expr, call: ast.Call, skip: int, change: KindChange) -> None:
        for index, keyword in enumerate(call.keywords):
            if keyword.arg not in change.positional_only:
                continue
            fix = None
            place = change.new_positional.index(keyword.arg)
            if index == 0 and len(call.args) - skip == place and not any(isinstance(a, ast.Starred) for a in call.args):
                fix = Fix(f"pass `{keyword.arg}` by position", Applicability.SAFE, (_unname(ctx, call, keyword),))
            ctx.report(
                node,
                f"`{change.name}(...)` passes `{keyword.arg}` by keyword: positional-only since torch "
                f"{change.release} ({_error(change)})",
                help=f"pass `{keyword.arg}` by position",
                fix=fix,
                since=change.release,
            )


RULE = ArgumentKinds()


def _unname(ctx: Context, call: ast.Call, keyword: ast.keyword) -> Edit:
    """Drop `name=` from the call's first keyword. The edit starts at the end of what comes before
    (the last positional argument, or the call's `(`), so that it belongs to the call, whose
    argument lists it changes (torchup/fix/safety.py), not to the keyword."""
    text = ctx.source.text
    start, _ = ctx.source.node_range(keyword)
    value, _ = ctx.source.node_range(keyword.value)
    func_end = ctx.source.node_range(call.func)[1]
    anchor = ctx.source.node_range(call.args[-1])[1] if call.args else text.index("(", func_end)
    name_end = text.index("=", start + len(keyword.arg or "")) + 1
    while name_end < value and text[name_end] in " \t":
        name_end += 1
    return Edit(anchor, name_end, text[anchor:start])
