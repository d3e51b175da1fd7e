"""TU140: with ``with_stack=True``, ``key_averages()`` hides Python-function rows in torch 2.14."""

from __future__ import annotations

import ast

from torchup.analysis.context import Context
from torchup.analysis.patterns import literal_bool
from torchup.analysis.resolver import Binding, BindingKind
from torchup.analysis.rule import Change, Example, FixAvailability, LooksFor, Rule, RuleDocs
from torchup.core.diagnostics import Applicability, Fix, Severity
from torchup.rules._arguments import append_argument

KINETO = frozenset({"torch.profiler.profile", "torch.profiler.profiler.profile"})
AUTOGRAD = frozenset({"torch.autograd.profiler.profile"})
KINETO_WITH_STACK_POSITION = 5  # activities, schedule, on_trace_ready, record_shapes, profile_memory, with_stack
KEYWORD = "include_python_functions"
ADDED = f"{KEYWORD}=True"
ERROR_ON_2_13 = f"TypeError: _KinetoProfile.key_averages() got an unexpected keyword argument '{KEYWORD}'"


def records_stacks(ctx: Context, call: ast.Call) -> bool | None:
    """For a profiler call: True/None (maybe) when it records stacks; False when it does not or is no profiler."""
    qualname = ctx.qualified_name(call.func)
    if qualname not in KINETO | AUTOGRAD:
        return False
    keyword = next((k for k in call.keywords if k.arg == "with_stack"), None)
    if keyword is not None:
        value = literal_bool(keyword.value)
        return None if value is None else value
    if qualname in KINETO and len(call.args) > KINETO_WITH_STACK_POSITION:
        value = literal_bool(call.args[KINETO_WITH_STACK_POSITION])
        return None if value is None else value
    return False  # the default; `**options` could hold it, but nothing here says so


class _Profiles:
    """The names a file binds to profiler objects: ``with profile(...) as prof`` or ``prof = profile(...)``."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self._with_targets: dict[int, dict[int, ast.Call]] = {}  # by scope node: Name -> call

    def _with_call(self, binding: Binding) -> ast.Call | None:
        """The call in the ``with <call> as <name>`` that made ``binding``: searched in the statements
        of its scope (a whole-tree walk costs more than the rest of the rule), then, for a name
        declared ``global`` in a function, everywhere."""
        for node in (binding.scope.node, self.ctx.tree):
            targets = self._with_targets.get(id(node))
            if targets is None:
                targets = self._with_targets[id(node)] = _with_targets(node, whole=node is self.ctx.tree)
            if id(binding.node) in targets:
                return targets[id(binding.node)]
        return None

    def stacks_recorded(self, name: ast.Name) -> bool:
        """Every binding of ``name`` here is a profiler, and some of them may record stacks."""
        found = self.ctx.resolver.lookup_name(name)
        if not found.bindings:
            return False
        verdicts = []
        for binding in found.bindings:
            call = self._with_call(binding) if binding.kind is BindingKind.OTHER else None
            if call is None and binding.kind is BindingKind.ASSIGNMENT and isinstance(binding.value, ast.Call):
                call = binding.value
            if call is None or self.ctx.qualified_name(call.func) not in KINETO | AUTOGRAD:
                return False
            verdicts.append(records_stacks(self.ctx, call))
        return any(verdict is not False for verdict in verdicts)


def _with_targets(scope: ast.AST, whole: bool) -> dict[int, ast.Call]:
    """``id(name) -> call`` for each ``with <call> as <name>`` among the statements of ``scope``
    (not those of the functions and classes within it, unless ``whole``)."""
    found: dict[int, ast.Call] = {}
    stack: list[ast.AST] = [scope]
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.With, ast.AsyncWith)):
            for item in node.items:
                if isinstance(item.optional_vars, ast.Name) and isinstance(item.context_expr, ast.Call):
                    found[id(item.optional_vars)] = item.context_expr
        stack.extend(
            child for child in ast.iter_child_nodes(node)
            if isinstance(child, (ast.stmt, ast.excepthandler, ast.match_case))
            and (whole or not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)))
        )
    return found


def profile_name(receiver: ast.expr) -> ast.Name | None:
    """``prof`` in ``prof.key_averages()``, ``prof.events().key_averages()`` and
    ``prof.function_events.key_averages()``."""
    if isinstance(receiver, ast.Name):
        return receiver
    if isinstance(receiver, ast.Attribute) and receiver.attr == "function_events":
        return receiver.value if isinstance(receiver.value, ast.Name) else None
    if (
        isinstance(receiver, ast.Call)
        and not receiver.args
        and not receiver.keywords
        and isinstance(receiver.func, ast.Attribute)
        and receiver.func.attr == "events"
        and isinstance(receiver.func.value, ast.Name)
    ):
        return receiver.func.value
    return None


class KeyAveragesPythonRows(Rule):
    change = Change.BEHAVES
    code = "TU140"
    name = "key-averages-python-rows"
    summary = "With `with_stack=True`, `prof.key_averages()` hides Python-function rows in torch 2.14."
    enabled_by_default = True
    severity = Severity.INFO
    fix_availability = FixAvailability.SAFE
    looks_for = LooksFor(attributes=("key_averages",))  # every finding is a `.key_averages(` call
    docs = RuleDocs(
        what="""
        Finds `prof.key_averages()` (also `prof.events().key_averages()` and
        `prof.function_events.key_averages()`) where `prof` is bound only to
        `torch.profiler.profile(...)` or `torch.autograd.profiler.profile(...)` objects
        (`with ... as prof` or `prof = ...`), at least one of which is given `with_stack=True` or
        a `with_stack=` expression. Without `with_stack` there are no Python-function events and
        nothing changes, so such code is not reported; nor is a call that already passes
        `include_python_functions`. On by default (at info level): the pattern is specific, and
        where it matches, the output does change.
        """,
        why="""
        torch 2.14 gave `key_averages()` a new parameter, `include_python_functions=False`, which
        drops the Python-function events that `with_stack=True` records (the rows named like
        `train.py(12): <module>`, `torch/profiler/profiler.py(...): __exit__` or `<built-in function
        hasattr>`). 2.13 had no such filter. A small workload, averaged (both wheels, CPU):

            2.13.0: 40 rows    2.14.1: 8 rows    2.14.1 with include_python_functions=True: 40 rows

        so tables, `row_limit` cut-offs, and code that looks up those rows silently change.
        """,
        fix="""
        Adds `include_python_functions=True` as the call's last argument, which in 2.14 restores
        exactly 2.13's set of rows (EventList.key_averages only skips `evt.is_python_function`
        events when the flag is false; the averaging is otherwise the same code).
        """,
        fix_safety=f"""
        Safe for torch 2.14: the rows are 2.13's (checked on both wheels: same keys and counts,
        with `with_stack=True` on `torch.profiler.profile` and `torch.autograd.profiler.profile`).
        Note that the fixed code no longer runs on torch 2.13, whose `key_averages` does not know
        the keyword:

            {ERROR_ON_2_13}

        As with TU130, torchup migrates to 2.14; code that must run on both releases should pass
        the keyword only on 2.14. If you prefer 2.14's shorter tables, drop the keyword again.
        """,
        wheels_vs_notes="""
        The release article does not mention the new parameter; it is in the 2.14.1 wheel's
        `torch.profiler.profile.key_averages`, `torch.autograd.profiler.profile.key_averages` and
        `EventList.key_averages`. `torch.autograd.profiler_legacy.profile.key_averages` did not
        get it (and records no Python-function events, in either wheel).
        """,
    )
    examples = (
        Example(
            "torch.profiler with stacks",
            """
            import torch
            with torch.profiler.profile(with_stack=True) as prof:
                y = A @ A
            rows = len(prof.key_averages())
            """,
            fixed="""
            import torch
            with torch.profiler.profile(with_stack=True) as prof:
                y = A @ A
            rows = len(prof.key_averages(include_python_functions=True))
            """,
        ),
        Example(
            "the autograd profiler, a flag, and events()",
            """
            import torch.autograd.profiler as profiler

            def table(step, stacks):
                with profiler.profile(with_stack=stacks, record_shapes=True) as prof:
                    step()
                by_stack = prof.key_averages(group_by_stack_n=5)
                return prof.events().key_averages(), by_stack
            """,
            fixed="""
            import torch.autograd.profiler as profiler

            def table(step, stacks):
                with profiler.profile(with_stack=stacks, record_shapes=True) as prof:
                    step()
                by_stack = prof.key_averages(group_by_stack_n=5, include_python_functions=True)
                return prof.events().key_averages(include_python_functions=True), by_stack
            """,
            findings=2,
            executable=False,  # defines a function only
        ),
        Example(
            "not reported: no stacks, already explicit, another object",
            """
            import torch
            with torch.profiler.profile(record_shapes=True) as prof:
                y = A @ A
            with torch.profiler.profile(with_stack=True) as prof2:
                y = A @ A
            a = prof.key_averages()
            b = prof2.key_averages(include_python_functions=False)
            c = torch.profiler.profile(with_stack=False).key_averages
            """,
            findings=0,
        ),
    )

    def check(self, ctx: Context) -> None:
        profiles: _Profiles | None = None
        for call in ctx.resolver.calls:
            func = call.func
            if not isinstance(func, ast.Attribute) or func.attr != "key_averages":
                continue
            name = profile_name(func.value)
            if name is None or any(k.arg in (KEYWORD, None) for k in call.keywords) or len(call.args) >= 4:
                continue  # the flag is given (4th positional), or may be inside `**options`
            if any(isinstance(a, ast.Starred) for a in call.args):
                continue
            profiles = profiles or _Profiles(ctx)
            if not profiles.stacks_recorded(name):
                continue
            edit = append_argument(ctx.source, call, ADDED)
            # (the profile is an object whose type the engine does not read: say what the fix needs)
            fix = Fix(f"pass `{ADDED}` (2.13's rows)", Applicability.SAFE, (edit,),
                      requires=("torch.profiler.profile.key_averages(include_python_functions=)",)) if edit else None
            ctx.report(
                func,
                "`key_averages()` hides Python-function rows in torch 2.14 (new `include_python_functions=False`); "
                "this profile records stacks, and 2.13 showed them",
                help=None if fix else f"pass `{ADDED}` to keep 2.13's rows",
                fix=fix,
            )


RULE = KeyAveragesPythonRows()
