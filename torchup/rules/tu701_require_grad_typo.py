"""TU701: `x.require_grad = True`, a typo for `requires_grad` that does nothing (TorchFix's TOR002)."""

from __future__ import annotations

import ast

from torchup.analysis.context import Context
from torchup.analysis.flow import assigned_call
from torchup.analysis.inference import Evidence
from torchup.analysis.patterns import has_comment
from torchup.analysis.receivers import receiver_evidence
from torchup.analysis.rule import Change, Example, FixAvailability, LooksFor, Rule, RuleDocs
from torchup.core.diagnostics import Applicability, Confidence, Edit, Fix, Severity

TYPO = "require_grad"


class RequireGradTypo(Rule):
    change = Change.MISTAKE
    since = None  # (no release: a mistake on every one)
    code = "TU701"
    name = "require-grad-typo"
    summary = "`x.require_grad = ...` sets an attribute nothing reads: a typo for `requires_grad`."
    severity = Severity.WARNING
    fix_availability = FixAvailability.UNSAFE
    looks_for = LooksFor(attributes=(TYPO,), strings=(TYPO,))
    instance_attributes = (TYPO,)  # (a class of the project's own may have one: its instances are no tensors)
    docs = RuleDocs(
        what="""
        Finds assignments to an attribute `require_grad` (`x.require_grad = True`, also in a
        tuple target, `setattr(x, "require_grad", v)`) in files that import torch. Not reported:
        a receiver that is evidently no tensor or module (a numpy array, a name the file never
        binds), and, in a file that also reads `require_grad` (then it is most likely an
        attribute of the project's own), any receiver but an evident tensor or module
        (`torch.zeros(3)`, `torch.nn.Linear(2, 2)`). A finding on a receiver of unknown type (a
        parameter, an object made elsewhere) is `possible`: it may be an object of the project's
        own with an attribute of that name, and it is dropped where a class of the checked
        project sets `self.require_grad` itself (in any of its files). TorchFix's TOR002 reported
        every such assignment.
        """,
        why="""
        A tensor's (or parameter's) switch is `requires_grad`; assigning `require_grad` adds a
        plain Python attribute and changes nothing: no gradient is computed for `x` (or, to
        freeze it, gradients still are). No release warns about it.
        """,
        fix="""
        `x.require_grad = v` -> `x.requires_grad = v`. On a module, `requires_grad` is no
        switch either: for a module made in sight (`m = torch.nn.Linear(2, 2)`) the fix is
        `m.requires_grad_(v)`, which sets every parameter's.
        """,
        fix_safety="""
        Unsafe: it changes what the code computes, which is the point: gradients start (or stop)
        flowing through `x`, and on a tensor that is not a leaf (the result of an operation)
        setting `requires_grad` raises RuntimeError.
        """,
    )
    examples = (
        Example(
            "a leaf tensor meant to be trained",
            """
            import torch
            w = torch.zeros(3)
            w.require_grad = True
            loss = (w * 2).sum()
            """,
            fixed="""
            import torch
            w = torch.zeros(3)
            w.requires_grad = True
            loss = (w * 2).sum()
            """,
            unsafe=True,
        ),
        Example(
            "freezing a module: its `requires_grad` attribute is no switch either",
            """
            import torch
            model = torch.nn.Linear(2, 2)
            model.require_grad = False
            frozen = not any(p.requires_grad for p in model.parameters())
            """,
            fixed="""
            import torch
            model = torch.nn.Linear(2, 2)
            model.requires_grad_(False)
            frozen = not any(p.requires_grad for p in model.parameters())
            """,
            unsafe=True,
            executable=False,  # (the fix changes the result on purpose: tests/test_differential.py runs both)
        ),
        Example(
            "freezing parameters through setattr",
            """
            import torch
            model = torch.nn.Linear(2, 2)
            for p in model.parameters():
                setattr(p, "require_grad", False)
            """,
            findings=1,
        ),
        Example(
            "an attribute of the project's own, read elsewhere",
            """
            import torch

            class Options:
                def __init__(self):
                    self.require_grad = True

            def use(options, x):
                return x.detach() if not options.require_grad else x
            """,
            findings=0,
        ),
        Example(
            "numpy",
            """
            import numpy as np
            import torch
            a = np.zeros(3)
            a.require_grad = True
            """,
            findings=0,
        ),
    )

    def check(self, ctx: Context) -> None:
        if not ctx.resolver.imports_torch:
            return
        # A file that reads `require_grad` has an attribute of its own by that name: only a receiver
        # that is evidently a tensor is a typo there.
        read = _read_anywhere(ctx)
        for node in ctx.walk():
            for target in _attribute_targets(node):
                if _not_torch(ctx, target.value) or (read and not _evidently_tensor(ctx, target.value)):
                    continue
                # (an object of unknown type may be the project's own, with an attribute of that name)
                sure = Confidence.CERTAIN if _evidently_tensor(ctx, target.value) else Confidence.POSSIBLE
                ctx.report(target, "`require_grad` is no attribute torch reads: did you mean `requires_grad`?",
                           help="assign `requires_grad` (on a module: call `requires_grad_(...)`)",
                           fix=_fix(ctx, node, target), confidence=sure, receiver_method=TYPO)
            if _is_setattr(node):
                assert isinstance(node, ast.Call)
                receiver = node.args[0]
                if not _not_torch(ctx, receiver) and not (read and not _evidently_tensor(ctx, receiver)):
                    edit = Edit(*ctx.source.node_range(node.args[1]), ctx.quote(node.args[1]) + "requires_grad"
                                + ctx.quote(node.args[1]))
                    ctx.report(node.args[1], "`setattr(x, \"require_grad\", ...)` sets no attribute torch reads: "
                               "did you mean `requires_grad`?", fix=Fix("set `requires_grad`", Applicability.UNSAFE,
                                                                        (edit,)))


def _fix(ctx: Context, statement: ast.AST, target: ast.Attribute) -> Fix | None:
    """`x.requires_grad = v`; on a module made in sight (`torch.nn.Linear(...)`), whose
    `requires_grad` attribute is no switch either, `x.requires_grad_(v)`."""
    if _module(ctx, target.value):
        if not (isinstance(statement, ast.Assign) and statement.targets == [target]):
            return None  # (a tuple target: no one statement to rewrite)
        start, end = ctx.source.node_range(statement)
        if has_comment(ctx.source, start, end):
            return None
        call = f"{ctx.segment(target.value)}.requires_grad_({ctx.segment(statement.value)})"
        return Fix("call `requires_grad_(...)`", Applicability.UNSAFE, (Edit(start, end, call),))
    start, end = ctx.source.node_range(target)
    name_start = ctx.source.text.rfind(TYPO, start, end)
    if name_start < 0:
        return None
    edit = Edit(name_start, name_start + len(TYPO), "requires_grad")
    return Fix("assign `requires_grad`", Applicability.UNSAFE, (edit,))


def _attribute_targets(node: ast.AST) -> list[ast.Attribute]:
    targets: list[ast.expr] = []
    if isinstance(node, ast.Assign):
        targets = list(node.targets)
    elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
        targets = [node.target]
    found: list[ast.Attribute] = []
    while targets:
        target = targets.pop()
        if isinstance(target, (ast.Tuple, ast.List)):
            targets += target.elts
        elif isinstance(target, ast.Starred):
            targets.append(target.value)
        elif isinstance(target, ast.Attribute) and target.attr == TYPO:
            found.append(target)
    return found


def _is_setattr(node: ast.AST) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "setattr" \
        and len(node.args) == 3 and isinstance(node.args[1], ast.Constant) and node.args[1].value == TYPO


def _read_anywhere(ctx: Context) -> bool:
    """Does the file read `require_grad` (`x.require_grad`, `getattr(x, "require_grad")`)?"""
    for node in ctx.resolver.attributes_named([TYPO]):
        if isinstance(node.ctx, ast.Load):
            return True
    return any(
        isinstance(call.func, ast.Name) and call.func.id in ("getattr", "hasattr") and len(call.args) >= 2
        and isinstance(call.args[1], ast.Constant) and call.args[1].value == TYPO
        for call in ctx.resolver.calls
    )


def _evidence(ctx: Context, receiver: ast.expr) -> Evidence:
    probe = ast.Call(func=ast.Attribute(value=receiver, attr=TYPO, ctx=ast.Load()), args=[], keywords=[])
    return receiver_evidence(ctx, probe)


def _not_torch(ctx: Context, receiver: ast.expr) -> bool:
    """Is the receiver evidently something other than a tensor or a module (numpy, unbound)?"""
    return _evidence(ctx, receiver) is Evidence.NOT_TENSOR


def _evidently_tensor(ctx: Context, receiver: ast.expr) -> bool:
    return _evidence(ctx, receiver) is Evidence.TENSOR or _module(ctx, receiver)


def _module(ctx: Context, receiver: ast.expr) -> bool:
    """Is the receiver a name whose reaching assignment makes a `torch.nn` module (not a Parameter)?"""
    value = assigned_call(ctx, receiver)
    name = ctx.qualified_name(value.func) if value is not None else None
    return name is not None and name.startswith("torch.nn.") and name.rpartition(".")[2] != "Parameter"


RULE = RequireGradTypo()
