"""Shared by the rules for removed linear-algebra functions and Tensor methods.

A rule supplies a ``Rewrite``: how the old call's arguments map onto the replacement. The
helpers here find the calls (through any import form), build the edits, and handle references
that are not calls (``functools.partial(torch.cholesky, ...)``), which get no automatic fix.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass

from torchup.analysis.context import Context
from torchup.analysis.patterns import BoundCall, Edits, bind_call, has_comment
from torchup.analysis.receivers import receiver_confidence, receiver_kind
from torchup.core.diagnostics import Applicability, Confidence, Edit, Fix, ImportRequest, preview
from torchup.core.facts import FACTS, removed
from torchup.rules._arguments import from_imports

# Maps a bound call to argument edits, or None when no exact rewrite exists.
ArgumentRewrite = Callable[[Context, BoundCall], "ArgumentEdits | None"]


@dataclass
class ArgumentEdits:
    """The edits that rewrite a call's arguments for its replacement."""

    edits: list[Edit]
    removed: int = 0  # arguments deleted outright (to know whether any remain)


@dataclass(frozen=True)
class Signature:
    """A function's parameters, as far as a rewrite needs them."""

    positional: tuple[str, ...]
    keyword_only: tuple[str, ...] = ()
    star_kwargs_ok: bool = False  # `**kw` can only hold names the replacement takes too


NO_EXACT_FIX = "no automatic fix: this call's arguments, or what `torch` names here, rule out an exact rewrite"


def removal_note(qualname: str) -> str:
    facts = removed(qualname)
    when = facts["removed_in"]
    return "removed in torch 2.14" if when == "2.14" else "removed before torch 2.13 and still raises"


def removed_error() -> str:
    return str(FACTS["removed_error"])


def report_reference(ctx: Context, node: ast.expr, qualname: str) -> None:
    replacement = removed(qualname)["replacement"]
    ctx.report(
        node,
        f"`{qualname}` is {removal_note(qualname)}; this reference will raise when called",
        help=f"refer to `{replacement}` instead and check its arguments (`torchup rule {ctx.rule.code}`)"
        if ctx.rule else None,
        subject=qualname,
    )


def report_imports(ctx: Context, qualnames: frozenset[str]) -> None:
    """`from torch import qr`: the import line itself, once, besides each use (as TorchFix's
    TOR004/TOR103 report it). No fix of its own: the fixes of the uses drop it once none is left."""
    for alias, qualname in from_imports(ctx.resolver, qualnames):
        ctx.report(
            alias,
            f"`{qualname}` (imported) is {removal_note(qualname)}; use `{removed(qualname)['replacement']}`",
            help="torchup fixes the uses; this import goes when none is left",
            subject=qualname,
        )


def _prepare(
    ctx: Context, call: ast.Call, replacement: str, signature: Signature, rewrite: ArgumentRewrite
) -> tuple[ArgumentEdits, tuple[str, tuple[ImportRequest, ...]]] | None:
    """Bind the arguments, rewrite them, and find how to name the replacement's module here."""
    bound = bind_call(call, list(signature.positional), signature.keyword_only)
    if bound is None or bound.has_star_args or (bound.has_star_kwargs and not signature.star_kwargs_ok):
        return None
    arguments = rewrite(ctx, bound)
    reference = ctx.module_reference(replacement.rsplit(".", 1)[0], call)
    if arguments is None or reference is None:
        return None
    return arguments, reference


def function_call_fix(
    ctx: Context,
    call: ast.Call,
    replacement: str,
    signature: Signature,
    rewrite: ArgumentRewrite,
    applicability: Applicability,
) -> Fix | None:
    """Replace the callee with ``replacement`` and rewrite the arguments; None if not exact."""
    prepared = _prepare(ctx, call, replacement, signature, rewrite)
    if prepared is None:
        return None
    arguments, (module_text, imports) = prepared
    callee = f"{module_text}.{replacement.rsplit('.', 1)[1]}"
    edits = [Edits(ctx.source).replace(call.func, callee), *arguments.edits]
    released = (id(call.func),) if isinstance(call.func, ast.Name) else ()
    message = fix_message(ctx, call, edits, replacement)
    return Fix(message, applicability, tuple(edits), imports, released, replaces=ctx.qualified_name(call.func))


def method_call_fix(
    ctx: Context,
    call: ast.Call,
    replacement: str,
    signature: Signature,
    rewrite: ArgumentRewrite,
    applicability: Applicability,
) -> Fix | None:
    """``x.m(args)`` -> ``replacement(x, args')``; None if not exact."""
    assert isinstance(call.func, ast.Attribute)
    prepared = _prepare(ctx, call, replacement, signature, rewrite)
    _, call_end = ctx.source.node_range(call)
    open_paren = Edits(ctx.source).open_paren_after(call.func, call_end)
    if prepared is None or open_paren is None:
        return None
    arguments, (module_text, imports) = prepared
    receiver = call.func.value
    head_start, _ = ctx.source.node_range(call.func)
    if has_comment(ctx.source, head_start, open_paren - 1):
        return None  # the head is rewritten whole: a comment inside it would be lost
    receiver_text = ctx.segment(receiver)
    if isinstance(receiver, (ast.Yield, ast.YieldFrom, ast.Starred)):
        receiver_text = f"({receiver_text})"
    remaining = len(call.args) + len(call.keywords) - arguments.removed
    separator = ""
    if remaining:
        separator = "," if ctx.source.text[open_paren:].lstrip(" \t").startswith(("\n", "\r")) else ", "
    head = f"{module_text}.{replacement.rsplit('.', 1)[1]}({receiver_text}{separator}"
    edits = [Edit(head_start, open_paren, head), *arguments.edits]
    return Fix(fix_message(ctx, call, edits, replacement), applicability, tuple(edits), imports)


def fix_message(ctx: Context, call: ast.Call, edits: list[Edit], replacement: str) -> str:
    """``replace with `torch.linalg.qr(A, mode="complete")``` when short, else the function's name."""
    start, end = ctx.source.node_range(call)
    text = preview(ctx.source.text, start, end, edits)
    if text is None or "\n" in text or len(text) > 100:
        return f"use `{replacement}`"
    return f"replace with `{text}`"


def method_calls(ctx: Context, method: str) -> list[ast.Call]:
    """Calls ``recv.method(...)`` where ``recv.method`` is not a module attribute (np.linalg.qr)."""
    if not ctx.resolver.imports_torch:
        return []  # reported only in files that use torch
    found = []
    for call in ctx.resolver.calls:
        func = call.func
        if isinstance(func, ast.Attribute) and func.attr == method and ctx.qualified_name(func) is None:
            found.append(call)
    return found


def keyword_or_positional_replace(ctx: Context, bound: BoundCall, name: str, content: str) -> Edit:
    """Replace argument ``name`` (``some=False`` or a positional ``False``) with ``content``."""
    argument = bound.arguments[name]
    node: ast.AST = argument.keyword if argument.keyword is not None else argument.value
    return Edits(ctx.source).replace_argument(bound.call, node, content)


@dataclass(frozen=True)
class TensorMethod:
    """A removed Tensor method with an exact ``torch.linalg`` replacement (TU102, TU104)."""

    method: str
    replacement: str
    function_signature: Signature  # for the unbound ``torch.Tensor.<method>(x, ...)``
    method_signature: Signature
    rewrite: ArgumentRewrite
    manual_help: str

    def check(self, ctx: Context) -> None:
        unbound = f"torch.Tensor.{self.method}"
        for node, qualname, call in ctx.references_to(frozenset({unbound})):
            if call is None:
                report_reference(ctx, node, qualname)
                continue
            fix = function_call_fix(
                ctx, call, self.replacement, self.function_signature, self.rewrite, Applicability.SAFE
            )
            ctx.report(node, f"`{unbound}` is removed in torch 2.14", fix=fix, help=None if fix else self.manual_help)
        for call in method_calls(ctx, self.method):
            confidence = receiver_confidence(ctx, call)
            if confidence is None:
                continue
            applicability = Applicability.SAFE if confidence is Confidence.CERTAIN else Applicability.UNSAFE
            fix = method_call_fix(ctx, call, self.replacement, self.method_signature, self.rewrite, applicability)
            ctx.report(
                call.func,
                f"`Tensor.{self.method}()` is removed in torch 2.14{receiver_kind(confidence)}",
                help=None if fix else f"{self.manual_help}; {NO_EXACT_FIX}",
                fix=fix,
                confidence=confidence,
                receiver_method=self.method,
            )
