"""TU615: a ``Sampler`` subclass that passes arguments to ``Sampler.__init__``, which torch 2.10 removed."""

from __future__ import annotations

import ast

from torchup.analysis.context import Context
from torchup.analysis.patterns import is_super_init
from torchup.analysis.rule import Change, Example, FixAvailability, LooksFor, Rule, RuleDocs
from torchup.core.diagnostics import Applicability, Edit, Fix, Severity
from torchup.core.lexing import Spans
from torchup.prefilter.requirements import TextPattern

SAMPLER = frozenset({"torch.utils.data.Sampler", "torch.utils.data.sampler.Sampler"})
SAMPLER_INIT = frozenset(f"{name}.__init__" for name in SAMPLER)
# Bases that take no part in `super().__init__` (typing's generics): `class S(Sampler[int], Generic[T])`.
TYPING_BASES = frozenset({"typing.Generic", "typing.Protocol", "typing_extensions.Protocol"})

# What a file needs besides a reference to `Sampler` (``may_report``): a class whose bases spell it,
# or the explicit `Sampler.__init__`, or `Sampler` under another name (`import ... Sampler as S`,
# `Base = data.Sampler`), whose classes the text cannot show. Data-loading code names `Sampler` far
# more often than it subclasses it (torch's own utils/data: 4 files parsed for nothing without this).
_MAY_SUBCLASS = TextPattern(
    r"\bclass\s+\w+\s*\([^)]*\bSampler\b"  # (a base call `Mixin()` ends the match: not this rule's class)
    r"|\bSampler\s*\.\s*__init__\b|\bSampler\s+as\b|=\s*[\w.]*\bSampler\b"
)


class SamplerInitArguments(Rule):
    code = "TU615"
    name = "sampler-init-arguments"
    summary = "`super().__init__(data_source)` in a `Sampler` subclass: `Sampler.__init__` is gone since torch 2.10."
    since = "2.10"
    change = Change.RAISES
    severity = Severity.ERROR
    fix_availability = FixAvailability.SOMETIMES
    looks_for = LooksFor(names=tuple(sorted(SAMPLER)))
    docs = RuleDocs(
        what="""
        Finds `super().__init__(...)` (and `super(Cls, self).__init__(...)`) with arguments in a
        class whose one base is `torch.utils.data.Sampler` (any import form, also `Sampler[int]`
        and beside `typing.Generic`), and `Sampler.__init__(self, ...)` with arguments after
        `self`.

        Not reported: a subclass of another sampler (`RandomSampler`, `BatchSampler`, ... keep
        their own `__init__`), a class with other bases (its `super().__init__` may reach one of
        them), and `super().__init__()` without arguments.
        """,
        why="""
        `Sampler.__init__(self, data_source)` never used its argument (torch 2.0's body is `pass`);
        2.1 made it optional and warned when it was given ("`data_source` argument is not used and
        will be removed in 2.2.0"). torch 2.10 removed the method: `super().__init__(data_source)`
        now reaches `object.__init__`, which takes no arguments, and the sampler's constructor
        raises `TypeError: object.__init__() takes exactly one argument (the instance to
        initialize)`. Subclassing `Sampler` this way was the documented pattern of torch 1.x, and
        real code keeps it (e3nn's `EqSampler`, fastNLP's `SamplerAdapter`).
        """,
        fix="""
        Drops the arguments: `super().__init__(data_source)` -> `super().__init__()`, which every
        release accepts.
        """,
        fix_safety="""
        Safe where the arguments are names, attributes or constants: the argument was ignored by
        every release that took it, so only its evaluation goes. Unsafe where an argument is
        another expression (a call's side effects would go with it). Proven by running a
        subclass under torch 2.9.1 (the original) and 2.14.1 (the fix).
        """,
        wheels_vs_notes="""
        Evidence: torch-2.9.1 torch/utils/data/sampler.py:70 (`def __init__(self, data_source: Optional[Sized]
        = None)`, warning when it is given); torch-2.10 and later: no `__init__` in `Sampler`.
        Confirmed on 2.13.0 and 2.14.1: `super().__init__(ds)` in a subclass raises TypeError.
        """,
    )
    examples = (
        Example(
            "the torch 1.x pattern",
            """
            import torch
            from torch.utils.data import Sampler

            class EveryOther(Sampler):
                def __init__(self, data_source):
                    super().__init__(data_source)
                    self.data_source = data_source

                def __iter__(self):
                    return iter(range(0, len(self.data_source), 2))

                def __len__(self):
                    return (len(self.data_source) + 1) // 2

            picked = torch.tensor(list(EveryOther(A)))
            """,
            fixed="""
            import torch
            from torch.utils.data import Sampler

            class EveryOther(Sampler):
                def __init__(self, data_source):
                    super().__init__()
                    self.data_source = data_source

                def __iter__(self):
                    return iter(range(0, len(self.data_source), 2))

                def __len__(self):
                    return (len(self.data_source) + 1) // 2

            picked = torch.tensor(list(EveryOther(A)))
            """,
            versions=("2.9", "2.14"),
        ),
        Example(
            "the explicit call, a generic base, and an argument with side effects (unsafe)",
            """
            import typing
            import torch.utils.data as data

            T = typing.TypeVar("T")

            class Shuffled(data.sampler.Sampler[int], typing.Generic[T]):
                def __init__(self, source, log):
                    data.Sampler.__init__(self, source)
                    super(Shuffled, self).__init__(log.record(source))
            """,
            fixed="""
            import typing
            import torch.utils.data as data

            T = typing.TypeVar("T")

            class Shuffled(data.sampler.Sampler[int], typing.Generic[T]):
                def __init__(self, source, log):
                    data.Sampler.__init__(self)
                    super(Shuffled, self).__init__()
            """,
            findings=2,
            unsafe=True,
            executable=False,  # (definitions only: the first example runs a subclass)
        ),
        Example(
            "not reported: another sampler's subclass, another base, no arguments",
            """
            import torch
            from torch.utils.data import RandomSampler, Sampler

            class Mine(RandomSampler):
                def __init__(self, source):
                    super().__init__(source)

            class Mixed(Sampler, dict):
                def __init__(self, source):
                    super().__init__(source)

            class Plain(Sampler):
                def __init__(self, source):
                    super().__init__()
            """,
            findings=0,
        ),
    )

    def may_report(self, spans: Spans[str] | Spans[bytes]) -> bool:
        return _MAY_SUBCLASS.found_in(spans.text) and super().may_report(spans)

    def focus_lines(self, text: str) -> list[int]:
        # `super().__init__(...)` spells no `Sampler`: keep the `__init__` lines of a file that names it.
        if "Sampler" not in text:
            return []
        return [number for number, line in enumerate(text.splitlines(), 1) if "__init__" in line]

    def check(self, ctx: Context) -> None:
        for call, _ in ctx.calls_to(SAMPLER_INIT):
            self._report(ctx, call, 1)
        for cls in ctx.walk():
            if isinstance(cls, ast.ClassDef) and self._only_base_is_sampler(ctx, cls):
                for method in cls.body:
                    if isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)):
                        for call in ast.walk(method):
                            if isinstance(call, ast.Call) and is_super_init(call):
                                self._report(ctx, call, 0)

    @staticmethod
    def _only_base_is_sampler(ctx: Context, cls: ast.ClassDef) -> bool:
        names = [ctx.qualified_name(base.value if isinstance(base, ast.Subscript) else base) for base in cls.bases]
        others = [name for name in names if name not in SAMPLER and name not in TYPING_BASES]
        return not others and any(name in SAMPLER for name in names) and not cls.keywords

    def _report(self, ctx: Context, call: ast.Call, keep: int) -> None:
        """``call`` passes arguments after its first ``keep`` ones (`self` of the explicit call)."""
        dropped = [*call.args[keep:], *call.keywords]
        if not dropped or any(isinstance(a, ast.Starred) for a in call.args[:keep]):
            return
        ctx.report(
            call,
            "`Sampler.__init__` is gone since torch 2.10: passing it arguments raises TypeError "
            "(`object.__init__()` takes none); they were never used",
            help="call it without arguments",
            fix=_drop_arguments(ctx, call, keep, dropped),
        )


def _drop_arguments(ctx: Context, call: ast.Call, keep: int, dropped: list[ast.expr | ast.keyword]) -> Fix | None:
    text = ctx.source.text
    _, end = ctx.source.node_range(call)
    close = end - 1
    func_end = ctx.source.node_range(call.func)[1]
    start = ctx.source.node_range(call.args[keep - 1])[1] if keep else text.index("(", func_end) + 1
    if text[close] != ")" or "#" in text[start:close]:
        return None  # (a comment inside: left to the user)
    values = [d.value if isinstance(d, ast.keyword) else d for d in dropped]
    plain = all(isinstance(v, (ast.Name, ast.Attribute, ast.Constant)) for v in values)
    return Fix(
        "call it without arguments",
        Applicability.SAFE if plain else Applicability.UNSAFE,
        (Edit(start, close, ""),),
    )


RULE = SamplerInitArguments()
