"""TU151: ``FunctionEvent(metadata_json=...)`` and ``.metadata_json`` are gone in torch 2.15."""

from __future__ import annotations

import ast

from torchup.analysis.context import Context
from torchup.analysis.patterns import literal_dict_keyword
from torchup.analysis.rule import Example, FixAvailability, LooksFor, Rule, RuleDocs
from torchup.core.diagnostics import Severity
from torchup.core.facts import FACTS
from torchup.rules._arguments import attributes_named

_CLASS = "torch.autograd.profiler_util.FunctionEvent"
_REMOVED = FACTS["removed_members"][f"{_CLASS}.metadata_json"]
_DEPRECATED = FACTS["removed_members"][f"{_CLASS}.event_metadata"]
# Where the class can be imported from (profiler.py and profiler_legacy.py import it; 2.14.1 and 2.15.0 alike).
FUNCTION_EVENT = frozenset(
    {_CLASS, "torch.autograd.profiler.FunctionEvent", "torch.autograd.profiler_legacy.FunctionEvent"}
)
REMOVED, DEPRECATED = "metadata_json", "event_metadata"
POSITION = int(_REMOVED["position"])  # 0-based among the positional parameters after `self` (2.14)
ARGUMENT_ERROR, ATTRIBUTE_ERROR = _REMOVED["argument_error"], _REMOVED["attribute_error"]
WARNING = _DEPRECATED["warning"]
HELP = (
    "read `event.metadata` (a dict of the profiler's typed metadata, torch 2.14+) or `event.event_metadata` "
    "(an EventMetadata named tuple; deprecated in 2.15)"
)
DEPRECATED_HELP = (
    "`event.metadata` is a dict (`event.metadata.get(\"grid\")`), not the EventMetadata named tuple "
    "(`event.event_metadata.grid`): adapt the code that reads it; `metadata` exists from torch 2.14"
)


class FunctionEventMetadataJson(Rule):
    code = "TU151"
    name = "function-event-metadata-json-removed"
    summary = "`FunctionEvent(metadata_json=...)` and `.metadata_json` are gone in torch 2.15; `.event_metadata` warns."
    since = "2.15"
    fix_availability = FixAvailability.NONE
    # `metadata_json` counts anywhere: the positional argument that lands on it spells no word, so a
    # file that spells it elsewhere is read.
    looks_for = LooksFor(attributes=(DEPRECATED,), words=(REMOVED,))
    docs = RuleDocs(
        what=f"""
        Finds `metadata_json=` given to the profiler's `FunctionEvent` (from
        `torch.autograd.profiler_util`, `torch.autograd.profiler` or
        `torch.autograd.profiler_legacy`; also in a visible `**{{"metadata_json": ...}}` or as a
        positional argument in its place), and reads of
        `x.{REMOVED}` and `x.{DEPRECATED}` on anything that is not a module, in files that
        import torch. A call `x.metadata_json()` is not reported: that is the method of the
        profiler's C++ events (`_KinetoEvent`, the activities in a trace), which 2.15 keeps.
        The type of `x` is not known statically: a non-profiler object with an attribute of
        either name in a torch file is reported too (silence it with `# noqa: TU151`), except
        `self.metadata_json` in the methods of a class that defines that attribute itself (a
        method or property, a class attribute, or `self.metadata_json = ...`).
        """,
        why=f"""
        Reading `metadata_json` already warned in torch 2.13.0 and 2.14.1
        ("{_REMOVED["old_warning"]}"); torch 2.15 removes the parameter and the property:

            {ARGUMENT_ERROR}
            {ATTRIBUTE_ERROR}

        At the same time 2.15 deprecates `event_metadata` in favour of `metadata`:

            {WARNING}

        Positional arguments after `activity_type` also shift by one in 2.15.
        """,
        fix="""
        No automatic fix: the replacement has another type. Read `event.metadata`, a `dict` of the
        profiler's typed metadata (present since torch 2.14; `None` when the event has none), or,
        while it lasts, `event.event_metadata` (an `EventMetadata` named tuple of the parsed
        fields, or `None`). Code that parsed the JSON string should read the fields it needs from
        `metadata`. Drop `metadata_json=` from hand-made `FunctionEvent`s (pass `extra_meta=` or
        `typed_metadata=` instead).
        """,
        fix_safety="There is no fix: `metadata` is a dict, `metadata_json` was a JSON string, and "
        "`event_metadata` a named tuple; the code reading them has to change with them.",
        wheels_vs_notes="""
        The release notes say `metadata_json` is removed and `event_metadata` deprecated for
        `metadata`. The sources add that `metadata` is not a renamed `event_metadata`: it is a
        separate attribute (added in 2.14, filled from the profiler's typed metadata), a dict
        rather than the `EventMetadata` named tuple, so it is not a drop-in replacement.
        """,
    )
    examples = (
        Example(
            "the attribute and the parameter",
            """
            import torch
            from torch.autograd.profiler_util import FunctionEvent

            with torch.profiler.profile() as prof:
                y = A @ A
            notes = [event.metadata_json for event in prof.events()]
            fake = FunctionEvent(id=0, name="step", thread=0, start_us=0, end_us=1, metadata_json="{}")
            """,
            findings=2,
        ),
        Example(
            "event_metadata warns in 2.15",
            """
            import torch

            with torch.profiler.profile() as prof:
                y = A @ A
            grids = [e.event_metadata.grid for e in prof.events() if e.event_metadata]
            """,
            findings=2,
        ),
        Example(
            "not reported: the C++ events' method, and the new attribute",
            """
            import torch

            def kernel_metadata(activity):
                return activity.metadata_json()

            with torch.profiler.profile() as prof:
                y = A @ A
            typed = [e.metadata for e in prof.events()]
            """,
            findings=0,
        ),
    )

    def check(self, ctx: Context) -> None:
        if not ctx.resolver.imports_torch:
            return
        for call, qualname in ctx.calls_to(FUNCTION_EVENT):
            keyword: ast.AST | None = next((k for k in call.keywords if k.arg == REMOVED), None)
            spread = literal_dict_keyword(call, REMOVED)  # `**{"metadata_json": ...}`
            if keyword is None and spread is not None:
                keyword = spread[1]
            if keyword is not None:
                ctx.report(keyword, f"`{qualname}` no longer takes `{REMOVED}` in torch 2.15 (TypeError)", help=HELP)
            elif len(call.args) > POSITION and not any(isinstance(a, ast.Starred) for a in call.args[: POSITION + 1]):
                ctx.report(
                    call.args[POSITION],
                    f"argument {POSITION + 1} of `{qualname}` is `{REMOVED}` in torch 2.14, which 2.15 removes: "
                    "this and every later positional argument lands on another parameter",
                    help=f"pass the arguments from here on by keyword, without `{REMOVED}`",
                )
        for name, message, severity, help in (
            (REMOVED, f"`FunctionEvent.{REMOVED}` is removed in torch 2.15 (AttributeError)", Severity.ERROR, HELP),
            (DEPRECATED, f"`FunctionEvent.{DEPRECATED}` is deprecated in torch 2.15 (FutureWarning: use `metadata`)",
             Severity.WARNING, DEPRECATED_HELP),
        ):
            own = _own_attributes(ctx, name)
            for node in attributes_named(ctx, name):
                if isinstance(node.ctx, ast.Load) and ctx.resolver.call_of_callee(node) is None \
                        and id(node) not in own \
                        and ctx.qualified_name(node) is None and ctx.qualified_name(node.value) is None:
                    ctx.report(node, message, severity=severity, help=help)


def _own_attributes(ctx: Context, name: str) -> set[int]:
    """``self.<name>`` read in the methods of a class that defines ``<name>`` itself (a method, a class
    attribute, or ``self.<name> = ...`` in a method): the class's own attribute, not the profiler's."""
    found: set[int] = set()
    for cls in ctx.walk():  # (both the reads and the definitions spell ``name``)
        if not isinstance(cls, ast.ClassDef):
            continue
        methods = [(item, item.args.posonlyargs + item.args.args) for item in cls.body
                   if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef))]
        selves = [(method, parameters[0].arg) for method, parameters in methods if parameters]
        defines = any(isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and item.name == name
                      for item in cls.body) or any(
            isinstance(target, ast.Name) and target.id == name
            for item in cls.body if isinstance(item, (ast.Assign, ast.AnnAssign))
            for target in (item.targets if isinstance(item, ast.Assign) else [item.target])
        )
        reads = []
        for method, self_name in selves:
            for node in ctx.walk(method):
                if isinstance(node, ast.Attribute) and node.attr == name and isinstance(node.value, ast.Name) \
                        and node.value.id == self_name:
                    if isinstance(node.ctx, ast.Load):
                        reads.append(node)
                    else:
                        defines = True
        if defines:
            found.update(id(node) for node in reads)
    return found


RULE = FunctionEventMetadataJson()
