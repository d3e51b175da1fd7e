"""TU501: nested ``torch.cond`` chains are a multi-way choice; torch 2.14 has ``switch`` for it."""

from __future__ import annotations

import ast
from dataclasses import dataclass

from torchup.analysis.context import Context
from torchup.analysis.patterns import bind_call
from torchup.analysis.rule import Change, Example, FixAvailability, LooksFor, Rule, RuleDocs
from torchup.core.diagnostics import Severity
from torchup.rules._modernise import feature, local_function, returned_call

SWITCH = feature("switch")
COND = frozenset(SWITCH["cond"])
COND_PARAMETERS = ["pred", "true_fn", "false_fn", "operands"]
MAX_DEPTH = 16  # deeper chains are reported by their first 16 levels
# At most this many conds are expanded per chain: a branch function shared by both sides of a cond
# (a diamond) is expanded once per path, which doubles the tree at every level. Beyond the budget a
# nested cond is named as a leaf.
MAX_CHOICES = 16
SHORT = 60  # predicates and branches longer than this are named by their line


@dataclass
class _Choice:
    """A ``torch.cond`` whose branches are leaves (functions) or further choices."""

    call: ast.Call
    pred: ast.expr
    branches: tuple[ast.expr | _Choice, ast.expr | _Choice]

    def leaves(self) -> list[ast.expr]:
        found: list[ast.expr] = []
        for branch in self.branches:
            found += branch.leaves() if isinstance(branch, _Choice) else [branch]
        return found

    def choices(self) -> list[_Choice]:
        """Every cond of the tree, outermost first, true branch before false branch."""
        found = [self]
        for branch in self.branches:
            if isinstance(branch, _Choice):
                found += branch.choices()
        return found

    def index(self, counter: list[int], predicates: dict[int, str]) -> str:
        """``torch.where(p0, 0, torch.where(p1, 1, 2))``: the leaf this tree picks, by number."""
        name = predicates[id(self)]
        parts = []
        for branch in self.branches:
            if isinstance(branch, _Choice):
                parts.append(branch.index(counter, predicates))
            else:
                parts.append(str(counter[0]))
                counter[0] += 1
        return f"torch.where({name}, {parts[0]}, {parts[1]})"


class _Recursive(Exception):
    pass


def _choice(
    ctx: Context, call: ast.Call, path: frozenset[int] = frozenset(), budget: list[int] | None = None
) -> _Choice | None:
    budget = [MAX_CHOICES - 1] if budget is None else budget  # conds left to expand after this one
    bound = bind_call(call, COND_PARAMETERS)
    if bound is None or bound.has_star_args or bound.has_star_kwargs:
        return None
    pred, true_fn, false_fn = (bound.get(name) for name in COND_PARAMETERS[:3])
    if pred is None or true_fn is None or false_fn is None:
        return None
    branches: list[ast.expr | _Choice] = []
    for branch in (true_fn.value, false_fn.value):
        function = local_function(ctx, branch)
        inner = returned_call(function) if function is not None else None
        nested = None
        if inner is not None and len(path) < MAX_DEPTH and ctx.qualified_name(inner.func) in COND:
            if id(inner) in path or inner is call:
                raise _Recursive  # a branch that calls its own cond again: not a finite choice
            if budget[0] > 0:
                budget[0] -= 1
                nested = _choice(ctx, inner, path | {id(call)}, budget)
                if nested is None:
                    budget[0] += 1
        branches.append(nested if nested is not None else branch)
    return _Choice(call, pred.value, (branches[0], branches[1]))


def _describe(ctx: Context, node: ast.expr, what: str) -> str:
    text = ctx.segment(node)
    if "\n" not in text and len(text) <= SHORT:
        return f"`{text}`"
    return f"the {what} on line {node.lineno}"


class NestedCondSwitch(Rule):
    change = Change.ADOPT
    code = "TU501"
    name = "nested-cond-to-switch"
    summary = "Nested `torch.cond` chains (a multi-way choice) can be one `switch` in torch 2.14 (prototype)."
    enabled_by_default = False
    severity = Severity.INFO
    fix_availability = FixAvailability.NONE
    looks_for = LooksFor(names=tuple(sorted(COND)))
    reads_unfocused_bodies = True  # the local functions passed as branches
    docs = RuleDocs(
        what="""
        Finds `torch.cond(pred, true_fn, false_fn, operands)` (any import form, also
        `torch._higher_order_ops.cond`) where a branch does nothing but call `torch.cond` again:
        a lambda whose body is that call, a `def` whose body is `return torch.cond(...)` (a
        docstring aside), or a name bound once to such a lambda. Only the outermost `cond` of
        a chain is reported, with the number of ways. Not reported: a single `cond`, a branch
        that does more than call `cond` (`lambda t: torch.cond(...) * 2`), a branch passed by
        a name this file cannot pin down (a parameter, an import), a branch that calls its own
        `cond` again (recursion is no finite choice), and `cond` from other libraries
        (`jax.lax.cond`). Off by default; informational.
        """,
        why=f"""
        torch 2.14 adds `switch(index, branches, operands=())`, which runs
        `branches[index](*operands)` and, under `torch.compile`/`torch.export`, captures every
        branch in one higher-order op instead of a tree of `cond`s. Its real path is
        `{SWITCH["function"]}` (`{SWITCH["import"]}`); it is a {SWITCH["status"]} feature
        ("limited support for input and output types"), and there is no `torch.switch` in
        2.14.1 or 2.15.0 (`switch.__module__` says `torch`, but nothing binds the name there).

        The semantics differ from nested predicates: `index` is an int, a SymInt or a
        one-element integer tensor, and an index out of range is clamped into
        `[0, len(branches) - 1]` (in 2.14.1, `switch(-5, ...)` runs branch 0 and `switch(7,
        ...)` the last one), where a `cond` chain always reaches exactly one leaf. A boolean
        tensor index picks branch 1 for `True` — the reverse of `cond`, whose first branch is
        the true one. With one branch, `switch` just calls it.
        """,
        fix="""
        No automatic fix: predicates have to become one index, and the inner predicates are
        usually written in terms of the inner lambda's parameters. The help names the branches
        in order and the exact index expression. For
        `cond(p0, f0, lambda *ops: cond(p1, f1, f2, ops), ops)`:

            from torch._higher_order_ops import switch
            out = switch(torch.where(p0, 0, torch.where(p1, 1, 2)), (f0, f1, f2), ops)

        with `p1` computed from the same operands. `torch.where` evaluates every predicate
        (the chain evaluates only those on the taken path), so they must be safe to compute
        for every input. Keep the chain where code must also run on torch 2.13, which has no
        `switch`.
        """,
        fix_safety="There is no fix: turning predicates into an index is a rewrite to check by hand.",
        wheels_vs_notes="""
        The release article calls it `torch.switch`; the 2.14.1 wheel has no such attribute
        (`hasattr(torch, "switch")` is False, as in the 2.15.0 sources): import it from
        `torch._higher_order_ops`. The article does not mention that it is a prototype or that
        out-of-range indices are clamped; the wheel's docstring and code do.
        """,
    )
    examples = (
        Example(
            "a three-way choice written as nested conds",
            """
            import torch

            def route(x):
                return torch.cond(
                    x.sum() > 0,
                    lambda t: t * 2,
                    lambda t: torch.cond(t.sum() < -10, lambda u: u - 1, lambda u: u + 1, (t,)),
                    (x,),
                )
            """,
        ),
        Example(
            "named branch functions and an alias",
            '''
            from torch import cond as tcond

            def small(t):
                return t + 1

            def large(t):
                return t - 1

            def rest(t):
                """The second level."""
                return tcond(t.numel() > 8, large, small, (t,))

            def route(x):
                return tcond(x.mean() > 0, small, rest, (x,))
            ''',
        ),
        Example(
            "not reported: one cond, a branch that does more, another library's cond",
            """
            import torch
            from jax.lax import cond

            y = torch.cond(A.sum() > 0, lambda t: t + 1, lambda t: t - 1, (A,))
            z = torch.cond(A.sum() > 0, lambda t: t, lambda t: torch.cond(t.sum() > 1, abs, abs, (t,)) * 2, (A,))
            w = cond(True, lambda: 1, lambda: cond(False, lambda: 2, lambda: 3))
            """,
            findings=0,
        ),
    )

    def check(self, ctx: Context) -> None:
        trees = []
        nested: set[int] = set()
        for call, qualname in ctx.calls_to(COND):
            try:
                tree = _choice(ctx, call)
            except _Recursive:
                continue
            if tree is None or all(not isinstance(b, _Choice) for b in tree.branches):
                continue
            trees.append((tree, qualname))
            nested.update(id(choice.call) for choice in tree.choices()[1:])
        for tree, qualname in trees:
            if id(tree.call) in nested:
                continue  # reported with the chain it belongs to
            choices = tree.choices()
            leaves = tree.leaves()
            predicates = {id(choice): f"p{number}" for number, choice in enumerate(choices)}
            index = tree.index([0], predicates)
            ways = len(leaves)
            named_predicates = ", ".join(
                f"p{number} = {_describe(ctx, choice.pred, 'predicate')}" for number, choice in enumerate(choices)
            )
            named_leaves = ", ".join(_describe(ctx, leaf, "branch") for leaf in leaves)
            calls = len({id(choice.call) for choice in choices})  # a shared branch is one call
            ctx.report(
                tree.call.func,
                f"{calls} nested `{qualname}` calls make a {ways}-way choice; torch 2.14 has "
                f"`switch(index, branches, operands)` for it, importable from `torch._higher_order_ops` "
                f"(a prototype; there is no `torch.switch`)",
                help=(
                    f"`{SWITCH['import']}`, then `switch({index}, (b0, ..., b{ways - 1}), operands)` with "
                    f"{named_predicates} (written in terms of the outer operands) and the branches b0..b{ways - 1} = "
                    f"{named_leaves}; an index outside 0..{ways - 1} is clamped, and torch 2.13 has no `switch`"
                ),
            )


RULE = NestedCondSwitch()
