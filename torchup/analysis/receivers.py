"""The one policy of every method rule (`x.cholesky()`, `x.qr()`, `x.symeig()`, `x.clamp(...)`):
how sure a finding is that ``x`` is a tensor, from the evidence about the receiver
(torchup.analysis.inference), never from the rule.

- ``CERTAIN``: the receiver is evidently a tensor; the finding may carry a safe fix.
- ``LIKELY``: a tensor or a container of tensors (`torch.load(f)` and what is taken from it), or a
  name the same function calls a method on that only tensors have (``used_as_tensor``).
- ``POSSIBLE``: nothing says what it is, in a file that uses torch. Never a safe fix; dropped at the
  end of a run when a class of the checked project defines the method (torchup.analysis.project).
  Not reported for a method name that other libraries' objects commonly have (``ambiguous_methods``
  in torchup/data/torch_api.json: CVXPY's, SciPy's and SymPy's `solve`): there the receiver must be
  at least likely a tensor. Measured on the labelled corpus (bench/corpus): `x.symeig()` and
  `x.eig()` on receivers of unknown type are torch's in real code; `problem.solve()` is not.
- no finding: evidently not a tensor: a literal, a numpy/scipy/sympy/cupy/jax/tensorflow/gpytorch
  object, an instance of a class of the file that defines the method itself, or a name that
  nothing in the file binds (`tf.cholesky(A)` in a file that never imports `tf`).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterator

from torchup.analysis.context import Context
from torchup.analysis.flow import reaching_assignment
from torchup.analysis.inference import (
    Evidence,
    bound_nowhere,
    class_evidence,
    class_of_self,
    local_class,
    tensor_evidence,
)
from torchup.analysis.resolver import Binding
from torchup.core.diagnostics import Confidence
from torchup.core.facts import FACTS
from torchup.core.memo import last_answer

_CONFIDENCE = {Evidence.TENSOR: Confidence.CERTAIN, Evidence.LIKELY: Confidence.LIKELY,
               Evidence.UNKNOWN: Confidence.POSSIBLE}


_AMBIGUOUS = frozenset(FACTS["ambiguous_methods"])
_IDENTIFYING = frozenset(FACTS["tensor_identifying_methods"])


def receiver_confidence(ctx: Context, call: ast.Call) -> Confidence | None:
    """How sure a finding on ``recv.method(...)`` is that ``recv`` is a tensor; None: no finding."""
    assert isinstance(call.func, ast.Attribute)
    confidence = _CONFIDENCE.get(receiver_evidence(ctx, call))
    if confidence is Confidence.POSSIBLE and call.func.attr in _AMBIGUOUS:
        return None
    return confidence


def receiver_evidence(ctx: Context, call: ast.Call) -> Evidence:
    """The evidence that ``recv`` in ``recv.method(...)`` is a tensor whose method is torch's."""
    assert isinstance(call.func, ast.Attribute)
    receiver = call.func.value
    if bound_nowhere(ctx, receiver):
        return Evidence.NOT_TENSOR  # `tf.cholesky(A)` in a file that never binds `tf`
    if isinstance(receiver, ast.Name):
        cls = class_of_self(ctx, receiver)
        if cls is not None:
            return class_evidence(ctx, cls, call.func.attr)
    if isinstance(receiver, ast.Call):
        local = local_class(ctx, receiver.func)
        if local is not None:
            return class_evidence(ctx, local, call.func.attr)
    evidence = tensor_evidence(ctx, receiver)
    if evidence is Evidence.UNKNOWN and isinstance(receiver, ast.Name) and used_as_tensor(ctx, receiver):
        return Evidence.LIKELY
    return evidence


def used_as_tensor(ctx: Context, name: ast.Name) -> bool:
    """Does the function that reads ``name`` call a method only tensors have on the same value
    (`evaluated.register_hook(f)`, then `evaluated.symeig()`): the same binding reaches both. Only
    likely: the call that proves it may stand on another path than the finding's."""
    found = ctx.resolver.lookup_name(name)
    if not found.bindings:
        return False
    value = _the_binding(ctx, name, found.bindings)
    if value is None:
        return False
    scope = ctx.resolver.scope_of(name)
    return any(ctx.resolver.scope_of(other) is scope and _the_binding(ctx, other, found.bindings) is value
               for other in _identifying_receivers(scope.node).get(name.id, ()))


@last_answer  # (one walk per function: a script's module-level findings would each walk the module)
def _identifying_receivers(root: ast.AST) -> dict[str, list[ast.Name]]:
    """The names under ``root`` that a method only tensors have is called on, by name."""
    found: dict[str, list[ast.Name]] = {}
    for node in ast.walk(root):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _IDENTIFYING \
                and isinstance(node.func.value, ast.Name):
            found.setdefault(node.func.value.id, []).append(node.func.value)
    return found


def _the_binding(ctx: Context, name: ast.Name, bindings: tuple[Binding, ...]) -> Binding | None:
    """The one binding whose value ``name`` reads: its only one, or the assignment every path passes last."""
    if len(bindings) == 1:
        return bindings[0]
    return reaching_assignment(ctx, name, bindings)


def receiver_kind(confidence: Confidence) -> str:
    """What a message adds about the receiver: nothing when it is surely a tensor."""
    return "" if confidence is Confidence.CERTAIN else " (if the receiver is a tensor)"


# What the evidence reads beyond the lines of a rule's words: the values a class assigns to the
# `self.w` a method is called on (and the buffers it registers), and the `return`s of the file's
# own functions called there (`make().cholesky()`, `m = make()` then `m.cholesky()`). A file a
# method rule runs on keeps the bodies that hold them in its parse (torchup/prefilter/skeleton.py),
# so the evidence, and the confidence, are the same with and without the pre-filter. (A function
# reached through more steps is read with the pre-filter only if other words keep its body.)
_CALLED = re.compile(r"\b([A-Za-z_]\w*)\s*\(")


def receiver_focus_lines(text: str, methods: frozenset[str]) -> set[int]:
    """The 1-based lines of ``text`` that the evidence about receivers of ``methods`` may read.
    (Each pattern runs once over the whole text, its blanks never a line break, rather than once
    per line: a Python loop over every line of every file a method rule runs on.)"""
    if not methods:
        return set()
    alternatives = "|".join(sorted(methods))
    on_receiver = re.compile(rf"(?:\b(\w+)\s*\.\s*)?\b(\w+)\s*\.\s*(?:{alternatives})\s*\(")
    attributes: set[str] = set()
    receivers: set[str] = set()
    called: set[str] = set()
    for line in _lines_matching(text, re.compile(rf"\.{_BLANKS}(?:{alternatives}){_BLANKS}\(")):
        for match in on_receiver.finditer(line):
            (attributes if match.group(1) else receivers).add(match.group(2))
        called.update(_CALLED.findall(line))
    if receivers:
        assigned = re.compile(rf"(?:{'|'.join(sorted(receivers))}){_BLANKS}(?::[^=\n]*)?=(?!=)")  # (no `\b`: slow)
        for line in _lines_matching(text, assigned, _first_on_its_line):
            called.update(_CALLED.findall(line))
    # (Each pattern alone, and each starting with a literal where it can: the regex engine then
    # finds the literal by a fast search instead of trying the pattern at every position.)
    lines: set[int] = set()
    if called:  # `def f(` first on its line (`async` before it)
        definition = re.compile(rf"def[^\S\n]+(?:{'|'.join(sorted(called))})\b")
        lines |= _line_numbers(text, definition, lambda before: before.strip() in ("", "async"))
    if attributes:
        names = "|".join(sorted(attributes))
        lines |= _line_numbers(text, re.compile(rf"\.(?<=\w\.)(?:{names}){_BLANKS}(?::[^=\n]*)?=(?!=)"))  # `self.w =`
        lines |= _line_numbers(text, re.compile(rf"register_buffer{_BLANKS}\({_BLANKS}['\"](?:{names})['\"]"))
    return lines


_BLANKS = r"[^\S\n]*"  # (``\s*`` within one line)


def _first_on_its_line(before: str) -> bool:
    return not before.strip()


def _lines_matching(text: str, pattern: re.Pattern[str], before: Callable[[str], bool] | None = None) -> Iterator[str]:
    """Each line of ``text`` that ``pattern`` (which never crosses a line break) finds, once
    (after what ``before`` accepts of the line, when given)."""
    last = -1
    for match in pattern.finditer(text):
        start = text.rfind("\n", 0, match.start()) + 1
        if start == last or (before is not None and not before(text[start:match.start()])):
            continue
        last = start
        end = text.find("\n", match.start())
        yield text[start:end if end >= 0 else len(text)]


def _line_numbers(text: str, pattern: re.Pattern[str], before: Callable[[str], bool] | None = None) -> set[int]:
    """The 1-based numbers of the lines where ``pattern`` finds something (after what ``before``
    accepts of its line, when given)."""
    numbers: set[int] = set()
    line, counted = 1, 0
    for match in pattern.finditer(text):
        if before is not None and not before(text[text.rfind("\n", 0, match.start()) + 1:match.start()]):
            continue
        line += text.count("\n", counted, match.start())
        counted = match.start()
        numbers.add(line)
    return numbers
