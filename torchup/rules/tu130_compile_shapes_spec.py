"""TU130: ``torch.compile(shapes_spec=...)`` is called ``dynamic_shapes=`` in torch 2.14."""

from __future__ import annotations

from torchup.analysis.context import Context
from torchup.analysis.patterns import Edits, literal_dict_keyword
from torchup.analysis.rule import Example, FixAvailability, LooksFor, Rule, RuleDocs
from torchup.core.diagnostics import Applicability, Fix

COMPILE = frozenset({"torch.compile"})
MESSAGE = "`torch.compile(shapes_spec=...)` is `dynamic_shapes=` in torch 2.14 (the old keyword is a TypeError)"
ERROR = "TypeError: compile() got an unexpected keyword argument 'shapes_spec'"


# What the fix writes (a key of a `**` dict is no keyword the engine reads: torchup.analysis.fix_window).
NEEDS = "torch.compile(dynamic_shapes=)"


class CompileShapesSpec(Rule):
    code = "TU130"
    name = "compile-shapes-spec-renamed"
    summary = "`torch.compile(shapes_spec=...)` is `dynamic_shapes=` in torch 2.14."
    fix_availability = FixAvailability.SAFE
    looks_for = LooksFor(keywords=("shapes_spec",))
    docs = RuleDocs(
        what="Finds `shapes_spec=` given to `torch.compile` (a call or a decorator), also in a "
        'visible `**{"shapes_spec": ...}`.',
        why=f"""
        The keyword was renamed in torch 2.14, without a deprecation period; each version rejects
        the other's spelling:

            {ERROR}
        """,
        fix="Rename the keyword (or the dict key) to `dynamic_shapes`; the value is kept as it is.",
        fix_safety="Safe: the parameter kept its meaning, position (keyword-only, last) and default.",
        wheels_vs_notes="The rename is not in the 2.14 release notes; it is in the wheels' "
        "`torch.compile` signature (2.13: `shapes_spec: Any = None`, 2.14: `dynamic_shapes: Any = None`). "
        "Code that must run on both releases can pass the argument only to the one it runs on.",
    )
    examples = (
        Example(
            "decorator and call",
            """
            import torch

            @torch.compile(shapes_spec=None, backend="eager")
            def square(t):
                return t * t

            def cube(t):
                return t * t * t

            fast_cube = torch.compile(cube, backend="eager", shapes_spec=None)
            y = square(A) + fast_cube(A)
            """,
            fixed="""
            import torch

            @torch.compile(dynamic_shapes=None, backend="eager")
            def square(t):
                return t * t

            def cube(t):
                return t * t * t

            fast_cube = torch.compile(cube, backend="eager", dynamic_shapes=None)
            y = square(A) + fast_cube(A)
            """,
            findings=2,
        ),
        Example(
            "a dict of options",
            """
            from torch import compile as tcompile
            inc = tcompile(lambda t: t + 1, backend="eager", **{"shapes_spec": None})
            y = inc(A)
            """,
            fixed="""
            from torch import compile as tcompile
            inc = tcompile(lambda t: t + 1, backend="eager", **{"dynamic_shapes": None})
            y = inc(A)
            """,
        ),
    )

    def check(self, ctx: Context) -> None:
        edits = Edits(ctx.source)
        for call, _ in ctx.calls_to(COMPILE):
            # Renaming next to an existing dynamic_shapes would repeat the keyword: report only.
            clash = any(k.arg == "dynamic_shapes" for k in call.keywords) or literal_dict_keyword(
                call, "dynamic_shapes"
            ) is not None
            keyword = next((k for k in call.keywords if k.arg == "shapes_spec"), None)
            if keyword is not None:
                rename = edits.rename_keyword(keyword, "dynamic_shapes")
                fix = None if clash else Fix("rename to `dynamic_shapes`", Applicability.SAFE, (rename,),
                                              requires=(NEEDS,))
                ctx.report(keyword, MESSAGE, fix=fix, help="keep one of the two keywords" if clash else None)
                continue
            spread = literal_dict_keyword(call, "shapes_spec")
            if spread is not None:
                key = spread[1]
                text = ctx.segment(key)
                plain = text[1:-1] == "shapes_spec" and text[0] == text[-1] and text[0] in "'\""
                fix = None
                if plain and not clash:
                    new_key = f"{text[0]}dynamic_shapes{text[0]}"
                    fix = Fix("rename the key to `dynamic_shapes`", Applicability.SAFE, (edits.replace(key, new_key),),
                              requires=(NEEDS,))
                ctx.report(key, MESSAGE, fix=fix, help=None if fix else 'rename the key to "dynamic_shapes" by hand')

RULE = CompileShapesSpec()
